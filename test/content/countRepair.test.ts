import { newPostId, byPostId } from '../../src/records/posts.js';
import { ObjectId } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ContentDocument } from '../../src/records/posts.js';
import { staleChangeMs } from '../../src/content/postCounters.js';
import { answersAs, startTestApp, type TestApp } from '../support/testApp.js';
import { internalHex, internalId } from '../support/ids.js';

/**
 * A request that dies half-way leaves the documents a crash would leave; the repair sweep (which
 * the fanout workers run every few seconds) must finish the change exactly once, whichever step
 * the request reached. Each state below is written as the code leaves it at that step.
 */
describe('count changes whose request died', () => {
  let app: TestApp;
  const tokens: Record<string, string> = {};
  const longAgo = () => new Date(Date.now() - staleChangeMs - 1000);

  const ok = answersAs(() => app, tokens);
  const counts = async (id: string) => (await ok('ada', `{ post(id: "${id}") { likeCount repostCount replyCount viewerHasLiked } }`)).post;

  beforeAll(async () => {
    // The sweep runs only when a test asks: a stalled change it finished early would change what the test reads.
    app = await startTestApp({ FANOUT_WORKERS: '0' });
    for (const handle of ['ada', 'ben']) tokens[handle] = await app.signUp(handle);
  });
  afterAll(() => app?.stop());

  it('finishes likes and unlikes stopped before and after the count, once each', async () => {
    const db = app.database.db;
    const likes = db.collection<any>('likes');
    const content = db.collection<ContentDocument>('content');
    const ids = await Promise.all([1, 2, 3, 4].map(async (i) => (await ok('ben', `mutation { createPost(text: "post ${i}") { id } }`)).createPost.id as string));
    const edge = (id: string, state: string, token: string) => ({
      _id: `${internalHex(id)}:ada`, p: internalId(id), u: 'ada', state, token, at: longAgo(), entry: newPostId('ada'), d: longAgo(),
    });
    // 1: like recorded, count not changed. 2: like counted, state not yet on.
    await likes.insertOne(edge(ids[0]!, 'adding', 't1'));
    await likes.insertOne(edge(ids[1]!, 'adding', 't2'));
    await content.updateOne({ _id: internalId(ids[1]!) }, { $inc: { 'n.l': 1 }, $push: { pc: 't2' } });
    // 3: unlike recorded on a counted like. 4: unlike counted, edge not yet deleted.
    await likes.insertOne(edge(ids[2]!, 'removing', 't3'));
    await content.updateOne({ _id: internalId(ids[2]!) }, { $inc: { 'n.l': 1 } });
    await likes.insertOne(edge(ids[3]!, 'removing', 't4'));
    await content.updateOne({ _id: internalId(ids[3]!) }, { $push: { pc: 't4' } });

    // The workers' own sweep may come first; either way each change is finished once.
    await app.services.feed.repairStalled();
    expect(await app.services.feed.repairStalled()).toBe(0);
    expect(await counts(ids[0]!)).toMatchObject({ likeCount: 1, viewerHasLiked: true });
    expect(await counts(ids[1]!)).toMatchObject({ likeCount: 1, viewerHasLiked: true });
    expect(await counts(ids[2]!)).toMatchObject({ likeCount: 0, viewerHasLiked: false });
    expect(await counts(ids[3]!)).toMatchObject({ likeCount: 0, viewerHasLiked: false });
    expect(await content.countDocuments({ pc: { $exists: true, $ne: [] } })).toBe(0);
  });

  it('lets a like that meets a dead one wait for the sweep rather than count twice', async () => {
    const db = app.database.db;
    const id = (await ok('ben', 'mutation { createPost(text: "stuck") { id } }')).createPost.id as string;
    await db.collection<any>('likes').insertOne({
      _id: `${internalHex(id)}:ada`, p: internalId(id), u: 'ada', state: 'adding', token: 'dead', at: longAgo(), entry: newPostId('ada'), d: longAgo(),
    });
    // The new request finds the stale transition, takes it over, and returns with it finished.
    expect((await ok('ada', `mutation { likePost(id: "${id}") { likeCount viewerHasLiked } }`)).likePost).toEqual({ likeCount: 1, viewerHasLiked: true });
  });

  it('counts a reply whose request died after storing it, and uncounts a reply deleted half-way', async () => {
    const db = app.database.db;
    const content = db.collection<ContentDocument>('content');
    const parent = (await ok('ben', 'mutation { createPost(text: "parent") { id } }')).createPost.id as string;
    const stored = newPostId('ada');
    await content.insertOne({ ...byPostId(stored), _a: 'ada', _m: 'reply', _d: longAgo(), _r: { _id: internalId(parent!), _a: 'ben' }, _cq: true });
    const deleted = (await ok('ada', `mutation { createPost(text: "gone soon", replyTo: "${parent}") { id } }`)).createPost.id as string;
    expect((await counts(parent)).replyCount).toBe(1);
    // Deleted, with the intent to uncount recorded, and the request gone before applying it.
    await content.deleteOne({ _id: internalId(deleted!) });
    await db.collection<any>('deleted_posts').insertOne({
      _id: internalId(deleted!), at: new Date(), uncount: { p: internalId(parent!), state: 'pending', at: longAgo() },
    });

    await app.services.feed.repairStalled();
    await app.services.feed.repairStalled();
    expect((await counts(parent)).replyCount).toBe(1); // the stored reply counted, the deleted one not
    expect(await content.countDocuments({ _cq: true })).toBe(0);
  });
});
