import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestCommandNames, startTestApp, type TestApp } from '../support/testApp.js';

const held = ['users', 'following', 'reader_filters'];

/**
 * The cache strategy for a reader whose whole timeline is shorter than a page: once a read has
 * found nothing below the cache, later pages are one round trip, and what changes the timeline
 * below the cache (a follow, a capped push that trims, deletions that shrink it) is still read.
 */
describe('the cache strategy with a timeline shorter than a page', () => {
  let app: TestApp;
  let reader: string;
  let early: string;
  let writer: string;

  const texts = async () => {
    const page = await app.gql('{ timeline(first: 10) { edges { node { text } } pageInfo { hasNextPage } } }', {}, reader);
    expect(page.data.timeline.pageInfo.hasNextPage).toBe(false);
    return page.data.timeline.edges.map((edge: any) => edge.node.text);
  };
  const post = async (token: string, text: string) => {
    const created = await app.gql(`mutation { createPost(text: "${text}") { id } }`, {}, token);
    await app.settled();
    return created.data.createPost.id as string;
  };

  beforeAll(async () => {
    app = await startTestApp({ FEED_STRATEGY: 'cache', TIMELINE_CACHE_SIZE: '4' });
    reader = await app.signUp('reader');
    early = await app.signUp('early');
    writer = await app.signUp('writer');
    await post(early, 'early 1');
    await post(early, 'early 2');
    for (const text of ['w1', 'w2', 'w3']) await post(writer, text);
    await app.gql('mutation { follow(handle: "writer") { handle } }', {}, reader);
  });
  afterAll(() => app?.stop());

  it('reads a page in one round trip, the cache alone, and a warm page in none', async () => {
    expect(await texts()).toEqual(['w3', 'w2', 'w1']); // builds the cache
    expect(await texts()).toEqual(['w3', 'w2', 'w1']);
    const page = '{ timeline(first: 10) { edges { node { text author { handle } } } } }';
    // This process holds the cache it read: nothing below it is looked for again either.
    expect(requestCommandNames(await app.warmCommandsDuring(() => app.gql(page, {}, reader), held))).toEqual([]);
    // As another instance reads it, whose copy a change made it forget.
    const cold = await app.warmCommandsDuring(async () => {
      app.services.feed.backend.forgetHeld(['reader']);
      await app.gql(page, {}, reader);
    }, held);
    expect(requestCommandNames(cold)).toEqual(['find timeline_cache']);
  });

  it('shows the older posts of an account followed later', async () => {
    await app.gql('mutation { follow(handle: "early") { handle } }', {}, reader);
    expect(await texts()).toEqual(['w3', 'w2', 'w1', 'early 2', 'early 1']);
    await app.gql('mutation { unfollow(handle: "early") { handle } }', {}, reader);
    expect(await texts()).toEqual(['w3', 'w2', 'w1']);
  });

  it('shows posts a full cache dropped once deletions have shrunk it', async () => {
    const newer = [];
    for (const text of ['w4', 'w5', 'w6']) newer.push(await post(writer, text));
    // The cache holds 4: w6..w3; w2 and w1 were trimmed from it and are read below it.
    expect(await texts()).toEqual(['w6', 'w5', 'w4', 'w3', 'w2', 'w1']);
    for (const id of newer) await app.gql(`mutation { deletePost(id: "${id}") }`, {}, writer);
    await app.settled();
    expect(await texts()).toEqual(['w3', 'w2', 'w1']);
    expect(await texts()).toEqual(['w3', 'w2', 'w1']);
  });
});

describe('the cache strategy under interleaved posts, deletions, follows and reads', () => {
  let app: TestApp;
  afterAll(() => app?.stop());

  it('pages every remaining post once the writes settle, whatever the order', async () => {
    app = await startTestApp({ FEED_STRATEGY: 'cache', TIMELINE_CACHE_SIZE: '4' });
    const reader = await app.signUp('racer');
    const writers = await Promise.all(['raa', 'rbb', 'rcc'].map((handle) => app.signUp(handle)));
    await app.gql('mutation { follow(handle: "raa") { handle } }', {}, reader);
    // Pages longer than the cache, and a timeline kept short by deletions: every read looks below
    // the cache or trusts what an earlier one recorded there, while posts trim it and deletions shrink it.
    const read = () => app.gql('{ timeline(first: 10) { edges { node { text } } } }', {}, reader);
    const live: { id: string; text: string; owner: string }[] = [];
    for (let round = 0; round < 16; round++) {
      const actions: Promise<unknown>[] = [read(), read()];
      for (const [i, token] of writers.entries()) {
        const text = `r${round}-${i}`;
        actions.push(
          app.gql(`mutation { createPost(text: "${text}") { id } }`, {}, token).then((r) => live.push({ id: r.data.createPost.id, text, owner: token })),
        );
      }
      // The oldest and the newest stored so far go, two a round, once there are some.
      for (const victim of live.length > 4 ? [live.shift()!, live.pop()!] : []) {
        actions.push(app.gql(`mutation { deletePost(id: "${victim.id}") }`, {}, victim.owner));
      }
      if (round === 5) actions.push(app.gql('mutation { follow(handle: "rbb") { handle } }', {}, reader));
      if (round === 10) actions.push(app.gql('mutation { unfollow(handle: "raa") { handle } }', {}, reader));
      actions.push(read());
      await Promise.all(actions);
      await read();
    }
    await app.settled();
    const followed = (text: string) => text.split('-')[1] === '1'; // rbb's, the one followed at the end
    const expected = live.map((post) => post.text).filter(followed);
    // Every page of it, newest first, twice: the second read may trust what the first recorded.
    for (let pass = 0; pass < 2; pass++) {
      const seen: string[] = [];
      let after: string | null = null;
      for (;;) {
        const page: any = await app.gql('query($after: String) { timeline(first: 10, after: $after) { edges { cursor node { text } } pageInfo { hasNextPage } } }', { after }, reader);
        seen.push(...page.data.timeline.edges.map((edge: any) => edge.node.text));
        if (!page.data.timeline.pageInfo.hasNextPage) break;
        after = page.data.timeline.edges.at(-1).cursor;
      }
      expect(seen.sort()).toEqual(expected.sort());
    }
  });
});
