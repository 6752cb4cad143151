import type { CommandStartedEvent } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fullTimelinePage } from '../../bench/pages.js';
import { heardEverything } from '../support/announcements.js';
import { requestCommands, startTestApp, type TestApp } from '../support/testApp.js';

/**
 * The page people load asks for each post's counts and the viewer's likes, reposts and bookmarks:
 * each kind held in process (Weibo's counter and existence caches), read for a page in one query
 * at most, and exact on the next page after a change made on any instance.
 */
describe.each(['cache', 'fanout-on-read'])('counts and viewer states held in every instance: %s', (strategy) => {
  let first: TestApp;
  let second: TestApp;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    first = await startTestApp({ FEED_STRATEGY: strategy });
    second = await startTestApp({ FEED_STRATEGY: strategy, MONGODB_URI: first.mongodbUri });
    for (const handle of ['he_reader', 'he_author', 'he_other']) tokens[handle] = await first.signUp(handle);
    await first.gql('mutation { follow(handle: "he_author") { handle } }', {}, tokens.he_reader);
    for (let i = 0; i < 5; i++) await first.gql(`mutation { createPost(text: "post ${i}") { id } }`, {}, tokens.he_author);
    await first.settled();
  }, 60_000);
  afterAll(async () => {
    await second?.stop();
    await first?.stop();
  });

  /** Queries per kind of what the page asks beside its posts: counts, likes, reposts, bookmarks. */
  const kinds = (commands: readonly CommandStartedEvent[]) => {
    const finds = requestCommands(commands).filter((command) => command.commandName === 'find');
    return {
      counts: finds.filter((command) => command.command.find === 'content' && command.command.projection?.n === 1).length,
      likes: finds.filter((command) => command.command.find === 'likes').length,
      reposts: finds.filter((command) => command.command.find === 'reposts').length,
      bookmarks: finds.filter((command) => command.command.find === 'bookmarks').length,
      pins: finds.filter((command) => command.command.find === 'pins').length,
    };
  };

  /** The reader's first page on `app`: what each post shows, and the queries per kind it took. */
  const page = async (app: TestApp) => {
    let answer: any;
    const commands = await app.commandsDuring(async () => {
      answer = await app.gql(fullTimelinePage, { first: 5 }, tokens.he_reader);
    });
    expect(answer.errors).toBeUndefined();
    const posts = answer.data.timeline.edges.map(({ node }: any) => ({
      text: node.text,
      likes: node.likeCount,
      reposts: node.repostCount,
      liked: node.viewerHasLiked,
      reposted: node.viewerHasReposted,
      bookmarked: node.viewerHasBookmarked,
      pinned: node.pinned,
    }));
    return { posts, ids: answer.data.timeline.edges.map(({ node }: any) => node.id as string), queries: kinds(commands) };
  };

  /**
   * The page on `app` once it has heard everything announced (by either instance): another
   * instance hears of a change a moment later, and a busy machine only makes that moment longer.
   */
  const onceHeard = async (app: TestApp) => {
    for (const publisher of [first, second]) await heardEverything(publisher, app);
    return page(app);
  };

  const none = { counts: 0, likes: 0, reposts: 0, bookmarks: 0, pins: 0 };

  it('reads each kind at most once for a cold page and nothing for a warm one, on every instance', async () => {
    for (const app of [first, second]) {
      const cold = await page(app);
      for (const count of Object.values(cold.queries)) expect(count).toBeLessThanOrEqual(1);
      // Announcements of the writes made before may still make it forget what it read: once heard, one page reads again what they changed, the next nothing.
      await onceHeard(app);
      expect((await page(app)).queries).toEqual(none);
    }
  });

  it('shows a like, a repost and a bookmark exact on the next page of either instance, reading only what changed', async () => {
    const { ids } = await page(first);
    const target = ids[0]!;
    await page(second);

    const liked = await first.gql(`mutation { likePost(id: "${target}") { likeCount viewerHasLiked } }`, {}, tokens.he_reader);
    expect(liked.data.likePost).toEqual({ likeCount: 1, viewerHasLiked: true });
    // The liker's next page on the instance that took the like: its counts in place, its state read once.
    const here = await page(first);
    expect(here.posts[0]).toMatchObject({ likes: 1, liked: true });
    expect(here.queries).toMatchObject({ counts: 0, likes: 1, reposts: 0, bookmarks: 0 });
    const there = await onceHeard(second);
    expect(there.posts[0]).toMatchObject({ likes: 1, liked: true });
    expect(there.queries.counts).toBe(0);

    await second.gql(`mutation { repost(id: "${target}") { repostCount } }`, {}, tokens.he_other);
    await second.gql(`mutation { bookmark(id: "${target}") { id } }`, {}, tokens.he_reader);
    // Someone else's repost changes the count only: the reader's own states stay held.
    const afterAll = await onceHeard(first);
    expect(afterAll.posts[0]).toMatchObject({ likes: 1, reposts: 1, liked: true, reposted: false, bookmarked: true });
    expect(afterAll.queries.counts).toBe(0);

    await second.gql(`mutation { unlikePost(id: "${target}") { likeCount } }`, {}, tokens.he_reader);
    const unliked = await onceHeard(first);
    expect(unliked.posts[0]).toMatchObject({ likes: 0, liked: false });
    expect(unliked.queries.counts).toBe(0);
    // Once each instance heard of every change, and read again what it forgot, pages read nothing.
    for (const app of [first, second]) {
      await onceHeard(app);
      expect((await page(app)).queries).toEqual(none);
    }
  });

  it("shows a pin made through the other instance on the next page, reading the author's pins once", async () => {
    const { ids } = await page(first);
    const target = ids[1]!;
    const pinned = await second.gql(`mutation { pinPost(id: "${target}") { handle } }`, {}, tokens.he_author);
    expect(pinned.errors).toBeUndefined();
    const shown = await onceHeard(first);
    expect(shown.posts.map((post: { pinned: boolean }) => post.pinned)).toEqual(ids.map((id: string) => id === target));
    expect(shown.queries.pins).toBeLessThanOrEqual(1);
    expect((await page(first)).queries).toEqual(none);
    await first.gql(`mutation { unpinPost(id: "${target}") { handle } }`, {}, tokens.he_author);
    const unpinned = await onceHeard(second);
    expect(unpinned.posts.every((post: { pinned: boolean }) => !post.pinned)).toBe(true);
  });
});
