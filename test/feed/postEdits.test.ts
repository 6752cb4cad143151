import { describe, expect, it } from 'vitest';
import { jpeg } from '../support/images.js';
import { heardEverything } from '../support/announcements.js';
import { twoInstancesWithAFollowChain } from '../support/twoInstances.js';
import { mediaFields, uploaded } from '../support/uploads.js';

/** Strategies whose copies live longest in a process: the cache's timelines, fanout on read's outboxes. */
describe.each(['cache', 'fanout-on-read', 'time-buckets'])('a new alt text on two instances: %s', (strategy) => {
  const instances = twoInstancesWithAFollowChain(strategy);

  it('reaches every copy the other instance holds once it has heard the change, long before a held copy expires: timelines, reposts, the post', async () => {
    const { a, b, tokens } = instances;
    const id = await uploaded(a, tokens.ada!, await jpeg(), 'before');
    const post = (await a.gql('mutation($media: [ID!]) { createPost(text: "edited later", media: $media) { id } }', { media: [id] }, tokens.ada)).data.createPost.id;
    await a.settled();
    await b.gql('mutation($id: ID!) { repost(id: $id) { id } }', { id: post }, tokens.bea);
    await a.settled();
    const read = async () => {
      const pages = await Promise.all(
        ['ada', 'bea', 'cal'].map((handle) => b.gql(`{ timeline { edges { node { id ${mediaFields} } } } }`, {}, tokens[handle])),
      );
      const single = await b.gql(`query($id: ID!) { post(id: $id) { ${mediaFields} } user(handle: "ada") { posts { edges { node { id ${mediaFields} } } } } }`, { id: post }, tokens.cal);
      const alts = pages.flatMap((page) => page.data.timeline.edges.filter((edge: any) => edge.node.id === post).map((edge: any) => edge.node.media[0].alt));
      const authored = single.data.user.posts.edges.filter((edge: any) => edge.node.id === post).map((edge: any) => edge.node.media[0].alt);
      return [...alts, single.data.post.media[0].alt, ...authored];
    };
    // Instance B holds every copy now.
    expect(await read()).toEqual(['before', 'before', 'before', 'before', 'before']);
    expect(await read()).toEqual(['before', 'before', 'before', 'before', 'before']);

    const changed = await a.gql('mutation($id: ID!) { updateMedia(id: $id, alt: "after") { alt } }', { id }, tokens.ada);
    expect(changed.data.updateMedia.alt).toBe('after');
    // Ordered, not timed (a one-second deadline broke on loaded machines): once B has heard what A announced after
    // the change, one read finds every copy changed; without the announcement they would wait out their time limit (10 s or more).
    await heardEverything(a, b);
    expect(await read()).toEqual(['after', 'after', 'after', 'after', 'after']);
  });
});
