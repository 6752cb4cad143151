import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newBody } from '../../src/records/posts.js';
import { TimelineCache } from '../../src/feed/strategies/timelineCache.js';
import { insertFollowers } from '../support/bulkGraph.js';
import { heardEverything } from '../support/announcements.js';
import { postAndKillWorker } from '../support/killedFanout.js';
import { startTestApp, type TestApp } from '../support/testApp.js';
import { startWorkerProcess } from '../support/workerProcess.js';

const followerCount = 2000;

/**
 * The cache strategy's held copies when the fanout worker that writes the caches is killed: this
 * instance runs no worker, so its copies change only through the workers' announcements. A
 * sub-task killed between its write and its announcement is run again by the next worker, which
 * announces; no copy stays stale.
 */
describe('caches held by an API instance while a fanout worker process is killed mid-fanout', () => {
  let app: TestApp;
  let token: string;
  const workers: ChildProcess[] = [];
  const followers = Array.from({ length: followerCount }, (_, i) => `held_${String(i).padStart(4, '0')}`);
  const workerEnvironment = () => ({
    MONGODB_URI: app.mongodbUri,
    FEED_STRATEGY: 'cache',
    FANOUT_WORKERS: '2',
    FANOUT_BATCH: '50', // 40 sub-tasks, so the kill lands mid-way
    FANOUT_LEASE_SECONDS: '1',
  });
  /** A first page of two, as this instance serves it: the caches hold three older posts, so nothing is read below them. */
  const newestTwo = async (handle: string) =>
    (await app.services.feed.backend.timeline(handle, { direction: 'older', from: null, limit: 2 }, [handle, 'held_star'])).items.map(
      (entry) => entry.body?.text,
    );

  const heldHits = () => {
    const { backend } = app.services.feed;
    if (!(backend instanceof TimelineCache)) throw new Error('not the cache strategy');
    return backend.cacheStats().hits;
  };

  beforeAll(async () => {
    app = await startTestApp({ FEED_STRATEGY: 'cache', FANOUT_WORKERS: '0' });
    token = await app.signUp('held_star');
    await insertFollowers(app.database.db, 'held_star', followers, { withCaches: true });
    const older = ['older 1', 'older 2', 'older 3'].map((text) => app.services.content.preparePost('held_star', newBody(text), { pulled: false }));
    for (const post of older) await app.services.content.storePost(post);
    await app.services.feed.backend.deliverTo(followers, older);
  }, 120_000);
  afterAll(async () => {
    for (const worker of workers) worker.kill('SIGKILL');
    await app?.stop();
  });

  it('shows the post in every copy it holds once the restarted worker has finished', async () => {
    const postId = await postAndKillWorker(app, token, 'after the crash', workerEnvironment(), workers);

    const caches = app.database.db.collection<any>('timeline_cache');
    const delivered = new Set((await caches.find({ '_c._id': postId }, { projection: { _id: 1 } }).toArray()).map((doc) => doc._id as string));
    expect(delivered.size).toBeGreaterThan(0);
    expect(delivered.size).toBeLessThan(followerCount); // the kill really landed mid-fanout
    const waiting = followers.filter((handle) => !delivered.has(handle)).filter((_, index) => index % 10 === 0);

    // The replacement worker starts with the post's remaining work held back, and the copies are
    // read once it is up: only that work, not a process start, stands between them and the change.
    const { tasks } = app.services.work.queue;
    const ofPost = { 'payload.post.id': postId, state: 'ready' as const };
    await tasks.updateMany(ofPost, { $set: { runAt: new Date(Date.now() + 3_600_000) } });
    workers.push(await startWorkerProcess(workerEnvironment()));
    for (const handle of waiting) expect(await newestTwo(handle)).toEqual(['older 3', 'older 2']);
    const hits = heldHits();
    for (const handle of waiting.slice(0, 5)) expect(await newestTwo(handle)).toEqual(['older 3', 'older 2']);
    expect(heldHits()).toBe(hits + 5); // served from this instance's copies
    await tasks.updateMany(ofPost, { $set: { runAt: new Date(0) } });

    // Every announcement of the finished work is stored once the queue is drained; once this
    // instance has heard them all, each copy is read once.
    await app.settled(60_000);
    await heardEverything(app);
    const before = heldHits();
    const newest = await Promise.all(waiting.map(async (handle) => (await newestTwo(handle))[0]));
    expect(waiting.filter((_, index) => newest[index] !== 'after the crash')).toEqual([]);
    // Served from the copies held since before the restart, which the announcements changed in
    // place: none ran out and was read again, so their time limit proved nothing here.
    expect(heldHits() - before, 'copies were read again: a time limit, not an announcement, may have refreshed them').toBe(waiting.length);
  });
});
