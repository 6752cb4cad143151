import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answersAs, startTestApp, type TestApp } from '../support/testApp.js';

/**
 * Follows and unfollows of a suspended account that were in flight when it was marked land after
 * the suspension's first pass: its second pass, once they have finished, makes every count exact
 * during the suspension too, and unsuspending still brings back exactly what there is.
 */
describe('a suspension against follows and unfollows in flight', () => {
  let app: TestApp;
  const tokens: Record<string, string> = {};
  const ok = answersAs(() => app, tokens);
  const users = () => app.database.db.collection<any>('users');
  const following = async (handle: string) => (await users().findOne({ _id: handle })).followingCount as number;

  beforeAll(async () => {
    app = await startTestApp({ STAFF_HANDLES: 'mod' });
    for (const handle of ['mod', 'sus', 'leaver', 'joiner', 'stayer']) tokens[handle] = await app.signUp(handle);
    for (const fan of ['leaver', 'stayer']) await ok(fan, 'mutation { follow(handle: "sus") { handle } }');
  });
  afterAll(() => app?.stop());

  it('counts out a follow that landed after the first pass, and back an unfollow that did', async () => {
    const report = (await ok('leaver', 'mutation { report(handle: "sus", reason: SPAM) { id } }')).report.id;
    await ok('mod', `mutation($id: ID!) { resolveReport(id: $id, action: SUSPEND_ACCOUNT) { state } }`, { id: report });
    await app.settled();
    expect([await following('leaver'), await following('stayer'), await following('joiner')]).toEqual([0, 0, 0]);
    // What requests that read the account before the mark leave once they finish, after the first
    // pass: leaver's unfollow (its edge and its own count change) and joiner's follow.
    const db = app.database.db;
    await db.collection('following').deleteOne({ _f: 'leaver', _t: 'sus' });
    await db.collection('followers').deleteOne({ _f: 'sus', _t: 'leaver' });
    await db.collection<any>('follow_pairs').updateOne({ _id: 'leaver sus' }, { $set: { want: false, counted: false }, $inc: { v: 1, applied: 1 } });
    await users().updateOne({ _id: 'leaver' }, { $inc: { followingCount: -1 } });
    await db.collection<any>('following').insertOne({ _f: 'joiner', _t: 'sus' });
    await db.collection<any>('followers').insertOne({ _f: 'sus', _t: 'joiner' });
    await db.collection<any>('follow_pairs').insertOne({ _id: 'joiner sus', f: 'joiner', t: 'sus', want: true, v: 1, applied: 1, counted: true, lease: null, dirty: false, updatedAt: new Date() });
    await users().updateOne({ _id: 'joiner' }, { $inc: { followingCount: 1 } });
    expect([await following('leaver'), await following('joiner')]).toEqual([-1, 1]);

    // The second pass, brought forward.
    const tasks = db.collection<any>('fanout_tasks');
    const again = await tasks.findOne({ _id: { $regex: ':again$' } });
    expect(again).toMatchObject({ kind: 'suspend-account', later: true });
    await tasks.updateOne({ _id: again._id }, { $set: { runAt: new Date() } });
    for (let waited = 0; await tasks.findOne({ _id: again._id }); waited += 50) {
      if (waited > 20_000) throw new Error('the second pass did not run');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect([await following('leaver'), await following('stayer'), await following('joiner')]).toEqual([0, 0, 0]);

    await ok('mod', 'mutation { unsuspendAccount(handle: "sus") { handle } }');
    await app.settled();
    for (let waited = 0; (await users().countDocuments({ hidden: { $exists: true, $ne: [] } })) > 0; waited += 50) {
      if (waited > 20_000) throw new Error('the unsuspension did not finish');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // Exact: leaver follows no one, stayer and joiner follow the account again.
    expect([await following('leaver'), await following('stayer'), await following('joiner')]).toEqual([0, 1, 1]);
    expect((await ok('stayer', '{ user(handle: "sus") { followers { edges { node { handle } } } } }')).user.followers.edges.map((edge: any) => edge.node.handle)).toEqual(['joiner', 'stayer']);
  }, 60_000);
});
