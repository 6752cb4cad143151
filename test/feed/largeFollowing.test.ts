import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/testApp.js';

/** Runs `task` over `items` with at most `limit` in flight. */
async function inParallel<T>(items: readonly T[], limit: number, task: (item: T) => Promise<unknown>) {
  let next = 0;
  await Promise.all(Array.from({ length: limit }, async () => {
    while (next < items.length) await task(items[next++]!);
  }));
}

describe('a user who follows 5,000 accounts', () => {
  let app: TestApp;
  let token: string;
  const followed = Array.from({ length: 5000 }, (_, i) => `celeb_${i}`);
  const strangers = Array.from({ length: 20 }, (_, i) => `stranger_${i}`);

  beforeAll(async () => {
    app = await startTestApp();
    token = await app.signUp('fan');
    const { graph, feed } = app.services;
    // Setup goes through the services (not HTTP) only to skip 5,000 password hashes.
    await inParallel([...followed, ...strangers], 32, (handle) =>
      graph.createUser({ handle, displayName: null, passwordHash: 'not-used' }),
    );
    await inParallel(followed, 32, (handle) => feed.follow('fan', handle));
    await inParallel(followed, 32, (handle) => feed.post(handle, `hello from ${handle}`));
    // The newest posts of all come from accounts the fan does not follow.
    await inParallel(strangers, 8, (handle) => feed.post(handle, `noise from ${handle}`));
  }, 300_000);
  afterAll(() => app?.stop());

  it('gets the 20 newest posts of the accounts they follow, and counts right', async () => {
    const result = await app.gql('{ timeline { edges { node { text createdAt author { handle } } } pageInfo { hasNextPage } } viewer { followingCount } }', {}, token);
    expect(result.errors).toBeUndefined();
    const expected = (await app.database.db.collection('content').find({ _a: { $in: followed } }).toArray())
      .sort((a, b) => b._d.getTime() - a._d.getTime() || b._id.toHexString().localeCompare(a._id.toHexString()))
      .slice(0, 20)
      .map((doc) => doc._m);
    expect(result.data.timeline.edges.map((e: any) => e.node.text)).toEqual(expected);
    expect(result.data.timeline.pageInfo.hasNextPage).toBe(true);
    expect(result.data.viewer.followingCount).toBe(5000);
  });
});
