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

describe('two workers rewriting one group’s actors at once', () => {
  let app: TestApp;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    app = await startTestApp({ FANOUT_WORKERS: '0' });
    for (const handle of ['owner', 'first_in', 'second_in']) tokens[handle] = await app.signUp(handle);
  });
  afterAll(() => app?.stop());

  it('ends with the newest actors when one rewrite read the members before the other’s join', async () => {
    const post = await createPost(app, tokens.owner!, 'two at once');
    await like(app, tokens.first_in!, post);
    await like(app, tokens.second_in!, post);
    const { fanout, notifications } = app.services;
    const [firstTask, secondTask] = await fanout.queue.tasks.find({ kind: 'notify-member' }).sort({ 'payload.at': 1 }).toArray();
    const run = async (task: typeof firstTask) => {
      await fanout.handle(task!, { attempt: 1, checkpoint: async () => {} });
      await fanout.queue.complete(task!);
    };
    // The first join's rewrite reads the group's members; the second join then runs whole before it writes.
    const { members } = notifications.groups;
    const find = members.find.bind(members);
    let interfered = false;
    (members as any).find = (filter: any, options: any) => {
      const cursor = find(filter, options);
      if (interfered || !filter?.g) return cursor;
      interfered = true;
      return {
        sort: (order: any) => ({
          limit: (count: number) => ({
            toArray: async () => {
              const read = await cursor.sort(order).limit(count).toArray();
              await run(secondTask);
              return read;
            },
          }),
        }),
      };
    };
    try {
      await run(firstTask);
    } finally {
      (members as any).find = find;
    }
    expect(interfered).toBe(true);
    expect(await listed(app, tokens.owner!)).toEqual(['LIKE 2 [second_in,first_in]']);
  });
});
