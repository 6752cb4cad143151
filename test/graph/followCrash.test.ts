import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { heardEverything } from '../support/announcements.js';
import { startServerProcess, stopped } from '../support/serverProcess.js';
import { startTestApp, type TestApp } from '../support/testApp.js';

const handles = Array.from({ length: 16 }, (_, i) => `crashy_${String(i).padStart(2, '0')}`);

/**
 * A real API process is killed with SIGKILL while hundreds of follows and unfollows are in
 * flight: some requests die before their wish, some between their edges and counts, some after.
 * This process's repair sweep (its fanout workers run it) then finishes what they began. Under
 * sized buckets each account has a post, so follows backfill it and unfollows leave it to the sweep.
 */
describe.each(['cache', 'sized-buckets'] as const)('kill -9 of an API process mid-follow: %s', (strategy) => {
  let app: TestApp;
  let server: { child: ChildProcess; url: string } | null = null;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    app = await startTestApp({ FEED_STRATEGY: strategy });
    for (const handle of handles) tokens[handle] = await app.signUp(handle);
    if (strategy === 'sized-buckets') {
      for (const handle of handles) await app.gql(`mutation { createPost(text: "by ${handle}") { id } }`, {}, tokens[handle]);
      await app.settled();
    }
  }, 60_000);
  afterAll(async () => {
    if (server) await stopped(server.child, 'SIGKILL');
    await app?.stop();
  });

  it('leaves every pair settled, edges mirrored both ways and every count equal to its edges', async () => {
    // What live subscribers last heard of each pair: the follow or unfollow the write that applied it carried.
    const heard = new Map<string, boolean>();
    const stopListening = app.services.changes.listen((event) => {
      if (event.kind === 'followed' || event.kind === 'unfollowed') heard.set(`${event.followerId} ${event.followeeId}`, event.kind === 'followed');
    });
    server = await startServerProcess({
      MONGODB_URI: app.mongodbUri,
      JWT_SECRET: 'test-secret-that-is-at-least-32-characters',
      FEED_STRATEGY: strategy,
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
    // Every follow and unfollow that was applied was told, the ones the sweep finished for a dead request too.
    await heardEverything(app);
    stopListening();
    expect(pairs.filter((pair) => (heard.get(pair._id) ?? false) !== pair.want).map((pair) => pair._id)).toEqual([]);

    const users = await db.collection<any>('users').find({ _id: { $in: handles } }).toArray();
    const counted = users.map((user) => ({ handle: user._id, followerCount: user.followerCount, followingCount: user.followingCount }));
    const fromEdges = users.map((user) => ({
      handle: user._id,
      followerCount: followers.filter((edge) => edge._f === user._id).length,
      followingCount: following.filter((edge) => edge._f === user._id).length,
    }));
    expect(counted).toEqual(fromEdges);
    expect(pairs.filter((pair) => pair.countChange !== undefined || pair.lease !== null || pair.applied !== pair.v)).toEqual([]);
    if (strategy !== 'sized-buckets') return;

    // The sweep's next passes take every unfollowed account's entries out; a followed one's stay.
    for (let waited = 0; (await db.collection('follow_pairs').countDocuments({ ro: true })) > 0; waited += 100) {
      if (waited > 20_000) throw new Error('the sweep did not take out the entries of the unfollows');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const buckets = await db.collection<any>('sized_buckets').find({ _u: { $in: handles } }).toArray();
    const stored = buckets.flatMap((bucket) => bucket._c.map((entry: any) => `${bucket._u} ${entry._a}`));
    // Each follow's backfill brought the followee's one post, each unfollow's removal took it out.
    expect([...new Set(stored)].sort()).toEqual(asPairs(following, false));
    expect(stored.length).toBe(new Set(stored).size);
  }, 90_000);
});

const lockedHandles = ['shy_00', 'shy_01', 'shy_02', 'shy_03'];
const askers = Array.from({ length: 12 }, (_, i) => `asker_${String(i).padStart(2, '0')}`);

/**
 * The same kill, with requests to locked accounts in flight against their approvals: no follow
 * exists that no approval asked for, no approval that answered is lost, and counts equal edges.
 */
describe('kill -9 of an API process mid-approval', () => {
  let app: TestApp;
  let server: { child: ChildProcess; url: string } | null = null;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    app = await startTestApp({ FEED_STRATEGY: 'time-buckets' });
    for (const handle of [...lockedHandles, ...askers]) tokens[handle] = await app.signUp(handle);
    for (const handle of lockedHandles) await app.gql('mutation { updateProfile(locked: true) { locked } }', {}, tokens[handle]);
  }, 60_000);
  afterAll(async () => {
    if (server) await stopped(server.child, 'SIGKILL');
    await app?.stop();
  });

  it('leaves no follow without an approval, no answered approval lost, and every count equal to its edges', async () => {
    server = await startServerProcess({
      MONGODB_URI: app.mongodbUri,
      JWT_SECRET: 'test-secret-that-is-at-least-32-characters',
      FEED_STRATEGY: 'time-buckets',
      FANOUT_WORKERS: '0',
      RATE_LIMIT_FOLLOWS_PER_MINUTE: '100000',
    });
    const url = server.url;
    const send = (as: string, mutation: string) =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens[as]}` },
        body: JSON.stringify({ query: `mutation { ${mutation} { handle } }` }),
      }).then(async (response) => ((await response.json()) as { errors?: unknown[] }).errors === undefined);
    const approvalsSent = new Set<string>();
    const approvalsAnswered = new Set<string>();
    const unfollowsSent = new Set<string>();
    const requests: Promise<unknown>[] = [];
    // Each asker asks every locked account; each approves; half the askers then take their follow back.
    for (const [index, asker] of askers.entries()) {
      for (const locked of lockedHandles) {
        const pair = `${asker} ${locked}`;
        requests.push(
          send(asker, `follow(handle: "${locked}")`)
            .then(() => {
              approvalsSent.add(pair);
              return send(locked, `approveFollowRequest(handle: "${asker}")`);
            })
            .then((approved) => {
              if (approved) approvalsAnswered.add(pair);
              if (index % 2 === 0) {
                unfollowsSent.add(pair);
                return send(asker, `unfollow(handle: "${locked}")`);
              }
            })
            .catch(() => 'died with the process'),
        );
      }
    }
    const midWay = async () => (await app.database.db.collection('users').countDocuments({ 'pendingCounts.0': { $exists: true } })) >= 2;
    while (!(await midWay())) await new Promise((resolve) => setTimeout(resolve, 1));
    await stopped(server.child, 'SIGKILL');
    await Promise.all(requests);
    expect(approvalsAnswered.size).toBeLessThan(askers.length * lockedHandles.length); // the kill landed with approvals in flight

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
    const followed = asPairs(following, false);
    expect(asPairs(followers, true)).toEqual(followed);
    expect(followed).toEqual(pairs.filter((pair) => pair.want).map((pair) => pair._id).sort());
    // No follow without an approval asked for it; a request never stands beside a follow.
    expect(followed.filter((pair) => !approvalsSent.has(pair))).toEqual([]);
    expect(pairs.filter((pair) => pair.want && pair.rq)).toEqual([]);
    // No approval that answered is lost, unless its requester took the follow back.
    expect([...approvalsAnswered].filter((pair) => !unfollowsSent.has(pair) && !followed.includes(pair))).toEqual([]);

    const users = await db.collection<any>('users').find({ _id: { $in: [...lockedHandles, ...askers] } }).toArray();
    const counted = users.map((user) => ({ handle: user._id, followerCount: user.followerCount, followingCount: user.followingCount }));
    const fromEdges = users.map((user) => ({
      handle: user._id,
      followerCount: followers.filter((edge) => edge._f === user._id).length,
      followingCount: following.filter((edge) => edge._f === user._id).length,
    }));
    expect(counted).toEqual(fromEdges);
    expect(pairs.filter((pair) => pair.countChange !== undefined || pair.lease !== null || pair.applied !== pair.v)).toEqual([]);
    // Requests the kill left waiting are on their accounts' pages, and approving them still works.
    for (const locked of lockedHandles) {
      const waiting = pairs.filter((pair) => pair.t === locked && pair.rq).map((pair) => pair.f).sort();
      const page = await app.gql('{ followRequests(first: 100) { edges { node { handle } } } }', {}, tokens[locked]);
      expect(page.data.followRequests.edges.map((edge: any) => edge.node.handle).sort()).toEqual(waiting);
      for (const asker of waiting) expect((await app.gql(`mutation { approveFollowRequest(handle: "${asker}") { handle } }`, {}, tokens[locked])).errors).toBeUndefined();
    }
  }, 90_000);
});
