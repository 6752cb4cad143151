import { newPostId } from '../../src/records/posts.js';
import type { ChildProcess } from 'node:child_process';
import { ObjectId } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staleChangeMs } from '../../src/content/postCounters.js';
import { retractionNotificationTasks } from '../../src/notifications/notificationService.js';
import { startServerProcess, stopped } from '../support/serverProcess.js';
import { runQueued } from '../support/queuedTasks.js';
import { startTestApp, type TestApp } from '../support/testApp.js';
import { createPost, expectGroupsExact, like, listed } from './support.js';
import { apiListId, internalHex, internalId } from '../support/ids.js';
import { noRequest } from '../../src/observability/requestScope.js';

const likers = Array.from({ length: 40 }, (_, i) => `liker_${String(i).padStart(2, '0')}`);

/**
 * A real API process is killed with SIGKILL while likes, unlikes, follows and unfollows are in
 * flight: some die before their edge, some between the group's write and the edge's settling,
 * some after. This process's repair sweep then finishes what they began.
 */
describe('kill -9 of an API process mid-notification', () => {
  let app: TestApp;
  let server: { child: ChildProcess; url: string } | null = null;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    app = await startTestApp();
    for (const handle of ['liked', ...likers]) tokens[handle] = await app.signUp(handle);
  }, 120_000);
  afterAll(async () => {
    if (server) await stopped(server.child, 'SIGKILL');
    await app?.stop();
  });

  it('leaves every group counting exactly its members, each change once', async () => {
    const posts = [await createPost(app, tokens.liked!, 'like me'), await createPost(app, tokens.liked!, 'and me')];
    server = await startServerProcess({
      MONGODB_URI: app.mongodbUri,
      JWT_SECRET: 'test-secret-that-is-at-least-32-characters',
      FANOUT_WORKERS: '0',
      RATE_LIMIT_FOLLOWS_PER_MINUTE: '100000',
    });
    const url = server.url;
    let answered = 0;
    const send = (handle: string, mutation: string) =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens[handle]}` },
        body: JSON.stringify({ query: `mutation { ${mutation} }` }),
      }).then(() => answered++);
    // Each liker likes both posts and follows, then takes back every other one of them.
    const requests = likers.map((handle, i) =>
      Promise.all([
        ...posts.map((post) => send(handle, `likePost(id: "${post}") { id }`).then(() => (i % 2 ? send(handle, `unlikePost(id: "${post}") { id }`) : null))),
        send(handle, 'follow(handle: "liked") { handle }').then(() => (i % 3 ? null : send(handle, 'unfollow(handle: "liked") { handle }'))),
      ]).catch(() => 'died with the process'),
    );
    // Killed once groups are being written, with most requests still in flight.
    const midWay = async () => (await app.database.db.collection('likes').countDocuments({ state: 'on' })) >= 10;
    while (!(await midWay())) await new Promise((resolve) => setTimeout(resolve, 1));
    await stopped(server.child, 'SIGKILL');
    await Promise.all(requests);
    expect(answered).toBeLessThan(likers.length * 4); // the kill landed with requests in flight

    // The sweep takes over transitions once they are stale: make them so, as time would.
    const { db } = app.database;
    const longAgo = new Date(Date.now() - staleChangeMs - 1000);
    await db.collection('likes').updateMany({ state: { $in: ['adding', 'removing'] } }, { $set: { at: longAgo } });
    for (let waited = 0; (await db.collection('follow_pairs').countDocuments({ dirty: true })) + (await db.collection('likes').countDocuments({ token: { $exists: true } })) > 0; waited += 100) {
      if (waited > 40_000) throw new Error('the repair sweep did not finish what the killed process left');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await expectGroupsExact(app);
    for (const post of posts) {
      const standing = await db.collection('likes').countDocuments({ p: internalId(post), state: 'on' });
      const { likeCount } = (await app.gql('query($id: ID!) { post(id: $id) { likeCount } }', { id: post }, tokens.liked)).data.post;
      expect(likeCount).toBe(standing);
    }
  }, 120_000);
});

describe('a like whose request died before its edge settled', () => {
  let app: TestApp;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    app = await startTestApp({ FANOUT_WORKERS: '0' });
    for (const handle of ['author', 'early', 'late']) tokens[handle] = await app.signUp(handle);
  });
  afterAll(() => app?.stop());

  it('is notified and counted once by the repair that finishes the like, however far the request got', async () => {
    const post = await createPost(app, tokens.author!, 'liked by the dead');
    const postId = internalId(post);
    const group = app.services.memberships.postGroup('LIKE', internalId(post));
    const likes = app.database.db.collection<any>('likes');
    const longAgo = new Date(Date.now() - staleChangeMs - 1000);
    const edge = (handle: string, token: string) => ({
      _id: `${internalHex(post)}:${handle}`, p: postId, u: handle, r: 'author', state: 'adding', token, at: longAgo, entry: newPostId(handle), d: longAgo, gc: { t: token, to: group, at: longAgo },
    });

    // Died right after writing its edge: nothing counted, nobody told.
    await likes.insertOne(edge('early', 'dead-request-1'));
    // Died after the count and the group were written, before the edge settled.
    await like(app, tokens.late!, post);
    await likes.updateOne({ _id: `${internalHex(post)}:late` }, { $set: edge('late', 'dead-request-2'), $unset: { g: '', ga: '' } });
    await app.database.db.collection<{ _id: ObjectId; pc: string[] }>('content').updateOne({ _id: postId }, { $push: { pc: 'dead-request-2' } });
    await app.database.db.collection<{ _id: string; tk: string[] }>('notifications').updateOne({ _id: group }, { $push: { tk: 'dead-request-2' } });

    await app.services.feed.repairStalled();
    expect(await listed(app, tokens.author!)).toEqual(['LIKE 2 [late,early]']);
    const counts = (await app.gql('query($id: ID!) { post(id: $id) { likeCount } }', { id: post }, tokens.author)).data.post;
    expect(counts.likeCount).toBe(2);
    await expectGroupsExact(app);
  });

  it('keeps the notifications of a post whose deleting request died before deleting it', async () => {
    const post = await createPost(app, tokens.author!, 'never deleted after all');
    await like(app, tokens.late!, post);
    const record = (await app.services.content.lookups.getPost(internalId(post)))!;
    // The clean-up was queued, then the request died; a minute later its task gives up.
    await app.services.work.enqueue(retractionNotificationTasks(record), noRequest);
    await app.services.work.queue.tasks.updateMany({}, { $set: { createdAt: new Date(Date.now() - 120_000), runAt: new Date() } });
    await runQueued(app);
    expect(await listed(app, tokens.author!)).toContain('LIKE 1 [late]');
    expect(await app.database.db.collection('notifications').countDocuments({ p: internalId(post) })).toBe(1);
  });

  it('takes out the group a like wrote after its post was deleted', async () => {
    const post = await createPost(app, tokens.author!, 'deleted while liked');
    const { readerFilters } = app.services.relations;
    const filtersOf = readerFilters.of.bind(readerFilters);
    // The delete lands right after the like read whom it tells, before it writes anything.
    readerFilters.of = async (readerId) => {
      readerFilters.of = filtersOf;
      await app.gql('mutation($id: ID!) { deletePost(id: $id) }', { id: post }, tokens.author);
      return filtersOf(readerId);
    };
    try {
      const answer = await app.gql('mutation($id: ID!) { likePost(id: $id) { id } }', { id: post }, tokens.early);
      expect(answer.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    } finally {
      readerFilters.of = filtersOf;
    }
    // The deletion's clean-up runs again once such a like has been written: then nothing is left.
    await app.services.work.queue.tasks.updateMany({}, { $set: { runAt: new Date(), createdAt: new Date(Date.now() - 120_000) } });
    await runQueued(app);
    expect(await app.services.content.lookups.exists(internalId(post))).toBe(false);
    expect(await app.database.db.collection('notifications').countDocuments({ p: internalId(post) })).toBe(0);
    expect(await app.database.db.collection('likes').countDocuments({ p: internalId(post) })).toBe(0);
  });
});
