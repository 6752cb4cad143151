import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServerProcess, stopped } from '../support/serverProcess.js';
import { startTestApp, type TestApp } from '../support/testApp.js';

const handles = Array.from({ length: 16 }, (_, i) => `crashy_${String(i).padStart(2, '0')}`);

/**
 * A real API process is killed with SIGKILL while hundreds of follows and unfollows are in
 * flight: some requests die before their wish, some between their edges and counts, some after.
 * This process's repair sweep (its fanout workers run it) then finishes what they began.
 */
describe('kill -9 of an API process mid-follow', () => {
  let app: TestApp;
  let server: { child: ChildProcess; url: string } | null = null;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    app = await startTestApp({ FEED_STRATEGY: 'cache' });
    for (const handle of handles) tokens[handle] = await app.signUp(handle);
  }, 60_000);
  afterAll(async () => {
    if (server) await stopped(server.child, 'SIGKILL');
    await app?.stop();
  });

  it('leaves every pair settled, edges mirrored both ways and every count equal to its edges', async () => {
    server = await startServerProcess({
      MONGODB_URI: app.mongodbUri,
      JWT_SECRET: 'test-secret-that-is-at-least-32-characters',
      FEED_STRATEGY: 'cache',
      FANOUT_WORKERS: '0',
      RATE_LIMIT_FOLLOWS_PER_MINUTE: '100000',
    });
    const url = server.url;
    let answered = 0;
    const requests: Promise<unknown>[] = [];
    // Each user follows everyone, then unfollows every other one: 240 follows and 120 unfollows.
    for (const follower of handles) {
      for (const [index, followee] of handles.entries()) {
        if (followee === follower) continue;
        const send = (mutation: string) =>
          fetch(url, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens[follower]}` },
            body: JSON.stringify({ query: `mutation { ${mutation}(handle: "${followee}") { handle } }` }),
          }).then(() => answered++);
        requests.push(send('follow').then(() => (index % 2 === 0 ? send('unfollow') : undefined)).catch(() => 'died with the process'));
      }
    }
    // Killed once counts are being written: some users carry the token of a change not yet cleared.
    const midWay = async () => (await app.database.db.collection('users').countDocuments({ 'pendingCounts.0': { $exists: true } })) >= 3;
    while (!(await midWay())) await new Promise((resolve) => setTimeout(resolve, 1));
    await stopped(server.child, 'SIGKILL');
    await Promise.all(requests);
    expect(answered).toBeLessThan(360); // the kill landed with requests in flight

    const db = app.database.db;
    for (let waited = 0; (await db.collection('follow_pairs').countDocuments({ dirty: true })) > 0; waited += 100) {
      if (waited > 40_000) throw new Error('the repair sweep did not settle the pairs the killed process left');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const pairs = await db.collection<any>('follow_pairs').find().toArray();
    const following = await db.collection<any>('following').find({}, { projection: { _id: 0, _f: 1, _t: 1 } }).toArray();
    const followers = await db.collection<any>('followers').find({}, { projection: { _id: 0, _f: 1, _t: 1 } }).toArray();
    const asPairs = (edges: { _f: string; _t: string }[], flip: boolean) =>
      edges.map((edge) => (flip ? `${edge._t} ${edge._f}` : `${edge._f} ${edge._t}`)).sort();
    expect(asPairs(followers, true)).toEqual(asPairs(following, false));
    expect(asPairs(following, false)).toEqual(pairs.filter((pair) => pair.want).map((pair) => pair._id).sort());

    const users = await db.collection<any>('users').find({ _id: { $in: handles } }).toArray();
    const counted = users.map((user) => ({ handle: user._id, followerCount: user.followerCount, followingCount: user.followingCount }));
    const fromEdges = users.map((user) => ({
      handle: user._id,
      followerCount: followers.filter((edge) => edge._f === user._id).length,
      followingCount: following.filter((edge) => edge._f === user._id).length,
    }));
    expect(counted).toEqual(fromEdges);
    expect(pairs.filter((pair) => pair.countChange !== undefined || pair.lease !== null || pair.applied !== pair.v)).toEqual([]);
  }, 90_000);
});
