import type { ChildProcess } from 'node:child_process';
import type { ObjectId } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertFollowers } from '../support/bulkGraph.js';
import { postAndKillWorker } from '../support/killedFanout.js';
import { startTestApp, type TestApp } from '../support/testApp.js';
import { startWorkerProcess as startWorker } from '../support/workerProcess.js';

const followerCount = 5000;
const strategies = [
  { strategy: 'time-buckets', collection: 'timed_buckets', owner: (doc: any) => doc._id._u },
  { strategy: 'sized-buckets', collection: 'sized_buckets', owner: (doc: any) => doc._u },
  { strategy: 'cache', collection: 'timeline_cache', owner: (doc: any) => doc._id },
] as const;

describe.each(strategies)('kill -9 of a worker process mid-fanout to 5,000 followers: $strategy', ({ strategy, collection, owner }) => {
  let app: TestApp;
  let token: string;
  const workers: ChildProcess[] = [];
  const followers = Array.from({ length: followerCount }, (_, i) => `crash_${String(i).padStart(4, '0')}`);
  const workerEnvironment = () => ({
    MONGODB_URI: app.mongodbUri,
    FEED_STRATEGY: strategy,
    FANOUT_WORKERS: '2',
    FANOUT_BATCH: '100', // 50 sub-tasks, so the kill lands mid-way
    FANOUT_LEASE_SECONDS: '1',
  });

  beforeAll(async () => {
    // This process only publishes; the child processes do all the fanout.
    app = await startTestApp({ FEED_STRATEGY: strategy, FANOUT_WORKERS: '0' });
    token = await app.signUp('crash_star');
    // Under the cache strategy only readers have a cache: make every follower one.
    await insertFollowers(app.database.db, 'crash_star', followers, { withCaches: strategy === 'cache' });
  }, 120_000);
  afterAll(async () => {
    for (const worker of workers) worker.kill('SIGKILL');
    await app?.stop();
  });

  it('delivers the post to every follower exactly once after the restart', async () => {
    const postId = await postAndKillWorker(app, token, 'survives a crash', workerEnvironment(), workers);
    const deliveredBeforeRestart = await app.database.db.collection(collection).countDocuments({ '_c._id': postId });
    expect(deliveredBeforeRestart).toBeGreaterThan(0);
    expect(deliveredBeforeRestart).toBeLessThan(followerCount); // the kill really landed mid-fanout

    workers.push(await startWorker(workerEnvironment()));
    await app.settled(60_000);

    const holders = await app.database.db.collection<any>(collection).find({ '_c._id': postId }).toArray();
    const copies = new Map<string, number>();
    for (const doc of holders) {
      const here = (doc._c as { _id: ObjectId }[]).filter((entry) => entry._id.equals(postId)).length;
      copies.set(owner(doc), (copies.get(owner(doc)) ?? 0) + here);
    }
    const everyFollower = followers.every((handle) => copies.get(handle) === 1);
    expect(everyFollower).toBe(true);
    expect([...copies.values()].every((count) => count === 1)).toBe(true);
    expect(await app.database.db.collection('fanout_tasks').countDocuments({ state: 'dead' })).toBe(0);
  });
});
