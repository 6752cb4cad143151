import type { CommandStartedEvent, CommandSucceededEvent } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/testApp.js';

describe('the follow graph', () => {
  let app: TestApp;
  const tokens: Record<string, string> = {};

  const counts = async (handle: string) =>
    (await app.gql(`query($h: String!) { user(handle: $h) { followerCount followingCount } }`, { h: handle })).data.user;
  const edges = async (follower: string, followee: string) => ({
    following: await app.database.db.collection('following').countDocuments({ _f: follower, _t: followee }),
    followers: await app.database.db.collection('followers').countDocuments({ _f: followee, _t: follower }),
  });

  beforeAll(async () => {
    app = await startTestApp();
    for (const handle of ['gina', 'hank', 'ivan', 'jane']) tokens[handle] = await app.signUp(handle);
  });
  afterAll(() => app?.stop());

  it('50 concurrent follows of the same pair leave one edge each way and counts of 1', async () => {
    const results = await Promise.all(
      Array.from({ length: 50 }, () => app.gql('mutation { follow(handle: "hank") { handle viewerIsFollowing } }', {}, tokens.gina)),
    );
    expect(results.every((r) => r.errors === undefined && r.data.follow.viewerIsFollowing === true)).toBe(true);
    expect(await edges('gina', 'hank')).toEqual({ following: 1, followers: 1 });
    expect(await counts('gina')).toEqual({ followerCount: 0, followingCount: 1 });
    expect(await counts('hank')).toEqual({ followerCount: 1, followingCount: 0 });
  });

  it('50 concurrent unfollows leave no edge and counts of 0', async () => {
    await Promise.all(
      Array.from({ length: 50 }, () => app.gql('mutation { unfollow(handle: "hank") { handle } }', {}, tokens.gina)),
    );
    expect(await edges('gina', 'hank')).toEqual({ following: 0, followers: 0 });
    expect(await counts('gina')).toEqual({ followerCount: 0, followingCount: 0 });
    expect(await counts('hank')).toEqual({ followerCount: 0, followingCount: 0 });
  });

  it('keeps counts exact when many users follow and unfollow one user at once', async () => {
    const fans = ['gina', 'ivan', 'jane'];
    await Promise.all(fans.flatMap((fan) => [1, 2, 3].map(() => app.gql('mutation { follow(handle: "hank") { handle } }', {}, tokens[fan]))));
    expect(await counts('hank')).toEqual({ followerCount: 3, followingCount: 0 });
    await Promise.all(['ivan', 'jane'].map((fan) => app.gql('mutation { unfollow(handle: "hank") { handle } }', {}, tokens[fan])));
    expect(await counts('hank')).toEqual({ followerCount: 1, followingCount: 0 });
    await app.gql('mutation { unfollow(handle: "hank") { handle } }', {}, tokens.gina);
  });

  const pairs = () => app.database.db.collection<any>('follow_pairs');
  const pendingTokens = async (handle: string) =>
    ((await app.database.db.collection<any>('users').findOne({ _id: handle }))?.pendingCounts ?? []) as string[];

  it('finishes a follow whose request died mid-way on the next request for the pair, counting each user once', async () => {
    // What a request killed between its count writes leaves: the wish recorded, one edge written,
    // the count change begun, the follower counted (with its token), the followee not yet.
    const past = new Date(Date.now() - 60_000);
    await pairs().insertOne({
      _id: 'ivan jane', f: 'ivan', t: 'jane', want: true, v: 1, applied: 0, counted: false,
      countChange: { token: 'died-here', delta: 1, applied: false },
      lease: { owner: 'a-dead-request', until: past }, dirty: true, updatedAt: past,
    });
    await app.database.db.collection('following').insertOne({ _f: 'ivan', _t: 'jane' });
    await app.database.db
      .collection<{ _id: string; pendingCounts: string[] }>('users')
      .updateOne({ _id: 'ivan' }, { $inc: { followingCount: 1 }, $push: { pendingCounts: 'died-here' } });

    await app.gql('mutation { follow(handle: "jane") { handle } }', {}, tokens.ivan);
    expect(await edges('ivan', 'jane')).toEqual({ following: 1, followers: 1 });
    expect(await counts('ivan')).toMatchObject({ followingCount: 1 });
    expect(await counts('jane')).toMatchObject({ followerCount: 1 });
    // The finished change's token leaves both users with the sweep's next pruning pass.
    await app.services.feed.repairStalled();
    expect(await pendingTokens('ivan')).toEqual([]);
    expect(await pendingTokens('jane')).toEqual([]);
    expect(await pairs().findOne({ _id: 'ivan jane' })).toMatchObject({ want: true, applied: 2, v: 2, counted: true, dirty: false, lease: null });
  });

  it('finishes an unfollow whose request died between its count writes on the next request, counting each user once', async () => {
    await app.gql('mutation { follow(handle: "jane") { handle } }', {}, tokens.gina);
    const [gina, jane] = [await counts('gina'), await counts('jane')];
    const before = (await pairs().findOne({ _id: 'gina jane' }))!;
    // What an unfollow killed between its count writes leaves: the wish recorded, one edge removed,
    // the count change begun, the follower uncounted (with its token), the followee not yet.
    const past = new Date(Date.now() - 60_000);
    await pairs().updateOne(
      { _id: 'gina jane' },
      {
        $set: { want: false, v: before.v + 1, dirty: true, updatedAt: past, countChange: { token: 'unfollow-died', delta: -1, applied: false }, lease: { owner: 'a-dead-request', until: past } },
      },
    );
    await app.database.db.collection('following').deleteOne({ _f: 'gina', _t: 'jane' });
    await app.database.db
      .collection<{ _id: string; pendingCounts: string[] }>('users')
      .updateOne({ _id: 'gina' }, { $inc: { followingCount: -1 }, $push: { pendingCounts: 'unfollow-died' } });

    await app.gql('mutation { unfollow(handle: "jane") { handle } }', {}, tokens.gina);
    expect(await edges('gina', 'jane')).toEqual({ following: 0, followers: 0 });
    expect(await counts('gina')).toMatchObject({ followingCount: gina.followingCount - 1 });
    expect(await counts('jane')).toMatchObject({ followerCount: jane.followerCount - 1 });
    // The finished change's token, and the follow's before it, leave both users with the sweep's next pruning pass.
    await app.services.feed.repairStalled();
    expect(await pendingTokens('gina')).toEqual([]);
    expect(await pendingTokens('jane')).toEqual([]);
    expect(await pairs().findOne({ _id: 'gina jane' })).toMatchObject({ want: false, counted: false, dirty: false, lease: null });
  });

  it('finishes an unfollow whose request died, without any further request, through the repair sweep', async () => {
    // The request recorded "unfollow" and removed one edge, then died before counting.
    const past = new Date(Date.now() - 60_000);
    await pairs().updateOne(
      { _id: 'ivan jane' },
      { $set: { want: false, v: 3, dirty: true, updatedAt: past, lease: { owner: 'another-dead-request', until: past } } },
    );
    await app.database.db.collection('followers').deleteOne({ _f: 'jane', _t: 'ivan' });

    for (let waited = 0; (await pairs().findOne({ _id: 'ivan jane' }))?.dirty; waited += 50) {
      if (waited > 15_000) throw new Error('the repair sweep did not finish the unfollow');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(await edges('ivan', 'jane')).toEqual({ following: 0, followers: 0 });
    expect(await counts('ivan')).toMatchObject({ followingCount: 0 });
    expect(await counts('jane')).toMatchObject({ followerCount: 0 });
  });

  it.each([
    ['follow, then unfollow', ['follow', 'unfollow']],
    ['unfollow, then follow', ['unfollow', 'follow']],
  ])('settles a follow and an unfollow recorded while the pair is busy on the later one (%s)', async (_name, order) => {
    const pairId = 'jane hank';
    await app.gql('mutation { follow(handle: "hank") { handle } }', {}, tokens.jane);
    const before = (await pairs().findOne({ _id: pairId }))!;
    // Another request holds the pair: both new requests record their wish, in this order, and wait.
    await pairs().updateOne({ _id: pairId }, { $set: { lease: { owner: 'a-slow-request', until: new Date(Date.now() + 60_000) } } });
    const requests: Promise<unknown>[] = [];
    for (const [index, mutation] of order.entries()) {
      requests.push(app.gql(`mutation { ${mutation}(handle: "hank") { handle } }`, {}, tokens.jane));
      while ((await pairs().findOne({ _id: pairId }))!.v < before.v + index + 1) await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await pairs().updateOne({ _id: pairId }, { $set: { lease: null } });
    await Promise.all(requests);

    const wantsFollow = order.at(-1) === 'follow';
    expect(await pairs().findOne({ _id: pairId })).toMatchObject({ want: wantsFollow, v: before.v + 2, applied: before.v + 2, dirty: false });
    const expected = wantsFollow ? 1 : 0;
    expect(await edges('jane', 'hank')).toEqual({ following: expected, followers: expected });
    expect(await counts('hank')).toMatchObject({ followerCount: expected });
    expect(await counts('jane')).toMatchObject({ followingCount: expected });
    await app.gql('mutation { unfollow(handle: "hank") { handle } }', {}, tokens.jane);
  });

  it('leaves a pair it finds settled untouched: no lease that a crash could leave holding it', async () => {
    const pairId = 'gina jane';
    await app.gql('mutation { follow(handle: "jane") { handle } }', {}, tokens.gina);
    const before = (await pairs().findOne({ _id: pairId }))!;
    // Every lease the request takes on the pair: lease writes may be sent, but while another holds
    // the pair, or once it finds the pair applied, none may take it.
    const leaseWrites = new Set<number>();
    const leases: unknown[] = [];
    const sent = (event: CommandStartedEvent) => {
      const update = event.commandName === 'findAndModify' && event.command.findAndModify === 'follow_pairs' ? event.command.update : null;
      if (update?.$set?.lease) leaseWrites.add(event.requestId);
    };
    const answered = (event: CommandSucceededEvent) => {
      const taken = leaseWrites.has(event.requestId) ? (event.reply as { value: { lease: unknown } | null }).value : null;
      if (taken) leases.push(taken.lease);
    };
    app.database.client.on('commandStarted', sent);
    app.database.client.on('commandSucceeded', answered);
    // Whether the request next polls the lease or reads the pair depends on timing: a few rounds.
    const rounds = 5;
    try {
      for (let round = 1; round <= rounds; round++) {
        // Another request holds the pair: this follow records its wish and waits for it.
        await pairs().updateOne({ _id: pairId }, { $set: { lease: { owner: 'a-slow-request', until: new Date(Date.now() + 60_000) } } });
        const waiting = app.gql('mutation { follow(handle: "jane") { handle } }', {}, tokens.gina);
        while ((await pairs().findOne({ _id: pairId }))!.v < before.v + round) await new Promise((resolve) => setTimeout(resolve, 5));
        // The holder applies the wish and lets go, as its loop does.
        await pairs().updateOne({ _id: pairId }, { $set: { applied: before.v + round, dirty: false, lease: null } });
        expect((await waiting).errors).toBeUndefined();
      }
    } finally {
      app.database.client.off('commandStarted', sent);
      app.database.client.off('commandSucceeded', answered);
    }
    expect(leases).toEqual([]);
    expect(await pairs().findOne({ _id: pairId })).toMatchObject({ v: before.v + rounds, applied: before.v + rounds, dirty: false, lease: null });
  });

  it('answers edge lists from the covered { _f, _t } index', async () => {
    const indexes = await app.database.db.collection('followers').indexes();
    expect(indexes.find((index) => index.name === 'from_to')).toMatchObject({ key: { _f: 1, _t: 1 }, unique: true });
    const commands = await app.commandsDuring(() => app.gql('{ user(handle: "hank") { following { totalCount } followers { totalCount } } }'));
    const edgeReads = commands.filter((c) => c.commandName === 'find' && ['followers', 'following'].includes(c.command.find));
    expect(edgeReads).toHaveLength(2);
    for (const read of edgeReads) expect(read.command.projection).toEqual({ _id: 0, _t: 1 });
  });
});
