import { newPostId } from '../../src/records/posts.js';
import { BSON, ObjectId } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/testApp.js';
import { createPost, like, notificationsOf, unlike } from './support.js';
import { apiListId, internalHex, internalId } from '../support/ids.js';

const seeded = 9_990;

describe('10,000 accounts liking one post', () => {
  let app: TestApp;
  let token: string;
  let post: string;
  const last = Array.from({ length: 10 }, (_, i) => `late_${i}`);
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    app = await startTestApp();
    token = await app.signUp('famous');
    for (const handle of last) tokens[handle] = await app.signUp(handle);
    post = await createPost(app, token, 'everyone likes this');
    // The first 9,990 likes as the real path leaves them (accounts, like edges counted in the group,
    // the post's count, the group), written in bulk: 9,990 sign-ups would be 9,990 password hashes.
    const { db } = app.database;
    const postId = internalId(post);
    const group = app.services.memberships.postGroup('LIKE', internalId(post));
    const start = Date.now() - 3_600_000;
    const handles = Array.from({ length: seeded }, (_, i) => `early_${String(i).padStart(4, '0')}`);
    const at = (i: number) => new Date(start + i * 100);
    await db.collection<any>('users').insertMany(
      handles.map((handle) => ({ _id: handle, accountId: handle, displayName: null, passwordHash: '-', createdAt: at(0), followerCount: 0, followingCount: 0 })),
    );
    await db.collection<any>('likes').insertMany(
      handles.map((handle, i) => ({ _id: `${internalHex(post)}:${handle}`, p: postId, u: handle, r: 'famous', state: 'on', at: at(i), entry: newPostId(handle), d: at(i), g: group, ga: at(i) })),
    );
    await db.collection<any>('content').updateOne({ _id: postId }, { $inc: { 'n.l': seeded } });
    const newest = handles.slice(-20).reverse().map((handle) => ({ u: handle, at: at(handles.indexOf(handle)) }));
    await db.collection<any>('notifications').insertOne({ _id: group, r: 'famous', k: 'LIKE', at: at(seeded - 1), n: seeded, a: newest, p: postId, v: 1 });
  }, 120_000);
  afterAll(() => app?.stop());

  it('leaves one group with the exact count and a bounded document of the newest actors', async () => {
    for (const handle of last) await like(app, tokens[handle]!, post);
    const { items } = await notificationsOf(app, token);
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ kind: 'LIKE', actorCount: 10_000, post });
    expect(items[0]!.actors).toEqual([...[...last].reverse(), ...Array.from({ length: 10 }, (_, i) => `early_${seeded - 1 - i}`)]);
    const likeCount = (await app.gql('query($id: ID!) { post(id: $id) { likeCount } }', { id: post }, token)).data.post.likeCount;
    expect(likeCount).toBe(10_000);

    const doc = await app.database.db.collection<any>('notifications').findOne({ _id: app.services.memberships.postGroup('LIKE', internalId(post)) });
    expect(doc.a).toHaveLength(20);
    expect(BSON.calculateObjectSize(doc)).toBeLessThan(2_000);

    // The newest one leaving: 9,999, and the next newest fills the shown actors up again.
    await unlike(app, tokens.late_9!, post);
    const after = (await notificationsOf(app, token)).items[0]!;
    expect(after.actorCount).toBe(9_999);
    expect(after.actors).toHaveLength(20);
    expect(after.actors[0]).toBe('late_8');
    expect(after.actors.at(-1)).toBe(`early_${seeded - 11}`);
  });
});
