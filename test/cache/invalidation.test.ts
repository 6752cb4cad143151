import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TimelineCache } from '../../src/feed/strategies/timelineCache.js';
import { heardEverything } from '../support/announcements.js';
import { startTestApp, type TestApp } from '../support/testApp.js';

/**
 * Two instances on one database, each holding users, follow lists, readers' filters, posts and
 * authors' newest posts (outboxes) in process.
 * A change made through one shows through the other as soon as the other hears of it: the change
 * stream the live path runs carries the invalidation. Each check waits for that announcement (not
 * for a time) and then reads once, long before anything held would run out by itself.
 */
/** The data of a query that must not fail. */
async function dataOf(app: TestApp, token: string | undefined, query: string) {
  const result = await app.gql(query, {}, token);
  if (result.errors) throw new Error(JSON.stringify(result.errors));
  return result.data;
}

/** Once `reader` has heard everything `writer` announced, `read` (on `reader`) returns `expected`. */
async function shownOnceHeard<T>(writer: TestApp, reader: TestApp, read: () => Promise<T>, expected: T): Promise<void> {
  await heardEverything(writer, reader);
  expect(await read()).toEqual(expected);
}

describe('the in-process tier across two instances', () => {
  let first: TestApp;
  let second: TestApp;
  const tokens: Record<string, string> = {};
  const ok = (app: TestApp, handle: string, query: string) => dataOf(app, tokens[handle], query);

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
    await shownOnceHeard(first, second, async () => (await ok(second, 'fan', '{ user(handle: "star") { followerCount } }')).user.followerCount, 1);
    await shownOnceHeard(first, second, async () => (await ok(second, 'fan', '{ timeline { edges { node { text } } } }')).timeline.edges.length, 1);

    await ok(first, 'fan', 'mutation { unfollow(handle: "star") { handle } }');
    await shownOnceHeard(first, second, async () => (await ok(second, 'fan', '{ user(handle: "star") { followerCount } timeline { edges { cursor } } }')), {
      user: { followerCount: 0 },
      timeline: { edges: [] },
    });
  });

  it('applies a mute made on one instance to pages served by the other', async () => {
    await ok(first, 'fan', 'mutation { follow(handle: "star") { handle } }');
    await shownOnceHeard(first, second, async () => (await ok(second, 'fan', '{ timeline { edges { cursor } } }')).timeline.edges.length, 1);
    await ok(first, 'fan', 'mutation { mute(handle: "star") { handle } }');
    await shownOnceHeard(first, second, async () => (await ok(second, 'fan', '{ timeline { edges { cursor } } user(handle: "star") { viewerHasMuted } }')), {
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
    await shownOnceHeard(first, second, async () => (await ok(second, 'fan', read)).post, null);
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
    await shownOnceHeard(first, second, texts, [['first words'], ['first words']]);
    // The second instance merges these pages from the outboxes it holds, without reading `content`.
    const hits = second.services.content.outboxStats().hits;
    await texts();
    expect(second.services.content.outboxStats().hits).toBeGreaterThan(hits);

    const { createPost } = await ok(first, 'writer', 'mutation { createPost(text: "second words") { id } }');
    await shownOnceHeard(first, second, texts, [['second words', 'first words'], ['second words', 'first words']]);
    await ok(first, 'writer', `mutation { deletePost(id: "${createPost.id}") }`);
    await shownOnceHeard(first, second, texts, [['first words'], ['first words']]);
  });

  it('stops a deleted account’s token on the other instance too', async () => {
    expect((await ok(second, 'other', '{ viewer { handle } }')).viewer.handle).toBe('other');
    await ok(first, 'other', 'mutation { deleteAccount(password: "correct horse battery") }');
    await shownOnceHeard(first, second, async () => (await second.gql('{ timeline { edges { cursor } } }', {}, tokens.other)).errors?.[0]?.extensions?.code, 'UNAUTHENTICATED');
    expect((await ok(second, 'fan', '{ user(handle: "other") { handle } }')).user).toBeNull();
  });
});

/**
 * The cache strategy's timelines held across two instances. The second runs no fanout worker, so
 * every delivery is written by the first and reaches the second's copies only through the change
 * stream, as with a separate worker process or another server.
 */
describe('timeline caches held across two instances', () => {
  let first: TestApp;
  let second: TestApp;
  const tokens: Record<string, string> = {};
  const ok = (app: TestApp, handle: string, query: string) => dataOf(app, tokens[handle], query);
  const texts = async () =>
    // Shorter than the cache: the page is the cache's alone, with nothing read below it.
    (await ok(second, 'reader', '{ timeline(first: 1) { edges { node { text } } } }')).timeline.edges.map((edge: any) => edge.node.text);
  const heldHits = () => second.services.feed.backend instanceof TimelineCache ? second.services.feed.backend.cacheStats().hits : 0;

  /** The second instance serves the page from its copy, then shows `expected` once it hears of the change. */
  async function changesOnceHeard(change: () => Promise<unknown>, expected: string[]): Promise<void> {
    const before = await texts();
    const hits = heldHits();
    expect(await texts()).toEqual(before);
    expect(heldHits()).toBeGreaterThan(hits); // served from the copy: only an invalidation can change it
    await change();
    await shownOnceHeard(first, second, texts, expected);
  }

  beforeAll(async () => {
    first = await startTestApp({ FEED_STRATEGY: 'cache' });
    second = await startTestApp({ MONGODB_URI: first.mongodbUri, FEED_STRATEGY: 'cache', FANOUT_WORKERS: '0' });
    for (const handle of ['reader', 'writer', 'later']) tokens[handle] = await first.signUp(handle);
    // More than a page and the entry that proves the next: a page needs nothing below the cache.
    for (const text of ['minus one', 'zero', 'one']) await ok(first, 'writer', `mutation { createPost(text: "${text}") { id } }`);
    await ok(first, 'reader', 'mutation { follow(handle: "writer") { handle } }');
    await first.settled();
    expect(await texts()).toEqual(['one']); // the second instance builds the cache and holds it
  });
  afterAll(async () => {
    await second?.stop();
    await first?.stop();
  });

  it('shows a post delivered by the other instance’s fanout', async () => {
    await changesOnceHeard(() => ok(first, 'writer', 'mutation { createPost(text: "two") { id } }'), ['two']);
  });

  it('drops a post the other instance took out of the cache', async () => {
    const { createPost } = await ok(first, 'writer', 'mutation { createPost(text: "short-lived") { id } }');
    await first.settled();
    await shownOnceHeard(first, second, async () => (await texts())[0], 'short-lived');
    await changesOnceHeard(() => ok(first, 'writer', `mutation { deletePost(id: "${createPost.id}") }`), ['two']);
  });

  it('shows the author their own post on the other instance once it has heard of it, from a held cache and outbox', async () => {
    const own = async () => (await ok(second, 'writer', '{ timeline(first: 1) { edges { node { text } } } }')).timeline.edges.map((edge: any) => edge.node.text);
    // The second instance holds the writer's cache and outbox: a page is served without a read.
    await own();
    const before = await second.commandsDuring(own);
    expect(before.filter((command) => command.commandName !== 'getMore')).toEqual([]);
    await ok(first, 'writer', 'mutation { createPost(text: "my own words") { id } }');
    await shownOnceHeard(first, second, own, ['my own words']);
    await ok(first, 'writer', '{ timeline { edges { cursor } } }'); // the writer has a cache on the first instance too
    const { createPost } = await ok(first, 'writer', 'mutation { createPost(text: "soon taken back") { id } }');
    await shownOnceHeard(first, second, own, ['soon taken back']);
    expect((await ok(first, 'writer', '{ timeline(first: 1) { edges { node { text } } } }')).timeline.edges[0].node.text).toBe('soon taken back');
    await ok(first, 'writer', `mutation { deletePost(id: "${createPost.id}") }`);
    await shownOnceHeard(first, second, own, ['my own words']);
  });

  it('shows the posts a follow on the other instance brought into the cache', async () => {
    await ok(first, 'later', 'mutation { createPost(text: "from later") { id } }');
    await changesOnceHeard(() => ok(first, 'reader', 'mutation { follow(handle: "later") { handle } }'), ['from later']);
  });
});
