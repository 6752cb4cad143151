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
    await trends.count('ann', ['moving'], at(0));
    await trends.count('ann', ['moving'], at(0));
    await trends.count('ann', ['moving'], at(5));
    await trends.count('bob', ['moving', 'other'], at(5));
    await trends.count('ann', ['moving'], at(20));
    // A post counted late, for an hour before the account's latest use, moves nothing.
    await trends.count('bob', ['moving'], at(1));
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
});
