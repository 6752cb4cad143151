import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { heardEverything } from '../support/announcements.js';
import { startTestApp, type TestApp } from '../support/testApp.js';
import { createPost, follow, liveClient, subscribePostAdded, subscribePostRemoved, subscriptionsOpen } from './liveClient.js';

/**
 * Live events of limited posts reach exactly their audience: a followers-only post the author's
 * followers as they are now, a mentioned-only post its audience whether or not they follow the
 * author, and nobody else. Events arrive in order, so a public marker posted after a hidden
 * event proves that event was not sent. Events travel through the change stream, as between
 * instances.
 */
describe('live events of followers-only and mentioned-only posts', () => {
  let app: TestApp;
  const clients: Client[] = [];
  const tokens: Record<string, string> = {};
  const post = async (handle: string, text: string, visibility: string) => {
    const result = await app.gql(`mutation { createPost(text: "${text}", visibility: ${visibility}) { id } }`, {}, tokens[handle]);
    if (!result.data) throw new Error(JSON.stringify(result.errors));
    return result.data.createPost.id as string;
  };

  beforeAll(async () => {
    app = await startTestApp();
    for (const handle of ['ann', 'fol', 'men', 'out']) tokens[handle] = await app.signUp(handle);
    await follow(app, tokens.fol!, 'ann');
    await follow(app, tokens.out!, 'fol'); // out hears of fol's posts only: the marker below
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.dispose()));
    await app?.stop();
  });

  it('sends each post to its audience only, and its removal likewise', async () => {
    const subscribe = (handle: string) => {
      const client = liveClient(app, tokens[handle]!);
      clients.push(client);
      return { added: subscribePostAdded(client), removed: subscribePostRemoved(client) };
    };
    const fol = subscribe('fol');
    const men = subscribe('men');
    const out = subscribe('out');
    await subscriptionsOpen(app, 6);
    const texts = (subscription: ReturnType<typeof subscribe>) => subscription.added.results.map((edge) => edge.node.text);

    const followersOnly = await post('ann', 'ann for followers', 'FOLLOWERS');
    const mentioned = await post('ann', 'ann to @men', 'MENTIONED');
    await createPost(app, tokens.fol!, 'marker 1'); // men does not follow fol: nothing for men
    await fol.added.waitFor(2);
    await out.added.waitFor(1);
    await men.added.waitFor(1);
    expect(texts(fol)).toEqual(['ann for followers', 'marker 1']);
    expect(texts(men)).toEqual(['ann to @men']);
    expect(texts(out)).toEqual(['marker 1']);

    // An unfollow takes the followers-only audience away at once; the mentioned audience stays.
    await follow(app, tokens.fol!, 'ann', true);
    await post('ann', 'ann for followers again', 'FOLLOWERS');
    await post('ann', 'ann to @men again', 'MENTIONED');
    await createPost(app, tokens.fol!, 'marker 2');
    await fol.added.waitFor(3);
    await men.added.waitFor(2);
    expect(texts(fol)).toEqual(['ann for followers', 'marker 1', 'marker 2']);
    expect(texts(men)).toEqual(['ann to @men', 'ann to @men again']);

    // Following again: the removal of the followers-only post is news to fol, the mentioned one's is not.
    await follow(app, tokens.fol!, 'ann');
    for (const id of [followersOnly, mentioned]) {
      const result = await app.gql(`mutation { deletePost(id: "${id}") }`, {}, tokens.ann);
      expect(result.data).toEqual({ deletePost: true });
    }
    const marker = await createPost(app, tokens.fol!, 'marker 3');
    await app.gql(`mutation { deletePost(id: "${marker.id}") }`, {}, tokens.fol);
    await fol.removed.waitFor(2);
    await men.removed.waitFor(1);
    await out.removed.waitFor(1);
    expect(fol.removed.results).toEqual([followersOnly, marker.id]);
    expect(men.removed.results).toEqual([mentioned]);
    expect(out.removed.results).toEqual([marker.id]);
  });
});

/**
 * A reader's inbox is asked for only where marks on users say there can be something in it; an
 * instance that holds the reader's user learns of a new mark through the change bus, so a
 * mentioned-only post posted through one instance shows in a page read through the other.
 */
describe('limited posts across two instances', () => {
  let a: TestApp;
  let b: TestApp;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    a = await startTestApp();
    b = await startTestApp({ MONGODB_URI: a.mongodbUri });
    for (const handle of ['ada', 'bea', 'cyd']) tokens[handle] = await a.signUp(handle);
    await follow(a, tokens.cyd!, 'ada');
  });
  afterAll(async () => {
    await b?.stop();
    await a?.stop();
  });

  it('shows a post posted through one instance to its audience reading through the other', async () => {
    const page = async (handle: string) => {
      const result = await b.gql('{ timeline(first: 10) { edges { node { text } } } }', {}, tokens[handle]);
      return result.data.timeline.edges.map((edge: any) => edge.node.text) as string[];
    };
    // B holds both readers' users (and their marks) from these reads.
    expect(await page('bea')).toEqual([]);
    expect(await page('cyd')).toEqual([]);
    await a.gql('mutation { createPost(text: "for @bea", visibility: MENTIONED) { id } }', {}, tokens.ada);
    await a.gql('mutation { createPost(text: "for followers", visibility: FOLLOWERS) { id } }', {}, tokens.ada);
    // B learns of ada's new marks from their announcements; once it has heard them, both pages show the posts.
    await heardEverything(a, b);
    expect([await page('bea'), await page('cyd')]).toEqual([['for @bea'], ['for followers']]);
  });
});
