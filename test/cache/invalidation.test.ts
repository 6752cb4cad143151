import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/testApp.js';

/**
 * Two instances on one database, each holding users, follow lists, readers' filters, posts and
 * authors' newest posts (outboxes) in process.
 * A change made through one must show through the other within a second: the change stream the
 * live path runs carries the invalidation.
 */
describe('the in-process tier across two instances', () => {
  let first: TestApp;
  let second: TestApp;
  const tokens: Record<string, string> = {};

  const ok = async (app: TestApp, handle: string, query: string) => {
    const result = await app.gql(query, {}, tokens[handle]);
    if (result.errors) throw new Error(JSON.stringify(result.errors));
    return result.data;
  };
  /** Polls `read` on an instance until it returns `expected`; fails after a second. */
  async function withinASecond<T>(read: () => Promise<T>, expected: T): Promise<void> {
    const deadline = Date.now() + 1000;
    let last: T;
    do {
      last = await read();
      if (JSON.stringify(last) === JSON.stringify(expected)) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    } while (Date.now() < deadline);
    expect(last).toEqual(expected);
  }

  beforeAll(async () => {
    first = await startTestApp();
    second = await startTestApp({ MONGODB_URI: first.mongodbUri });
    for (const handle of ['star', 'fan', 'other']) tokens[handle] = await first.signUp(handle);
    await ok(first, 'star', 'mutation { createPost(text: "a star post") { id } }');
  });
  afterAll(async () => {
    await second?.stop();
    await first?.stop();
  });

  it('shows a follow made on one instance in counts, follow lists and timelines of the other', async () => {
    // The second instance holds star's record, fan's (empty) follow list and fan's filters.
    expect((await ok(second, 'fan', '{ user(handle: "star") { followerCount } timeline { edges { cursor } } }')).user.followerCount).toBe(0);
    await ok(first, 'fan', 'mutation { follow(handle: "star") { handle } }');
    await withinASecond(async () => (await ok(second, 'fan', '{ user(handle: "star") { followerCount } }')).user.followerCount, 1);
    await withinASecond(async () => (await ok(second, 'fan', '{ timeline { edges { node { text } } } }')).timeline.edges.length, 1);

    await ok(first, 'fan', 'mutation { unfollow(handle: "star") { handle } }');
    await withinASecond(async () => (await ok(second, 'fan', '{ user(handle: "star") { followerCount } timeline { edges { cursor } } }')), {
      user: { followerCount: 0 },
      timeline: { edges: [] },
    });
  });

  it('applies a mute made on one instance to pages served by the other', async () => {
    await ok(first, 'fan', 'mutation { follow(handle: "star") { handle } }');
    await withinASecond(async () => (await ok(second, 'fan', '{ timeline { edges { cursor } } }')).timeline.edges.length, 1);
    await ok(first, 'fan', 'mutation { mute(handle: "star") { handle } }');
    await withinASecond(async () => (await ok(second, 'fan', '{ timeline { edges { cursor } } user(handle: "star") { viewerHasMuted } }')), {
      timeline: { edges: [] },
      user: { viewerHasMuted: true },
    });
  });

  it('drops a post deleted on one instance from what the other holds', async () => {
    const { createPost } = await ok(first, 'star', 'mutation { createPost(text: "soon gone") { id } }');
    const read = `{ post(id: "${createPost.id}") { text } }`;
    // The second instance now holds the post (a linked timeline entry, post(id) and replyTo read through the same tier).
    expect((await ok(second, 'fan', read)).post).toEqual({ text: 'soon gone' });
    expect((await ok(second, 'fan', read)).post).toEqual({ text: 'soon gone' });
    expect(second.services.content.cacheStats().hits).toBeGreaterThan(0);
    await ok(first, 'star', `mutation { deletePost(id: "${createPost.id}") }`);
    await withinASecond(async () => (await ok(second, 'fan', read)).post, null);
  });

  it('shows a post made on one instance in the other’s fanout-on-read timelines and account pages, and drops it once deleted', async () => {
    for (const handle of ['writer', 'follower']) tokens[handle] = await first.signUp(handle);
    await ok(first, 'writer', 'mutation { createPost(text: "first words") { id } }');
    await ok(first, 'follower', 'mutation { follow(handle: "writer") { handle } }');
    const read = '{ timeline(first: 3) { edges { node { text } } } user(handle: "writer") { posts(first: 3) { edges { node { text } } } } }';
    const texts = async () => {
      const data = await ok(second, 'follower', read);
      return [data.timeline.edges.map((edge: any) => edge.node.text), data.user.posts.edges.map((edge: any) => edge.node.text)];
    };
    await withinASecond(texts, [['first words'], ['first words']]);
    // The second instance merges these pages from the outboxes it holds, without reading `content`.
    const hits = second.services.content.outboxStats().hits;
    await texts();
    expect(second.services.content.outboxStats().hits).toBeGreaterThan(hits);

    const { createPost } = await ok(first, 'writer', 'mutation { createPost(text: "second words") { id } }');
    await withinASecond(texts, [['second words', 'first words'], ['second words', 'first words']]);
    await ok(first, 'writer', `mutation { deletePost(id: "${createPost.id}") }`);
    await withinASecond(texts, [['first words'], ['first words']]);
  });

  it('stops a deleted account’s token on the other instance too', async () => {
    expect((await ok(second, 'other', '{ viewer { handle } }')).viewer.handle).toBe('other');
    await ok(first, 'other', 'mutation { deleteAccount(password: "correct horse battery") }');
    await withinASecond(async () => (await second.gql('{ timeline { edges { cursor } } }', {}, tokens.other)).errors?.[0]?.extensions?.code, 'UNAUTHENTICATED');
    expect((await ok(second, 'fan', '{ user(handle: "other") { handle } }')).user).toBeNull();
  });
});
