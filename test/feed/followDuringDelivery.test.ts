import { ObjectId } from 'mongodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { timelineContentModes } from '../../src/config.js';
import type { TaskRun } from '../../src/queue/taskWorkers.js';
import { runQueued as runTasks } from '../support/queuedTasks.js';
import { startTestApp, type TestApp } from '../support/testApp.js';
import { internalId } from '../support/ids.js';

const cacheSize = 6;
const pullThreshold = 3;
const combinations = (['time-buckets', 'sized-buckets', 'cache'] as const).flatMap((strategy) =>
  timelineContentModes.map((content) => ({ strategy, content })),
);

/**
 * A follow whose backfill meets deliveries still in the queue. No fanout worker runs in this
 * process: each test runs the queued sub-tasks itself, so every ordering of a follow against a
 * delivery of another author (before, during, after), an empty cache, a full one, an author
 * crossing the pull threshold and a rebuild on return is forced, not hoped for. Whatever the
 * order, the reader's timeline must end with every post of everyone they follow.
 */
describe.each(combinations)('a follow racing deliveries: FEED_STRATEGY=$strategy TIMELINE_CONTENT=$content', ({ strategy, content }) => {
  let app: TestApp;
  const tokens: Record<string, string> = {};
  let run = 0;
  /** Fresh handles per test, so no test sees another's posts: `name('zed')` is `zed_3` in the third test. */
  let name: (base: string) => string;

  const gql = async (handle: string, query: string) => {
    const result = await app.gql(query, {}, tokens[handle]);
    if (result.errors) throw new Error(`${handle}: ${JSON.stringify(result.errors)}`);
    return result.data;
  };
  const signUp = async (...handles: string[]) => {
    for (const handle of handles) tokens[handle] = await app.signUp(handle);
  };
  const post = async (handle: string, text: string) => (await gql(handle, `mutation { createPost(text: "${text}") { id } }`)).createPost.id as string;
  const follow = (handle: string, whom: string) => gql(handle, `mutation { follow(handle: "${whom}") { handle } }`);
  const unfollow = (handle: string, whom: string) => gql(handle, `mutation { unfollow(handle: "${whom}") { handle } }`);
  /** The whole timeline, newest first, paged by three (the cache holds six). */
  const timeline = async (handle: string): Promise<string[]> => {
    const texts: string[] = [];
    let after: string | null = null;
    for (;;) {
      const page: any = (await gql(handle, `{ timeline(first: 3${after ? `, after: "${after}"` : ''}) { edges { node { text } } pageInfo { hasNextPage endCursor } } }`)).timeline;
      texts.push(...page.edges.map((edge: any) => edge.node.text));
      if (!page.pageInfo.hasNextPage) return texts;
      after = page.pageInfo.endCursor;
    }
  };
  /** Reads twice: the second read is served by what the first one stored or sealed. */
  const expectTimeline = async (handle: string, expected: string[]) => {
    expect(await timeline(handle)).toEqual(expected);
    expect(await timeline(handle)).toEqual(expected);
  };
  const runQueued = (checkpoint?: TaskRun['checkpoint']) => runTasks(app, checkpoint);
  /** Runs the queue with `action` done at the first sub-task's last checkpoint: recipients read, nothing written. */
  const runQueuedInterruptedBy = async (action: () => Promise<unknown>) => {
    let done = false;
    await runQueued(async () => {
      const queued = await app.services.fanout.queue.tasks.countDocuments({ kind: 'deliver', 'payload.range': { $exists: true } });
      if (done || queued === 0) return;
      done = true;
      await action();
    });
    expect(done).toBe(true);
  };
  /** Runs `action` while the tasks of this post wait, as if every worker were busy elsewhere. */
  const holdBack = async (postId: string, action: () => Promise<unknown>) => {
    const tasks = app.services.fanout.queue.tasks;
    const ofPost = { 'payload.post.id': internalId(postId) };
    await tasks.updateMany(ofPost, { $set: { runAt: new Date(Date.now() + 3_600_000) } });
    await action();
    await tasks.updateMany(ofPost, { $set: { runAt: new Date() } });
  };
  /** Followers enough to carry `author` over the pull threshold, or back under it. */
  const fans = (author: string) => Array.from({ length: pullThreshold }, (_, i) => `${author}fan${i}`);

  beforeAll(async () => {
    app = await startTestApp({
      FEED_STRATEGY: strategy,
      TIMELINE_CONTENT: content,
      FANOUT_WORKERS: '0',
      FANOUT_BATCH: '1',
      TIMELINE_CACHE_SIZE: String(cacheSize),
      TIMELINE_BUCKET_SIZE: '3',
      FOLLOW_BACKFILL: '20',
      FANOUT_PULL_THRESHOLD: String(pullThreshold),
    });
  });
  afterAll(() => app?.stop());

  beforeEach(async () => {
    run++;
    name = (base) => `${base}_${run}`;
  });

  it('keeps a post of a newly followed author when another author’s queued delivery lands in an empty timeline afterwards', async () => {
    const [z, x, r] = [name('zed'), name('xia'), name('zzray')];
    await signUp(z, x, r, ...fans(z).slice(0, 2));
    for (const fan of [...fans(z).slice(0, 2), r]) await follow(fan, z);
    expect(await timeline(r)).toEqual([]); // the cache strategy now holds an empty cache for r
    const z1 = await post(z, 'z1');
    await post(x, 'x1');
    // x1's fanout finds no follower yet, while z1's sub-tasks still wait in the queue.
    await holdBack(z1, () => runQueued());
    await follow(r, x);
    await runQueued();
    await expectTimeline(r, ['x1', 'z1']);
  });

  it('keeps the followed author’s posts whether the follow comes before, during or after another author’s delivery', async () => {
    const [z, x, r] = [name('zed'), name('xia'), name('ray')];
    await signUp(z, x, r);
    await follow(r, z);
    await post(r, 'r0');
    await runQueued();
    expect(await timeline(r)).toEqual(['r0']);
    await post(x, 'x1');
    await post(x, 'x2');
    await runQueued(); // x has no followers yet: only a backfill brings x1 and x2 to r

    await post(z, 'z1'); // before: the follow's backfill lands first
    await follow(r, x);
    await runQueued();
    await expectTimeline(r, ['z1', 'x2', 'x1', 'r0']);

    await unfollow(r, x);
    await post(x, 'x3');
    await post(z, 'z2'); // during: the follow completes after z2's sub-task read its recipients
    await runQueuedInterruptedBy(() => follow(r, x));
    await expectTimeline(r, ['z2', 'x3', 'z1', 'x2', 'x1', 'r0']);

    await unfollow(r, x);
    await post(x, 'x4');
    await post(z, 'z3'); // after: the delivery lands first
    await runQueued();
    await follow(r, x);
    await runQueued();
    await expectTimeline(r, ['z3', 'x4', 'z2', 'x3', 'z1', 'x2', 'x1', 'r0']);
  });

  it('keeps them when the reader’s timeline is full, and a delivery of an older post arrives late', async () => {
    const [z, x, r] = [name('zed'), name('xia'), name('ray')];
    await signUp(z, x, r);
    await follow(r, z);
    const older = await post(z, 'z old'); // delivered late, below whatever the cache holds by then
    await app.services.fanout.queue.tasks.deleteMany({ 'payload.post.id': internalId(older) });
    await post(x, 'x between');
    const zs: string[] = [];
    for (let i = 0; i < cacheSize + 2; i++) zs.push(await post(z, `z${i}`));
    await runQueued();
    expect((await timeline(r)).slice(0, 2)).toEqual([`z${cacheSize + 1}`, `z${cacheSize}`]); // the cache strategy is full
    await gql(z, `mutation { deletePost(id: "${zs.at(-1)}") }`); // and now one short of full
    await runQueued();
    const late = (await app.services.content.getPost(internalId(older)))!;
    await app.services.feed.backend.deliverTo([r], [late]); // the late sub-task, replayed
    await follow(r, x);
    await runQueued();
    const newest = Array.from({ length: cacheSize + 1 }, (_, i) => `z${cacheSize - i}`);
    await expectTimeline(r, [...newest, 'x between', 'z old']);
  });

  it('keeps every post when a timeline once whole is trimmed, shrunk by a deletion, and then given a late older post', async () => {
    const [z, r] = [name('zed'), name('ray')];
    await signUp(z, r);
    await follow(r, z);
    expect(await timeline(r)).toEqual([]); // whole: the cache strategy knows nothing is below
    const older = await post(z, 'z old');
    await app.services.fanout.queue.tasks.deleteMany({ 'payload.post.id': internalId(older) });
    const zs: string[] = [];
    for (let i = 0; i < cacheSize + 2; i++) zs.push(await post(z, `z${i}`));
    await runQueued(); // the cache strategy's cache fills up and trims its oldest entries
    await gql(z, `mutation { deletePost(id: "${zs.at(-1)}") }`);
    await runQueued();
    const late = (await app.services.content.getPost(internalId(older)))!;
    await app.services.feed.backend.deliverTo([r], [late]);
    await expectTimeline(r, [...Array.from({ length: cacheSize + 1 }, (_, i) => `z${cacheSize - i}`), 'z old']);
  });

  it('keeps them when the followed author crosses the pull threshold, either way', async () => {
    const [z, x, r] = [name('zed'), name('xia'), name('ray')];
    await signUp(z, x, r, ...fans(x));
    await follow(r, z);
    await post(z, 'z0');
    await runQueued();
    expect(await timeline(r)).toEqual(['z0']);
    await post(x, 'x pushed');
    for (const fan of fans(x)) await follow(fan, x);
    await follow(z, x); // one more: x's posts are pulled from here on
    await post(x, 'x pulled');
    await post(z, 'z1');
    await runQueuedInterruptedBy(() => follow(r, x));
    await expectTimeline(r, ['z1', 'x pulled', 'x pushed', 'z0']);

    await unfollow(r, x);
    for (const fan of [...fans(x), z]) await unfollow(fan, x); // back under: pushed again
    await post(x, 'x pushed again');
    await post(z, 'z2');
    await runQueuedInterruptedBy(() => follow(r, x));
    await expectTimeline(r, ['z2', 'x pushed again', 'z1', 'x pulled', 'x pushed', 'z0']);
  });

  it('keeps them when the reader comes back after a long absence and the timeline is rebuilt', async () => {
    const [z, x, r] = [name('zed'), name('xia'), name('ray')];
    await signUp(z, x, r);
    await follow(r, z);
    // The timeline as it was when r last read, long ago (read on the backend: this process keeps no memory of it).
    await app.services.feed.backend.timeline(r, { direction: 'older', from: null, limit: 3 }, [r, z]);
    await app.database.db.collection<{ _id: string }>('users').updateOne({ _id: r }, { $set: { readAt: new Date(Date.now() - 30 * 24 * 3600 * 1000) } });
    await post(z, 'z1'); // skips r, who is away
    await post(x, 'x1');
    await runQueuedInterruptedBy(() => follow(r, x));
    await expectTimeline(r, ['x1', 'z1']);
    await runQueued(); // the return's refill, in the bucket strategies
    await expectTimeline(r, ['x1', 'z1']);
  });

  it('keeps them when a read that learnt whom the reader follows before the follow rebuilds the timeline after it', async () => {
    const [z, x, r] = [name('zed'), name('xia'), name('ray')];
    await signUp(z, x, r);
    await follow(r, z);
    await post(z, 'z1');
    await post(x, 'x1');
    await runQueued();
    await follow(r, x);
    // A read on another instance, whose list of followees predates the follow, builds or reads the timeline now.
    const { backend } = app.services.feed;
    await backend.timeline(r, { direction: 'older', from: null, limit: 3 }, [r, z]);
    await expectTimeline(r, ['x1', 'z1']);
  });

  it('keeps a post made while the reader did not follow its author, followed again after a stale read rebuilt the timeline', async () => {
    const [z, x, r] = [name('zed'), name('xia'), name('ray')];
    await signUp(z, x, r);
    for (const whom of [z, x]) await follow(r, whom);
    await post(z, 'z1');
    await post(x, 'x1');
    await runQueued();
    expect(await timeline(r)).toEqual(['x1', 'z1']);
    await unfollow(r, x);
    // A read on an instance that has not yet learnt of the unfollow rebuilds the timeline for r, z and x.
    await app.services.feed.backend.timeline(r, { direction: 'older', from: null, limit: 3 }, [r, z, x]);
    await post(x, 'x2'); // r does not follow x: its fanout passes r by
    await runQueued();
    await follow(r, x);
    await expectTimeline(r, ['x2', 'x1', 'z1']);
  });
});

describe('a timeline cache sealed with a hole before fingerprints', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ FEED_STRATEGY: 'cache', FANOUT_WORKERS: '0' });
  });
  afterAll(() => app?.stop());

  it('is rebuilt once on its reader’s next read, and the missing post shows', async () => {
    const tokens: Record<string, string> = {};
    for (const handle of ['zed', 'xia', 'ray']) tokens[handle] = await app.signUp(handle);
    for (const whom of ['zed', 'xia']) await app.gql(`mutation { follow(handle: "${whom}") { handle } }`, {}, tokens.ray);
    const created: Record<string, string> = {};
    for (const [handle, text] of [['zed', 'z1'], ['xia', 'x1']] as const) {
      created[text] = (await app.gql(`mutation { createPost(text: "${text}") { id } }`, {}, tokens[handle])).data.createPost.id;
    }
    await app.services.fanout.queue.tasks.deleteMany({});
    // As a cache written by an earlier version holds it: z1 only, sealed as if nothing were below.
    const z1 = (await app.services.content.getPost(internalId(created.z1!)))!;
    await app.database.db.collection<any>('timeline_cache').insertOne({
      _id: 'ray',
      _c: [{ _id: z1.id, _a: 'zed', _d: z1.createdAt, _m: 'z1' }],
      _e: `${z1.id.toHexString()} sealed`,
    });
    const page = await app.gql('{ timeline(first: 10) { edges { node { text } } } }', {}, tokens.ray);
    expect(page.data.timeline.edges.map((edge: any) => edge.node.text)).toEqual(['x1', 'z1']);
  });
});
