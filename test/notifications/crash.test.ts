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

describe('a worker that died between a group’s count and settling its member', () => {
  let app: TestApp;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    app = await startTestApp({ FANOUT_WORKERS: '0' });
    for (const handle of ['writer', 'fan']) tokens[handle] = await app.signUp(handle);
  });
  afterAll(() => app?.stop());

  it('is finished by the next worker without counting the member twice', async () => {
    const post = await createPost(app, tokens.writer!, 'counted once');
    await like(app, tokens.fan!, post);
    const { fanout } = app.services;
    const [task] = await fanout.queue.tasks.find({ kind: 'notify-member' }).toArray();
    // What the dead worker left: the change recorded, the group counted (its token on it), the
    // member not settled, its lease run out.
    const group = `l:${post}`;
    const longAgo = new Date(Date.now() - 60_000);
    await app.database.db.collection<any>('notifications').insertOne({ _id: group, r: 'writer', k: 'LIKE', at: longAgo, n: 1, a: [], p: new ObjectId(post), v: 1, tk: [`l:${post}|fan#dead-worker`, `l:${post}|gone#settled-before-its-pull`] });
    await app.database.db.collection<any>('notification_actors').insertOne({
      _id: `l:${post}|fan`, u: 'fan', g: null, at: longAgo, lease: { owner: 'dead', until: longAgo },
      change: { token: `l:${post}|fan#dead-worker`, from: null, to: group, at: longAgo, r: 'writer', p: new ObjectId(post) },
    });
    await fanout.handle(task!, { attempt: 2, checkpoint: async () => {} });
    await fanout.queue.complete(task!);
    expect(await listed(app, tokens.writer!)).toEqual(['LIKE 1 [fan]']);
    // Including the token of a member that settled before its worker could pull it.
    expect((await app.database.db.collection<any>('notifications').findOne({ _id: group })).tk).toEqual([]);
  });

  it('keeps the notifications of a post whose deleting request died before deleting it', async () => {
    const post = await createPost(app, tokens.writer!, 'never deleted after all');
    await like(app, tokens.fan!, post);
    const { fanout, notifications } = app.services;
    for (let task = await fanout.queue.claim(); task; task = await fanout.queue.claim()) {
      await fanout.handle(task, { attempt: 1, checkpoint: async () => {} });
      await fanout.queue.complete(task);
    }
    const record = (await app.services.content.lookups.getPost(new ObjectId(post)))!;
    // The clean-up was queued, then the request died; a minute later its task gives up.
    await fanout.enqueueWork(notifications.retractionTasks(record));
    await fanout.queue.tasks.updateMany({}, { $set: { createdAt: new Date(Date.now() - 120_000) } });
    const task = (await fanout.queue.claim())!;
    await fanout.handle(task, { attempt: 1, checkpoint: async () => {} });
    await fanout.queue.complete(task);
    expect((await listed(app, tokens.writer!)).filter((line) => line.startsWith('LIKE'))).toContain('LIKE 1 [fan]');
    expect(await app.database.db.collection('notifications').countDocuments({ p: new ObjectId(post) })).toBe(1);
  });

  it('removes what it wrote when the post was deleted while it wrote', async () => {
    const post = await createPost(app, tokens.writer!, 'deleted while notifying');
    await like(app, tokens.fan!, post);
    const { readerFilters } = app.services.relations;
    const filtersOf = readerFilters.of.bind(readerFilters);
    // The delete lands right after the worker read what it needs (the recipient's filters last), before it writes the group.
    readerFilters.of = async (readerId) => {
      readerFilters.of = filtersOf;
      await app.gql('mutation($id: ID!) { deletePost(id: $id) }', { id: post }, tokens.writer);
      return filtersOf(readerId);
    };
    try {
      const [task] = await app.services.fanout.queue.tasks.find({ kind: 'notify-member', 'payload.key': post }).toArray();
      await app.services.fanout.handle(task!, { attempt: 1, checkpoint: async () => {} });
      await app.services.fanout.queue.complete(task!);
    } finally {
      readerFilters.of = filtersOf;
    }
    expect(await app.services.content.lookups.exists(new ObjectId(post))).toBe(false);
    await app.services.fanout.queue.tasks.deleteMany({});
    expect(await app.database.db.collection('notifications').countDocuments({ p: new ObjectId(post) })).toBe(0);
    expect(await app.database.db.collection('notification_actors').countDocuments({ p: new ObjectId(post) })).toBe(0);
  });
});
