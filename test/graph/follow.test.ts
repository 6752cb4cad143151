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

  it('repairs a follow that crashed between its two edge writes on the next follow of the pair', async () => {
    // The state a crash leaves: the "following" edge and its count written, the "followers" edge not.
    await app.database.db.collection('following').insertOne({ _f: 'ivan', _t: 'jane' });
    await app.database.db.collection('users').updateOne({ _id: 'ivan' as never }, { $inc: { followingCount: 1 } });
    expect(await edges('ivan', 'jane')).toEqual({ following: 1, followers: 0 });

    await app.gql('mutation { follow(handle: "jane") { handle } }', {}, tokens.ivan);
    expect(await edges('ivan', 'jane')).toEqual({ following: 1, followers: 1 });
    expect(await counts('ivan')).toMatchObject({ followingCount: 1 });
    expect(await counts('jane')).toMatchObject({ followerCount: 1 });
  });

  it('repairs an unfollow that crashed between its two edge writes on the next unfollow of the pair', async () => {
    await app.database.db.collection('following').deleteOne({ _f: 'ivan', _t: 'jane' });
    await app.database.db.collection('users').updateOne({ _id: 'ivan' as never }, { $inc: { followingCount: -1 } });
    expect(await edges('ivan', 'jane')).toEqual({ following: 0, followers: 1 });

    await app.gql('mutation { unfollow(handle: "jane") { handle } }', {}, tokens.ivan);
    expect(await edges('ivan', 'jane')).toEqual({ following: 0, followers: 0 });
    expect(await counts('ivan')).toMatchObject({ followingCount: 0 });
    expect(await counts('jane')).toMatchObject({ followerCount: 0 });
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
