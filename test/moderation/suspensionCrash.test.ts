import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quietLogger } from '../../src/logger.js';
import { startWorkers } from '../../src/services.js';
import { insertFollowers } from '../support/bulkGraph.js';
import { startServerProcess, stopped } from '../support/serverProcess.js';
import { answersAs, startTestApp, type TestApp } from '../support/testApp.js';

const followerCount = 5000;
const followers = Array.from({ length: followerCount }, (_, i) => `reader_${String(i).padStart(5, '0')}`);

/**
 * An account with 5,000 followers posts, and is suspended while its post goes out to them; the
 * process doing the suspension's work is killed with SIGKILL half-way. Another process's workers
 * finish it: each follower's count changes once, and unsuspending puts back exactly that.
 */
describe('suspension of a 5,000-follower account against its fanout, with kill -9', () => {
  let app: TestApp;
  let server: { child: ChildProcess; url: string } | null = null;
  const tokens: Record<string, string> = {};
  const ok = answersAs(() => app, tokens);

  beforeAll(async () => {
    app = await startTestApp({ FEED_STRATEGY: 'time-buckets', FANOUT_WORKERS: '0', STAFF_HANDLES: 'mod' });
    for (const handle of ['big', 'mod', 'pal']) tokens[handle] = await app.signUp(handle);
    await insertFollowers(app.database.db, 'big', followers);
    await ok('big', 'mutation { follow(handle: "pal") { handle } }');
  }, 120_000);
  afterAll(async () => {
    if (server) await stopped(server.child, 'SIGKILL');
    await app?.stop();
  });

  it('hides the account from every count exactly once, and brings it back exactly', async () => {
    server = await startServerProcess({
      MONGODB_URI: app.mongodbUri,
      JWT_SECRET: 'test-secret-that-is-at-least-32-characters',
      FEED_STRATEGY: 'time-buckets',
      FANOUT_WORKERS: '2',
      FANOUT_LEASE_SECONDS: '1',
      STAFF_HANDLES: 'mod',
    });
    const send = async (as: string, query: string) => {
      const response = await fetch(server!.url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens[as]}` }, body: JSON.stringify({ query }) });
      const body = (await response.json()) as { data?: any; errors?: unknown[] };
      if (body.errors) throw new Error(JSON.stringify(body.errors));
      return body.data;
    };
    const post = (await send('big', 'mutation { createPost(text: "going out to 5,000") { id } }')).createPost.id;
    const report = (await send('pal', 'mutation { report(handle: "big", reason: SPAM) { id } }')).report.id;
    await send('mod', `mutation { resolveReport(id: "${report}", action: SUSPEND_ACCOUNT) { state } }`);
    // Killed once the suspension has begun taking its effects out of the followers' counts.
    const users = app.database.db.collection<any>('users');
    const hiddenCount = () => users.countDocuments({ hidden: { $exists: true } });
    for (let waited = 0; (await hiddenCount()) === 0; waited += 5) {
      if (waited > 30_000) throw new Error('the suspension never began');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await stopped(server.child, 'SIGKILL');
    server = null;
    if (process.env.SHOW_KILL_POINT) console.log(`killed with ${await hiddenCount()} of ${followerCount + 1} counts hidden`);

    // This process's workers take over what the killed one held once its lease runs out.
    startWorkers(app.services, quietLogger, 2);
    await app.settled(60_000);
    const hidden = await users.find({ _id: { $in: [...followers, 'pal'] } }, { projection: { followerCount: 1, followingCount: 1, hidden: 1 } }).toArray();
    expect(hidden.filter((user) => user._id !== 'pal' && (user.followingCount !== 0 || user.hidden?.length !== 1))).toEqual([]);
    expect(hidden.find((user) => user._id === 'pal')).toMatchObject({ followerCount: 0 });
    // Read by followers themselves: the post is not there, the account is not there.
    for (const reader of [followers[0]!, followers[2500]!, followers.at(-1)!]) tokens[reader] = await app.services.accounts.tokenFor(reader);
    for (const reader of [followers[0]!, followers.at(-1)!]) {
      const seen = await ok(reader, `{ timeline { edges { node { id } } } user(handle: "big") { handle } post(id: "${post}") { id } viewer { followingCount } }`);
      expect(seen).toEqual({ timeline: { edges: [] }, user: null, post: null, viewer: { followingCount: 0 } });
    }

    await ok('mod', 'mutation { unsuspendAccount(handle: "big") { handle } }');
    await app.settled(60_000);
    const back = await users.find({ _id: { $in: [...followers, 'pal'] } }, { projection: { followerCount: 1, followingCount: 1, hidden: 1 } }).toArray();
    expect(back.filter((user) => user._id !== 'pal' && (user.followingCount !== 1 || user.hidden?.length))).toEqual([]);
    expect(back.find((user) => user._id === 'pal')).toMatchObject({ followerCount: 1 });
    expect((await ok('pal', '{ user(handle: "big") { followerCount } }')).user.followerCount).toBe(followerCount);
    // The fanout went on meanwhile: the post is in the followers' timelines, shown again.
    const reader = followers[2500]!;
    expect((await ok(reader, '{ timeline { edges { node { id author { handle } } } } }')).timeline.edges).toEqual([{ node: { id: post, author: { handle: 'big' } } }]);
  }, 180_000);
});
