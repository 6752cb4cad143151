import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/testApp.js';
import { createPost, follow, like, listed, unfollow, unlike } from './support.js';

/** Nothing half-done left behind: no member in transition or outside a group, no token on a group. */
async function nothingLeftBehind(app: TestApp): Promise<void> {
  const { db } = app.database;
  expect(await db.collection('notification_actors').countDocuments({ $or: [{ g: null }, { change: { $exists: true } }, { lease: { $ne: null } }] })).toBe(0);
  expect(await db.collection('notifications').countDocuments({ 'tk.0': { $exists: true } })).toBe(0);
  expect(await db.collection('notifications').countDocuments({ n: { $lte: 0 } })).toBe(0);
}

describe('notifications under concurrency (two instances’ workers)', () => {
  let app: TestApp;
  let other: TestApp;
  const tokens: Record<string, string> = {};
  const crowd = Array.from({ length: 40 }, (_, i) => `crowd_${i}`);

  beforeAll(async () => {
    app = await startTestApp();
    other = await startTestApp({ MONGODB_URI: app.mongodbUri });
    for (const handle of ['star', 'flip', ...crowd]) tokens[handle] = await app.signUp(handle);
  }, 60_000);
  afterAll(async () => {
    await other?.stop();
    await app?.stop();
  });

  it('counts racing joins and leaves of one group exactly', async () => {
    const post = await createPost(app, tokens.star!, 'popular');
    const instance = (i: number) => (i % 2 === 0 ? app : other);
    await Promise.all(crowd.map((handle, i) => like(instance(i), tokens[handle]!, post)));
    await Promise.all(crowd.map((handle, i) => follow(instance(i), tokens[handle]!, 'star')));
    // Half leave while the others join again (nothing changes for them).
    await Promise.all(
      crowd.map((handle, i) =>
        i % 2 === 0 ? Promise.all([unlike(instance(i), tokens[handle]!, post), unfollow(instance(i + 1), tokens[handle]!, 'star')]) : like(instance(i), tokens[handle]!, post),
      ),
    );
    await other.settled();
    const shown = await listed(app, tokens.star!);
    expect(shown.map((line) => line.split(' [')[0])).toEqual(['FOLLOW 20', 'LIKE 20']);
    const stayed = crowd.filter((_, i) => i % 2 === 1);
    for (const line of shown) {
      const actors = line.slice(line.indexOf('[') + 1, -1).split(',');
      expect(actors.every((actor) => stayed.includes(actor))).toBe(true);
      expect(actors).toHaveLength(20);
    }
    // The actors shown are exactly the newest of those counted.
    for (const group of await app.database.db.collection<any>('notifications').find({ r: 'star' }).toArray()) {
      const members = await app.database.db.collection<any>('notification_actors').find({ g: group._id }).sort({ at: -1 }).limit(20).toArray();
      expect(group.a.map((actor: any) => actor.u)).toEqual(members.map((member) => member.u));
    }
    await nothingLeftBehind(app);
  });

  it('ends a person’s 1,000 racing likes and unlikes in the state of the last answer, with nothing left behind', async () => {
    const post = await createPost(app, tokens.star!, 'flip me');
    const answers = await Promise.all(
      Array.from({ length: 1000 }, (_, i) => {
        const on = i % 2 === 0;
        const instance = i % 4 < 2 ? app : other;
        return (on ? like : unlike)(instance, tokens.flip!, post).then(() => on);
      }),
    );
    expect(answers).toHaveLength(1000);
    await other.settled();
    const liked = (await app.gql('query($id: ID!) { post(id: $id) { likeCount viewerHasLiked } }', { id: post }, tokens.flip)).data.post;
    const likes = await listed(app, tokens.star!, { kinds: ['LIKE'] });
    const ofThisPost = likes.filter((line) => line.endsWith('[flip]'));
    expect(ofThisPost).toEqual(liked.viewerHasLiked ? ['LIKE 1 [flip]'] : []);
    expect(liked.likeCount).toBe(liked.viewerHasLiked ? 1 : 0);

    // One more answer each way, one after the other: the notification follows each.
    await like(other, tokens.flip!, post);
    expect((await listed(app, tokens.star!, { kinds: ['LIKE'] })).filter((line) => line.endsWith('[flip]'))).toEqual(['LIKE 1 [flip]']);
    await unlike(app, tokens.flip!, post);
    expect((await listed(app, tokens.star!, { kinds: ['LIKE'] })).filter((line) => line.endsWith('[flip]'))).toEqual([]);
    await other.settled();
    await nothingLeftBehind(app);
  }, 120_000);
});
