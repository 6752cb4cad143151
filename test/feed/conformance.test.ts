import { ObjectId } from 'mongodb';
import { apiPostId, internalId } from '../support/ids.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { feedStrategies, timelineContentModes } from '../../src/config.js';
import { runQueued } from '../support/queuedTasks.js';
import { startTestApp, type TestApp } from '../support/testApp.js';

/**
 * The same story through every strategy × content mode. Every page is checked against an oracle
 * computed straight from `content` and `following`, so all eight combinations must show a user
 * exactly the same timeline. Small buckets, cache and backfill make the story cross every edge.
 */
const smallSizes = {
  TIMELINE_BUCKET_SPAN: '0.02', // 20 ms: a new time bucket every few posts
  TIMELINE_BUCKET_SIZE: '4',
  TIMELINE_CACHE_SIZE: '6',
  TIMELINE_READ_BATCH: '2',
  FOLLOW_BACKFILL: '5',
  FANOUT_PULL_THRESHOLD: '3', // more than 3 followers: posts are pulled at read time
};

const combinations = feedStrategies.flatMap((strategy) => timelineContentModes.map((content) => ({ strategy, content })));
const timelineCollection: Record<string, string | null> = {
  'fanout-on-read': null,
  'time-buckets': 'timed_buckets',
  'sized-buckets': 'sized_buckets',
  cache: 'timeline_cache',
};

const pageQuery = `query($first: Int, $after: String, $last: Int, $before: String) {
  timeline(first: $first, after: $after, last: $last, before: $before) {
    edges { cursor repostedBy { handle } node { id text author { handle } } }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  } }`;

interface Page {
  edges: { cursor: string; repostedBy: { handle: string } | null; node: { id: string; text: string; author: { handle: string } } }[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
}

/**
 * What the timeline must be, straight from the stored documents: the viewer's and followees'
 * posts and reposts, newest first by (time, id), less what the viewer hides (muted or blocked
 * authors and reposted authors, single-word keyword filters), replies between people the viewer
 * does not both follow, and every occurrence of a reposted post but the first. Limited posts: a
 * followers-only post shows to whoever follows its author now (and the author); a mentioned-only
 * post only to its author and to the accounts in its stored audience, who see it whether or not
 * they follow the author (unless they hide the author). Each item is the shown post's id, and who
 * reposted it.
 */
async function oracle(app: TestApp, handle: string): Promise<{ id: string; repostedBy: string | null }[]> {
  const db = app.database.db;
  const follows = new Set([handle, ...(await db.collection('following').find({ _f: handle }).toArray()).map((edge) => edge._t)]);
  const filters = await db.collection<any>('reader_filters').findOne({ _id: handle });
  const hidden = new Set<string>([...(filters?.muted ?? []), ...(filters?.blocked ?? []), ...(filters?.blockedBy ?? [])]);
  const words = new Set<string>((filters?.keywords ?? []).map((keyword: { phrase: string }) => keyword.phrase.toLowerCase()));
  const filtered = (text: string) => text.toLowerCase().split(/[^a-z0-9_]+/).some((word) => words.has(word));
  const replyShows = (author: string, replyTo: { _a: string } | undefined) =>
    !replyTo || author === handle || replyTo._a === handle || (follows.has(replyTo._a) && !hidden.has(replyTo._a));
  const addressed = (doc: any) => doc._v === 'm' && (doc._to as string[]).includes(handle);
  const posts = (await db.collection<any>('content').find({ $or: [{ _a: { $in: [...follows] } }, { _to: handle }] }).toArray()).sort(
    (a, b) => b._d.getTime() - a._d.getTime() || b._id.toHexString().localeCompare(a._id.toHexString()),
  );
  const originalsStored = new Set(
    (await db.collection('content').find({ _id: { $in: posts.filter((doc) => doc._o).map((doc) => doc._o._id) } }).toArray()).map((doc) => doc._id.toHexString()),
  );
  const shown: { id: string; repostedBy: string | null }[] = [];
  for (const doc of [...posts].reverse()) {
    if (hidden.has(doc._a) || filtered(doc._m)) continue;
    if (doc._v === 'm' && doc._a !== handle && !addressed(doc)) continue;
    if (!doc._o) {
      if (addressed(doc) || replyShows(doc._a, doc._r)) shown.push({ id: apiPostId(doc._id), repostedBy: null });
      continue;
    }
    const original = doc._o;
    const seenBefore = shown.some((item) => item.id === apiPostId(original._id));
    const originalShows = follows.has(original._a) && replyShows(original._a, original._r);
    if (!hidden.has(original._a) && originalsStored.has(original._id.toHexString()) && !originalShows && !seenBefore) {
      shown.push({ id: apiPostId(original._id), repostedBy: doc._a });
    }
  }
  return shown.reverse();
}

/** Scrolls the whole timeline back with `first`, then forward again with `last`, checking both. */
async function expectPagesMatchOracle(
  app: TestApp,
  page: (handle: string, variables: Record<string, unknown>) => Promise<Page>,
  handle: string,
  pageSize: number,
) {
  const expectedItems = await oracle(app, handle);
  const expected = expectedItems.map((item) => item.id);
  const scrolled: string[] = [];
  const repostedBy: (string | null)[] = [];
  let after: string | null = null;
  let oldest: Page | null = null;
  for (;;) {
    const current: Page = await page(handle, { first: pageSize, after });
    // Never short, never empty while more exist.
    if (current.pageInfo.hasNextPage) expect(current.edges).toHaveLength(pageSize);
    scrolled.push(...current.edges.map((edge) => edge.node.id));
    repostedBy.push(...current.edges.map((edge) => edge.repostedBy?.handle ?? null));
    expect(current.pageInfo.hasPreviousPage).toBe(after !== null);
    oldest = current;
    if (!current.pageInfo.hasNextPage) break;
    after = current.pageInfo.endCursor;
    expect(scrolled.length).toBeLessThanOrEqual(expected.length);
  }
  expect(scrolled).toEqual(expected);
  expect(repostedBy).toEqual(expectedItems.map((item) => item.repostedBy));

  const refreshed: string[] = [];
  let before = oldest?.pageInfo.endCursor ?? null;
  while (before) {
    const current: Page = await page(handle, { last: pageSize, before });
    if (current.pageInfo.hasPreviousPage) expect(current.edges).toHaveLength(pageSize);
    refreshed.unshift(...current.edges.map((edge) => edge.node.id));
    before = current.pageInfo.hasPreviousPage ? current.pageInfo.startCursor : null;
  }
  expect(refreshed).toEqual(expected.slice(0, -1));
  return expected;
}

describe.each(combinations)('FEED_STRATEGY=$strategy TIMELINE_CONTENT=$content', ({ strategy, content }) => {
  let app: TestApp;
  const tokens: Record<string, string> = {};

  const gql = async (query: string, variables: Record<string, unknown>, handle: string) => {
    const result = await app.gql(query, variables, tokens[handle]);
    if (result.errors) throw new Error(`${handle}: ${JSON.stringify(result.errors)}`);
    return result.data;
  };
  const post = async (handle: string, text: string): Promise<string> =>
    (await gql('mutation($t: String!) { createPost(text: $t) { id } }', { t: text }, handle)).createPost.id;
  const follow = (handle: string, whom: string) => gql(`mutation { follow(handle: "${whom}") { handle } }`, {}, handle);
  /** Pages are read once fanout has delivered: followers' timelines are eventually, not instantly, complete. */
  const page = async (handle: string, variables: Record<string, unknown>): Promise<Page> => {
    await app.settled();
    return (await gql(pageQuery, variables, handle)).timeline;
  };

  const expectTimelineMatchesOracle = (handle: string, pageSize: number) => expectPagesMatchOracle(app, page, handle, pageSize);

  beforeAll(async () => {
    app = await startTestApp({ FEED_STRATEGY: strategy, TIMELINE_CONTENT: content, ...smallSizes });
    for (const handle of ['viewer', 'ann', 'ben', 'cat', 'dan', 'eve', 'outsider', 'sleeper', 'napper', 'rex', 'sam', 'tia', 'uma', 'reader'])
      tokens[handle] = await app.signUp(handle);
  });
  afterAll(() => app?.stop());

  it('pages the same timeline as the oracle, across bucket boundaries and the cache edge', async () => {
    for (const whom of ['ann', 'ben', 'cat']) await follow('viewer', whom);
    // The first read creates the cache in the cache strategy; everything after is delivered into it.
    expect((await page('viewer', { first: 5 })).edges).toEqual([]);
    const authors = ['ann', 'ben', 'cat', 'viewer', 'outsider'];
    for (let i = 0; i < 25; i++) await post(authors[i % authors.length]!, `story ${i}`);
    const expected = await expectTimelineMatchesOracle('viewer', 4);
    expect(expected).toHaveLength(20);
    await expectTimelineMatchesOracle('viewer', 7);
  });

  it('keeps every one of many concurrent posts to one recipient, once', async () => {
    const ids = await Promise.all(
      Array.from({ length: 12 }, (_, i) => post(['ann', 'ben', 'cat'][i % 3]!, `burst ${i}`)),
    );
    const expected = await expectTimelineMatchesOracle('viewer', 5);
    expect(expected.filter((id) => ids.includes(id))).toHaveLength(12);
    const collection = timelineCollection[strategy];
    if (collection === 'sized_buckets') {
      const buckets = await app.database.db.collection(collection).find({ _u: 'viewer' }).toArray();
      for (const bucket of buckets) {
        expect(bucket._c.length).toBeLessThanOrEqual(4);
        expect(bucket._s).toBeLessThanOrEqual(4);
      }
    }
  });

  it('backfills on follow and removes on unfollow', async () => {
    for (let i = 0; i < 4; i++) await post('dan', `dan before the follow ${i}`);
    await app.settled(); // fanout is done: only the follow brings these posts to the viewer
    await follow('viewer', 'dan');
    let expected = await expectTimelineMatchesOracle('viewer', 6);
    expect((await page('viewer', { first: 100 })).edges.filter((edge) => edge.node.author.handle === 'dan')).toHaveLength(4);

    await gql('mutation { unfollow(handle: "ben") { handle } }', {}, 'viewer');
    expected = await expectTimelineMatchesOracle('viewer', 6);
    expect((await page('viewer', { first: 100 })).edges.some((edge) => edge.node.author.handle === 'ben')).toBe(false);
    expect(expected.length).toBeGreaterThan(20);
  });

  it('backfills at most FOLLOW_BACKFILL older posts into materialized bucket timelines', async () => {
    for (let i = 0; i < 8; i++) await post('eve', `eve before the follow ${i}`);
    await app.settled();
    await follow('viewer', 'eve');
    await follow('viewer', 'eve'); // a repeated follow must not duplicate the backfill
    const eves = (await page('viewer', { first: 100 })).edges.filter((edge) => edge.node.author.handle === 'eve');
    // Fanout on read and the cache (which falls back to it) see all 8; buckets were given the newest 5.
    const bucketed = strategy === 'time-buckets' || strategy === 'sized-buckets';
    expect(eves.map((edge) => edge.node.text)).toEqual(
      Array.from({ length: 8 }, (_, i) => `eve before the follow ${7 - i}`).slice(0, bucketed ? 5 : 8),
    );
    await gql('mutation { unfollow(handle: "eve") { handle } }', {}, 'viewer');
  });

  it('deletes a post from content and from every timeline; only its author may', async () => {

    const annPosts = (await page('viewer', { first: 100 })).edges.filter((edge) => edge.node.author.handle === 'ann');
    const victims = [annPosts[0]!.node.id, annPosts.at(-1)!.node.id]; // one in the cache, one past it
    const forbidden = await app.gql(`mutation { deletePost(id: "${victims[0]}") }`, {}, tokens.viewer);
    expect(forbidden.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const unknown = await app.gql(`mutation { deletePost(id: "${apiPostId(new ObjectId())}") }`, {}, tokens.ann);
    expect(unknown.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    for (const id of victims) expect(await gql(`mutation { deletePost(id: "${id}") }`, {}, 'ann')).toEqual({ deletePost: true });

    const expected = await expectTimelineMatchesOracle('viewer', 5);
    expect(expected.some((id) => victims.includes(id))).toBe(false);
    expect((await gql(`{ post(id: "${victims[0]}") { id } }`, {}, 'viewer')).post).toBeNull();
    const collection = timelineCollection[strategy];
    if (collection) {
      const leftovers = await app.database.db.collection(collection).countDocuments({ '_c._id': { $in: victims.map((id) => internalId(id)) } });
      expect(leftovers).toBe(0);
    }
  });

  it('stores entries that embed or link the post as configured, and nothing for fanout on read', async () => {
    const db = app.database.db;
    const collection = timelineCollection[strategy];
    if (!collection) {
      for (const name of Object.values(timelineCollection)) if (name) expect(await db.collection(name).countDocuments()).toBe(0);
      return;
    }
    const docs = await db.collection(collection).find().toArray();
    const entries = docs.flatMap((doc) => doc._c as Record<string, unknown>[]);
    expect(entries.length).toBeGreaterThan(0);
    for (const entry of entries) {
      expect(Object.keys(entry).sort()).toEqual(content === 'embed' ? ['_a', '_d', '_id', '_m'] : ['_a', '_d', '_id']);
    }
  });

  it('merges the posts of pulled authors at read time, with the author crossing the threshold both ways', async () => {
    const db = app.database.db;
    for (const fan of ['outsider', 'dan', 'eve']) await follow(fan, 'ann'); // ann: 4 followers, above the threshold
    const pulled: string[] = [];
    for (let i = 0; i < 3; i++) pulled.push(await post('ann', `ann, pulled ${i}`));
    const pulledIds = pulled.map((id) => internalId(id));
    const materialized = strategy !== 'fanout-on-read';
    expect(await db.collection('content').countDocuments({ _id: { $in: pulledIds }, _p: true })).toBe(materialized ? 3 : 0);
    const collection = timelineCollection[strategy];
    if (collection) {
      await app.settled();
      // No timeline holds them: followers pull them from content, and ann's own pages merge her outbox.
      const holders = await db.collection(collection).find({ '_c._id': { $in: pulledIds } }).toArray();
      expect(holders).toEqual([]);
    }
    await expectTimelineMatchesOracle('viewer', 4);

    // All pulled authors a reader follows cost one content query per page together. (Once the
    // sweep has taken out the entries of the viewer's last unfollows: until then, a second at most,
    // a page reads past them, and a further round asks every source again.)
    for (let waited = 0; (await db.collection('follow_pairs').countDocuments({ f: 'viewer', ro: true })) > 0; waited += 20) {
      if (waited > 10_000) throw new Error("the sweep did not take out the entries of the viewer's unfollows");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const commands = await app.commandsDuring(() => gql(pageQuery, { first: 10 }, 'viewer'));
    const pulledReads = commands.filter(
      (command) => command.commandName === 'find' && command.command.find === 'content' && command.command.filter._p === true,
    );
    expect(pulledReads).toHaveLength(materialized ? 1 : 0);

    for (const fan of ['outsider', 'dan', 'eve']) await gql(`mutation { unfollow(handle: "ann") { handle } }`, {}, fan);
    const pushed = await post('ann', 'ann, pushed again');
    expect(await db.collection('content').countDocuments({ _id: internalId(pushed), _p: true })).toBe(0);
    const expected = await expectTimelineMatchesOracle('viewer', 4);
    expect(expected.slice(0, 4)).toEqual([pushed, ...pulled.reverse()]);
  });

  it('skips an inactive reader in fanout, then completes their first page and refills their timeline', async () => {
    const db = app.database.db;
    await follow('sleeper', 'napper');
    // The sleeper last read long ago (more than ACTIVE_READER_DAYS).
    await db.collection<any>('users').updateOne({ _id: 'sleeper' }, { $set: { readAt: new Date(Date.now() - 30 * 24 * 3600 * 1000) } });
    const missed: ObjectId[] = [];
    for (let i = 0; i < 5; i++) missed.push(internalId(await post('napper', `while you slept ${i}`)));
    await app.settled();
    const collection = timelineCollection[strategy];
    /** Entries of the missed posts in the sleeper's stored timeline. */
    const held = async () => {
      if (!collection) return 0;
      const docs = await db.collection<any>(collection).find({ $or: [{ _u: 'sleeper' }, { '_id._u': 'sleeper' }, { _id: 'sleeper' }] }).toArray();
      return docs.flatMap((doc) => doc._c as { _id: ObjectId }[]).filter((entry) => missed.some((id) => id.equals(entry._id))).length;
    };
    expect(await held()).toBe(0); // fanout skipped the sleeper

    const expected = await expectTimelineMatchesOracle('sleeper', 2);
    expect(expected).toHaveLength(5);
    await app.settled();
    if (collection) {
      expect(await held()).toBe(5); // refilled (buckets) or rebuilt on the read (cache)
      expect((await db.collection<any>('users').findOne({ _id: 'sleeper' }))?.timelineGap).toBeUndefined();
    }
    await expectTimelineMatchesOracle('sleeper', 2);
  });
  it('shows reposts, replies, mutes, blocks and keyword filters exactly as the oracle, each post once', async () => {
    const db = app.database.db;
    const ok = (handle: string, query: string, variables: Record<string, unknown> = {}) => gql(query, variables, handle);
    const reply = async (handle: string, text: string, to: string): Promise<string> =>
      (await ok(handle, 'mutation($t: String!, $r: ID) { createPost(text: $t, replyTo: $r) { id } }', { t: text, r: to })).createPost.id;
    const repost = (handle: string, id: string) => ok(handle, `mutation { repost(id: "${id}") { id } }`);
    for (const whom of ['rex', 'sam', 'tia']) await follow('reader', whom);
    // sam has more than FANOUT_PULL_THRESHOLD followers: his reposts are pulled at read time.
    for (const fan of ['dan', 'eve', 'outsider']) await follow(fan, 'sam');

    const stranger = await post('uma', 'from a stranger');
    await repost('rex', stranger); // brought in by rex
    await repost('sam', stranger); // and again by sam: still once
    const rexPost = await post('rex', 'rex says hello');
    await repost('sam', rexPost); // reader follows rex: the original is already there
    await reply('tia', 'tia answers rex', rexPost); // reader follows both: shown
    await reply('tia', 'tia answers uma', stranger); // reader does not follow uma: hidden
    await reply('reader', 'reader answers uma', stranger); // own reply: shown
    const ownPost = await post('reader', 'my own words');
    await repost('rex', ownPost); // the reader's own post: already there
    for (let i = 0; i < 12; i++) await post('rex', `spoiler number ${i}`);
    await post('sam', 'sam after the spoilers');
    // sam's own posts and reposts are pulled into his own pages as into his followers': in no timeline, shown once.
    expect((await expectTimelineMatchesOracle('sam', 3)).filter((id) => id === rexPost)).toHaveLength(1);
    let ids = await expectTimelineMatchesOracle('reader', 3);
    expect(ids.filter((id) => id === stranger)).toHaveLength(1);

    // Twelve filtered posts in a row: pages stay full both ways.
    await ok('reader', 'mutation { addKeywordFilter(phrase: "Spoiler") { id } }');
    ids = await expectTimelineMatchesOracle('reader', 3);
    expect(ids.length).toBeGreaterThan(3);

    await ok('reader', 'mutation { mute(handle: "sam") { handle } }');
    await expectTimelineMatchesOracle('reader', 2);
    // Without rex's repost, only sam's (muted) would bring the stranger's post.
    await ok('rex', `mutation { undoRepost(id: "${stranger}") { id } }`);
    ids = await expectTimelineMatchesOracle('reader', 2);
    expect(ids).not.toContain(stranger);
    await ok('reader', 'mutation { unmute(handle: "sam") { handle } }');
    ids = await expectTimelineMatchesOracle('reader', 2);
    expect(ids).toContain(stranger);

    // The stranger blocks the reader: their post leaves the reader's timeline, whoever reposted it.
    await ok('uma', 'mutation { block(handle: "reader") { handle } }');
    ids = await expectTimelineMatchesOracle('reader', 4);
    expect(ids).not.toContain(stranger);
    // The reader blocks tia: the follow goes, and tia's posts with it.
    await ok('reader', 'mutation { block(handle: "tia") { handle } }');
    expect(await db.collection('following').countDocuments({ _f: 'reader', _t: 'tia' })).toBe(0);
    await expectTimelineMatchesOracle('reader', 4);

    // Deleting an original takes its reposts along.
    await ok('uma', 'mutation { unblock(handle: "reader") { handle } }');
    await ok('uma', `mutation { deletePost(id: "${stranger}") }`);
    expect(await db.collection('content').countDocuments({ '_o._id': internalId(stranger) })).toBe(0);
    ids = await expectTimelineMatchesOracle('reader', 3);
    expect(ids).not.toContain(stranger);
  });

  it('shows followers-only and mentioned-only posts to their audience only, pulled and pushed authors alike', async () => {
    const db = app.database.db;
    const ok = (handle: string, query: string) => gql(query, {}, handle);
    const limited = async (handle: string, text: string, visibility: string): Promise<string> =>
      (await ok(handle, `mutation { createPost(text: "${text}", visibility: ${visibility}) { id } }`)).createPost.id;
    // sam's posts are pulled (more than FANOUT_PULL_THRESHOLD followers); rex's and cat's are pushed.
    const ids = [
      await limited('sam', 'sam for followers', 'FOLLOWERS'),
      await limited('sam', 'sam to @viewer', 'MENTIONED'),
      await limited('sam', 'sam to @outsider only', 'MENTIONED'),
      await limited('rex', 'rex for followers', 'FOLLOWERS'),
      await limited('cat', 'cat to @reader', 'MENTIONED'),
      await limited('viewer', 'viewer for followers', 'FOLLOWERS'),
      await limited('viewer', 'viewer to @nobody_here', 'MENTIONED'),
    ];
    for (let i = 0; i < 3; i++) await post('rex', `rex in public ${i}`);
    const shown = async (handle: string) => {
      const expected = await expectTimelineMatchesOracle(handle, 3);
      return ids.filter((id) => expected.includes(id));
    };
    const [samFollowers, samToViewer, samToOutsider, rexFollowers, catToReader, viewerFollowers, viewerAlone] = ids;
    // The viewer follows cat but is not in the audience of cat's mentioned-only post.
    expect(await shown('viewer')).toEqual([samToViewer, viewerFollowers, viewerAlone]);
    expect(await shown('reader')).toEqual([samFollowers, rexFollowers, catToReader]);
    expect(await shown('outsider')).toEqual([samFollowers, samToOutsider]); // outsider is one of sam's fans

    // Followers-only is decided at read time: an unfollow hides, a new follow shows.
    await ok('reader', 'mutation { unfollow(handle: "sam") { handle } }');
    expect(await shown('reader')).toEqual([rexFollowers, catToReader]);
    await follow('reader', 'sam');
    expect(await shown('reader')).toEqual([samFollowers, rexFollowers, catToReader]);
    // A post addressed to the reader still obeys their mutes.
    await ok('reader', 'mutation { mute(handle: "cat") { handle } }');
    expect(await shown('reader')).toEqual([samFollowers, rexFollowers]);
    await ok('reader', 'mutation { unmute(handle: "cat") { handle } }');

    // Limited posts are never pulled, pushed or materialized: whoever may see one finds it in the inbox query.
    const objectIds = ids.map((id) => internalId(id));
    expect(await db.collection('content').countDocuments({ _id: { $in: objectIds }, _p: true })).toBe(0);
    const collection = timelineCollection[strategy];
    if (collection) {
      await app.settled();
      expect(await db.collection(collection).countDocuments({ '_c._id': { $in: objectIds } })).toBe(0);
    }
  });
});

/** A small seeded generator (mulberry32), so a failing story can be replayed from its seed. */
function seeded(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { chance: (p: number) => next() < p, pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]! };
}

/**
 * Follows, unfollows, posts, deletions and reads interleaved at random with fanout sub-tasks that
 * no worker runs: the test runs them one at a time, sometimes stopping one between reading its
 * recipients and writing to do another request, sometimes holding one back behind later ones, as
 * slow or busy workers would. Posts are public, followers-only or mentioned-only at random, so
 * follows and unfollows change who sees what at read time. Once every held task has run, each
 * reader's timeline, paged both ways, must be the oracle's. Backfill is unbounded here, so bucket
 * timelines must be complete too.
 */
describe.each(combinations)('random interleavings of follows with queued deliveries: FEED_STRATEGY=$strategy TIMELINE_CONTENT=$content', ({ strategy, content }) => {
  let app: TestApp;
  // Stories 3, 6 and 10 lost a post under the cache strategy before its fingerprints and delivery floor.
  const seeds = [3, 6, 10, 2024];

  beforeAll(async () => {
    app = await startTestApp({ FEED_STRATEGY: strategy, TIMELINE_CONTENT: content, ...smallSizes, TIMELINE_CACHE_SIZE: '12', FOLLOW_BACKFILL: '1000', FANOUT_WORKERS: '0' });
  });
  afterAll(() => app?.stop());

  it.each(seeds)('matches the oracle after the story of seed %i', async (seed) => {
    const random = seeded(seed);
    // Levels and mentions draw from their own sequence, so each seed's story of requests and tasks stays the one it was.
    const levels = seeded(seed + 1_000_003);
    const handle = (name: string) => `${name}_${seed}`;
    const ghost = handle('ghost'); // mentioned before the account exists: never in the audience
    const readers = ['viewer', 'reader', 'lurker'].map(handle);
    const authors = ['ann', 'ben', 'cat', 'dan'].map(handle);
    const fans = ['fan1', 'fan2', 'fan3', 'fan4'].map(handle);
    const tokens = new Map<string, string>();
    for (const name of [...readers, ...authors, ...fans]) tokens.set(name, await app.signUp(name));
    const posts = new Map<string, string[]>(authors.map((author) => [author, []]));
    const { fanout } = app.services;
    const heldBack: string[] = [];

    const gql = async (as: string, query: string) => {
      const result = await app.gql(query, {}, tokens.get(as));
      if (result.errors) throw new Error(`${as}: ${JSON.stringify(result.errors)}`);
      return result.data;
    };
    const page = async (as: string, variables: Record<string, unknown>): Promise<Page> => {
      const result = await app.gql(pageQuery, variables, tokens.get(as));
      if (result.errors) throw new Error(`${as}: ${JSON.stringify(result.errors)}`);
      return result.data.timeline;
    };
    /** One request of the story, chosen at random. */
    const request = async () => {
      const author = random.pick(authors);
      const kind = random.pick(['post', 'post', 'post', 'follow', 'follow', 'unfollow', 'read', 'read', 'read', 'fan', 'delete']);
      if (kind === 'post') {
        // All three levels; a mentioned-only post names one reader (or, now and then, nobody who exists).
        const visibility = levels.pick(['PUBLIC', 'PUBLIC', 'FOLLOWERS', 'MENTIONED']);
        const mention = visibility === 'MENTIONED' ? ` @${levels.chance(0.85) ? levels.pick(readers) : ghost}` : '';
        const text = `${author} says ${posts.get(author)!.length}${mention}`;
        const id = (await gql(author, `mutation { createPost(text: "${text}", visibility: ${visibility}) { id } }`)).createPost.id;
        posts.get(author)!.push(id);
      } else if (kind === 'follow' || kind === 'unfollow') {
        await gql(random.pick(readers), `mutation { ${kind}(handle: "${author}") { handle } }`);
      } else if (kind === 'fan') {
        // Fans carry an author over FANOUT_PULL_THRESHOLD and back.
        await gql(random.pick(fans), `mutation { ${random.chance(0.6) ? 'follow' : 'unfollow'}(handle: "${author}") { handle } }`);
      } else if (kind === 'read') {
        await page(random.pick(readers), { first: random.pick([2, 4, 7]) }); // builds, reads and refills caches
      } else if (posts.get(author)!.length > 0) {
        const [id] = posts.get(author)!.splice(Math.floor(posts.get(author)!.length / 2), 1);
        await gql(author, `mutation { deletePost(id: "${id}") }`);
      }
    };
    /** One queued sub-task, run to the end, run with a request in the middle, or held back. */
    const step = async () => {
      const task = await fanout.queue.claim();
      if (!task) return;
      if (random.chance(0.25)) {
        heldBack.push(task._id);
        await fanout.queue.postpone(task, 3_600_000);
        return;
      }
      const interrupted = random.chance(0.3);
      let done = false;
      await app.services.runTask(task, {
        attempt: task.attempts,
        checkpoint: async () => {
          if (interrupted && !done) {
            done = true;
            await (random.chance(0.5) ? gql(random.pick(readers), `mutation { follow(handle: "${random.pick(authors)}") { handle } }`) : request());
          }
        },
      });
      await fanout.queue.complete(task);
    };

    for (const reader of readers) await page(reader, { first: 4 }); // empty timelines, cached as such
    for (let i = 0; i < 80; i++) {
      if (random.chance(0.5)) await request();
      else await step();
    }
    // The slow workers catch up: held tasks first or last, then everything else.
    await fanout.queue.tasks.updateMany({ _id: { $in: heldBack } }, { $set: { runAt: new Date() } });
    await runQueued(app);
    for (const reader of readers) {
      await expectPagesMatchOracle(app, page, reader, 3);
      await expectPagesMatchOracle(app, page, reader, 5);
    }
    expect(await app.database.db.collection('content').countDocuments({ _a: { $in: authors }, _v: { $exists: true } })).toBeGreaterThan(0);
    tokens.set(ghost, await app.signUp(ghost));
    expect(await app.database.db.collection('content').countDocuments({ _to: ghost })).toBe(0);
    expect((await page(ghost, { first: 10 })).edges).toEqual([]);
  });
});
