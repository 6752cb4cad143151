import type { ChildProcess } from 'node:child_process';
import { ObjectId } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/testApp.js';
import { startWorkerProcess } from '../support/workerProcess.js';
import { createPost, like, listed } from './support.js';

const likers = Array.from({ length: 120 }, (_, i) => `liker_${i}`);

/**
 * The API instance runs no worker: the likes are answered, their notifications wait in the queue,
 * and a real worker process (`npm run worker`) that builds them is killed with SIGKILL mid-way.
 */
describe('a worker killed between likes and their notifications', () => {
  let app: TestApp;
  const tokens: Record<string, string> = {};
  const workers: ChildProcess[] = [];
  const workerEnvironment = () => ({ MONGODB_URI: app.mongodbUri, FANOUT_WORKERS: '2', FANOUT_LEASE_SECONDS: '1' });

  beforeAll(async () => {
    app = await startTestApp({ FANOUT_WORKERS: '0' });
    for (const handle of ['liked', ...likers]) tokens[handle] = await app.signUp(handle);
  }, 120_000);
  afterAll(async () => {
    for (const worker of workers) worker.kill('SIGKILL');
    await app?.stop();
  });

  it('neither loses nor doubles a notification', async () => {
    const post = await createPost(app, tokens.liked!, 'like me');
    await Promise.all(likers.map((handle) => like(app, tokens[handle]!, post)));
    const group = app.database.db.collection<any>('notifications');
    expect(await group.countDocuments()).toBe(0); // every notification is still a queued task

    const worker = await startWorkerProcess(workerEnvironment());
    workers.push(worker);
    while (((await group.findOne({ _id: `l:${post}` }))?.n ?? 0) < 10) await new Promise((resolve) => setTimeout(resolve, 2));
    worker.kill('SIGKILL');
    await new Promise((resolve) => worker.once('exit', resolve));
    const counted = (await group.findOne({ _id: `l:${post}` }))!.n as number;
    expect(counted).toBeLessThan(likers.length); // the kill really landed mid-way

    workers.push(await startWorkerProcess(workerEnvironment()));
    await app.settled(60_000);
    const shown = await listed(app, tokens.liked!);
    expect(shown).toHaveLength(1);
    expect(shown[0]).toMatch(new RegExp(`^LIKE ${likers.length} \\[`));
    const doc = await group.findOne({ _id: `l:${post}` });
    expect(doc.n).toBe(likers.length);
    expect(doc.a).toHaveLength(20);
    expect(doc.tk ?? []).toEqual([]);
    expect(await app.database.db.collection('notification_actors').countDocuments({ g: `l:${post}`, change: { $exists: false }, lease: null })).toBe(likers.length);
  }, 120_000);
});

describe('a like whose request died between its first write and its notification', () => {
  let app: TestApp;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    app = await startTestApp({ FANOUT_WORKERS: '0' });
    for (const handle of ['author', 'early', 'late']) tokens[handle] = await app.signUp(handle);
  });
  afterAll(() => app?.stop());

  const runQueued = async () => {
    const { fanout } = app.services;
    for (let task = await fanout.queue.claim(); task; task = await fanout.queue.claim()) {
      await fanout.handle(task, { attempt: task.attempts, checkpoint: async () => {} });
      await fanout.queue.complete(task);
    }
  };

  it('is notified once by the repair that finishes the like, however far the request got', async () => {
    const post = await createPost(app, tokens.author!, 'liked by the dead');
    const postId = new ObjectId(post);
    const likes = app.database.db.collection<any>('likes');
    const longAgo = new Date(Date.now() - 60_000);

    // Died right after recording the like: nothing queued yet.
    await likes.insertOne({ _id: `${post}:early`, p: postId, u: 'early', state: 'adding', token: 'dead-request-1', at: longAgo, entry: new ObjectId(), d: longAgo });
    // Died after its notification was queued and built and the count applied, before the like was settled.
    await like(app, tokens.late!, post);
    await runQueued();
    await likes.updateOne({ _id: `${post}:late` }, { $set: { state: 'adding', token: 'dead-request-2', at: longAgo } });
    await app.database.db.collection<{ _id: ObjectId; pc?: string[] }>('content').updateOne({ _id: postId }, { $push: { pc: 'dead-request-2' } });

    await app.services.feed.repairStalled();
    await runQueued();
    expect(await listed(app, tokens.author!)).toEqual(['LIKE 2 [late,early]']);
    const counts = (await app.gql('query($id: ID!) { post(id: $id) { likeCount } }', { id: post }, tokens.author)).data.post;
    expect(counts.likeCount).toBe(2);
  });
});
