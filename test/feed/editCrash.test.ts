import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertFollowers } from '../support/bulkGraph.js';
import { internalId } from '../support/ids.js';
import { startTestApp, type TestApp } from '../support/testApp.js';
import { startWorkerProcess as startWorker } from '../support/workerProcess.js';

const followerCount = 5000;
const strategies = [
  { strategy: 'time-buckets', collection: 'timed_buckets', owner: (doc: any) => doc._id._u },
  { strategy: 'cache', collection: 'timeline_cache', owner: (doc: any) => doc._id },
] as const;

describe.each(strategies)('kill -9 of a worker process while an edit is carried into 5,000 timelines: $strategy', ({ strategy, collection, owner }) => {
  let app: TestApp;
  let token: string;
  const workers: ChildProcess[] = [];
  const followers = Array.from({ length: followerCount }, (_, i) => `edit_crash_${String(i).padStart(4, '0')}`);
  const workerEnvironment = () => ({ MONGODB_URI: app.mongodbUri, FEED_STRATEGY: strategy, FANOUT_WORKERS: '2', FANOUT_BATCH: '100', FANOUT_LEASE_SECONDS: '1' });

  beforeAll(async () => {
    // This process only answers requests; the child processes do all the queued work.
    app = await startTestApp({ FEED_STRATEGY: strategy, FANOUT_WORKERS: '0' });
    token = await app.signUp('edit_crash_star');
    await insertFollowers(app.database.db, 'edit_crash_star', followers, { withCaches: strategy === 'cache' });
  }, 120_000);
  afterAll(async () => {
    for (const worker of workers) worker.kill('SIGKILL');
    await app?.stop();
  });

  it('leaves every copy old or new, and the queue finishes the job after the restart', async () => {
    const first = await startWorker(workerEnvironment());
    workers.push(first);
    const created = await app.gql('mutation { createPost(text: "before the crash") { id } }', {}, token);
    const id = created.data.createPost.id as string;
    const postId = internalId(id);
    await app.settled(60_000);
    const timelines = app.database.db.collection<any>(collection);
    const holding = (text: string) => timelines.countDocuments({ _c: { $elemMatch: { _id: postId, _m: text } } });
    // Every follower's timeline holds it (and the author's own, where the strategy keeps one).
    const copies = await holding('before the crash');
    expect(copies).toBeGreaterThanOrEqual(followerCount);

    expect((await app.gql('mutation($id: ID!) { editPost(id: $id, text: "after the crash") { id } }', { id }, token)).errors).toBeUndefined();
    while ((await holding('after the crash')) === 0) await new Promise((resolve) => setTimeout(resolve, 2));
    first.kill('SIGKILL');
    await new Promise((resolve) => first.once('exit', resolve));

    // Mid-way: some copies new, some old, each whole (the new text always with its edit time, the old never).
    const rewritten = await holding('after the crash');
    expect(rewritten).toBeLessThan(copies);
    const entries = (await timelines.find({ '_c._id': postId }).toArray()).flatMap((doc) => (doc._c as any[]).filter((entry) => entry._id.equals(postId)));
    for (const entry of entries) expect(entry._m === 'after the crash' ? entry._e instanceof Date : entry._m === 'before the crash' && entry._e === undefined).toBe(true);

    workers.push(await startWorker(workerEnvironment()));
    await app.settled(60_000);
    const holders = await timelines.find({ '_c._id': postId }).toArray();
    const texts = new Map<string, string[]>();
    for (const doc of holders) for (const entry of (doc._c as any[]).filter((item) => item._id.equals(postId))) texts.set(owner(doc), [...(texts.get(owner(doc)) ?? []), entry._m]);
    expect(followers.every((handle) => texts.get(handle)?.join() === 'after the crash')).toBe(true);
    expect(await app.database.db.collection('fanout_tasks').countDocuments({ state: 'dead' })).toBe(0);
  }, 120_000);
});
