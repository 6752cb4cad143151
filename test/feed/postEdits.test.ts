import { describe, expect, it } from 'vitest';
import { jpeg } from '../support/images.js';
import { twoInstancesWithAFollowChain } from '../support/twoInstances.js';
import { mediaFields, uploaded } from '../support/uploads.js';

/** Strategies whose copies live longest in a process: the cache's timelines, fanout on read's outboxes. */
describe.each(['cache', 'fanout-on-read', 'time-buckets'])('a new alt text on two instances: %s', (strategy) => {
  const instances = twoInstancesWithAFollowChain(strategy);

  it('reaches every copy the other instance holds within a second: timelines, reposts, the post', async () => {
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
    const sent = performance.now();
    let seen: string[] = [];
    while (performance.now() - sent < 1000) {
      seen = await read();
      if (seen.every((alt) => alt === 'after')) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(seen).toEqual(['after', 'after', 'after', 'after', 'after']);
  });
});
