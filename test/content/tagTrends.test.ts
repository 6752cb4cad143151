import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/testApp.js';

const hour = 60 * 60 * 1000;

/** Trends by the hour: each account once over the last 24 hours, wherever in them its uses fell. */
describe('tag trends', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app?.stop());

  it('counts an account once over the window however often and in how many hours it used a tag, and forgets hours past it', async () => {
    const trends = app.services.trends;
    const start = new Date(Math.floor(Date.UTC(2026, 0, 1, 12) / hour) * hour);
    const at = (hours: number) => new Date(start.getTime() + hours * hour + 60_000);
    let posts = 0;
    const count = (authorId: string, tags: string[], hours: number) => trends.countPosts([{ postId: `post${++posts}`, authorId, tags, at: at(hours) }]);
    await count('ann', ['moving'], 0);
    await count('ann', ['moving'], 0);
    await count('ann', ['moving'], 5);
    await count('bob', ['moving', 'other'], 5);
    await count('ann', ['moving'], 20);
    // A post counted late, for an hour before the account's latest use, moves nothing.
    await count('bob', ['moving'], 1);
    // Hours apart, each reading ranks again (a ranking is held 30 s).
    const rank = (hours: number) => trends.trending(10, at(hours));
    expect(await rank(20)).toEqual([
      { tag: 'moving', accounts: 2, posts: 6 },
      { tag: 'other', accounts: 1, posts: 1 },
    ]);
    // 24 hours after hour 5: bob's uses have left the window, ann's latest (hour 20) has not.
    expect(await rank(29)).toEqual([{ tag: 'moving', accounts: 1, posts: 1 }]);
    expect(await rank(44)).toEqual([]);
    // Old buckets carry their own expiry, for the TTL index to remove.
    const indexes = await app.database.db.collection('tag_hours').indexes();
    expect(indexes.find((index) => index.name === 'expires')).toMatchObject({ key: { x: 1 }, expireAfterSeconds: 0 });
  });

  it('counts a batch as the posts one by one, and a post counted again (a replayed task) not at all', async () => {
    const trends = app.services.trends;
    const start = new Date(Math.floor(Date.UTC(2026, 2, 1, 12) / hour) * hour);
    const at = (hours: number) => new Date(start.getTime() + hours * hour + 60_000);
    const batch = [
      { postId: 'b1', authorId: 'cid', tags: ['batched', 'paired'], at: at(0) },
      { postId: 'b2', authorId: 'cid', tags: ['batched'], at: at(3) },
      { postId: 'b3', authorId: 'dan', tags: ['batched'], at: at(2) },
      { postId: 'b4', authorId: 'dan', tags: ['paired'], at: at(1) },
    ];
    const commands = await app.commandsDuring(() => trends.countPosts(batch));
    // One read and one write of the accounts' uses, one write of the hours, for the whole batch.
    const ofTrends = commands.filter((command) => ['tag_uses', 'tag_hours'].includes(command.command[command.commandName]));
    expect(ofTrends.map((command) => `${command.commandName} ${command.command[command.commandName]}`).sort()).toEqual(['find tag_uses', 'update tag_hours', 'update tag_uses']);
    const expected = [
      { tag: 'batched', accounts: 2, posts: 3 },
      { tag: 'paired', accounts: 2, posts: 2 },
    ];
    expect(await trends.trending(10, at(3))).toEqual(expected);
    // Replayed, whole or in part, alone or in a new batch, racing or not: nothing counts twice.
    await trends.countPosts(batch);
    await Promise.all([trends.countPosts([batch[1]!]), trends.countPosts([batch[0]!, batch[2]!]), trends.countPosts(batch)]);
    expect(await trends.trending(10, at(3))).toEqual(expected);
    // Two racing counts of an account's first posts with a tag count it once: one writes its use, the other reads it again.
    const racers = ['eve', 'fay', 'gus', 'hal', 'ivy'];
    await Promise.all(racers.flatMap((authorId) => [1, 2, 3].map((n) => trends.countPosts([{ postId: `${authorId}${n}`, authorId, tags: ['batched'], at: at(4) }]))));
    expect(await trends.trending(10, at(4))).toEqual([{ tag: 'batched', accounts: 7, posts: 18 }, expected[1]]);
  });
});
