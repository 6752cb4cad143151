import { newPostId } from '../../src/records/posts.js';
import { ObjectId } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertFollowers } from '../support/bulkGraph.js';
import { startTestApp, type TestApp } from '../support/testApp.js';
import { liveClient, subscribePostRemoved, subscriptionsOpen } from '../live/liveClient.js';
import { internalHex, internalId } from '../support/ids.js';

const password = 'correct horse battery';

describe('deleteAccount', () => {
  let app: TestApp;
  const tokens: Record<string, string> = {};
  const gql = (handle: string | null, query: string, variables: Record<string, unknown> = {}) =>
    app.gql(query, variables, handle ? tokens[handle] : undefined);
  const ok = async (handle: string, query: string, variables: Record<string, unknown> = {}) => {
    const result = await gql(handle, query, variables);
    if (result.errors) throw new Error(JSON.stringify(result.errors));
    return result.data;
  };
  const post = async (handle: string, text: string, replyTo?: string): Promise<string> =>
    (await ok(handle, 'mutation($t: String!, $r: ID) { createPost(text: $t, replyTo: $r) { id } }', { t: text, r: replyTo ?? null })).createPost.id;
  const counts = async (id: string) => (await ok('fan', `{ post(id: "${id}") { likeCount repostCount replyCount } }`)).post;
  const user = async (handle: string) => (await ok('fan', `{ user(handle: "${handle}") { followerCount followingCount } }`)).user;

  beforeAll(async () => {
    app = await startTestApp({ FEED_STRATEGY: 'sized-buckets' });
    for (const handle of ['doomed', 'fan', 'idol', 'bystander']) tokens[handle] = await app.signUp(handle);
  });
  afterAll(() => app?.stop());

  it('removes the user, their posts everywhere, their edges and interactions, and frees the handle', async () => {
    const db = app.database.db;
    await ok('idol', 'mutation { block(handle: "doomed") { handle } }');
    await ok('idol', 'mutation { unblock(handle: "doomed") { handle } }');
    await ok('bystander', 'mutation { block(handle: "doomed") { handle } }');
    await ok('bystander', 'mutation { unblock(handle: "doomed") { handle } }');
    await ok('fan', 'mutation { follow(handle: "doomed") { handle } }');
    await ok('bystander', 'mutation { follow(handle: "doomed") { handle } }');
    await ok('doomed', 'mutation { follow(handle: "idol") { handle } }');
    await ok('bystander', 'mutation { mute(handle: "doomed") { handle } }');
    await ok('doomed', 'mutation { mute(handle: "fan") { handle } }');

    const idolPost = await post('idol', 'idol speaks');
    const doomedPosts = [await post('doomed', 'first words'), await post('doomed', 'last words')];
    await post('doomed', 'a reply to idol', idolPost);
    await ok('doomed', `mutation { likePost(id: "${idolPost}") { id } }`);
    await ok('doomed', `mutation { repost(id: "${idolPost}") { id } }`);
    await ok('fan', `mutation { likePost(id: "${doomedPosts[0]}") { id } }`);
    await ok('fan', `mutation { repost(id: "${doomedPosts[0]}") { id } }`);
    const fanReply = await post('fan', 'a reply to doomed', doomedPosts[1]);
    await app.settled();
    expect(await counts(idolPost)).toEqual({ likeCount: 1, repostCount: 1, replyCount: 1 });

    const live = liveClient(app, tokens.fan!);
    const removed = subscribePostRemoved(live);
    await subscriptionsOpen(app, 1);

    const wrong = await gql('doomed', 'mutation { deleteAccount(password: "not the password") }');
    expect(wrong.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(await user('doomed')).toEqual({ followerCount: 2, followingCount: 1 });
    expect((await gql(null, `mutation { deleteAccount(password: "${password}") }`)).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');

    expect(await ok('doomed', `mutation { deleteAccount(password: "${password}") }`)).toEqual({ deleteAccount: true });
    await app.settled();

    // Old tokens stop working; the user and their posts are gone for everyone.
    const stale = await gql('doomed', '{ timeline { edges { cursor } } }');
    expect(stale.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect((await ok('fan', '{ user(handle: "doomed") { handle } }')).user).toBeNull();
    expect(await db.collection('content').countDocuments({ $or: [{ _a: 'doomed' }, { '_o._a': 'doomed' }] })).toBe(0);
    expect(await db.collection('sized_buckets').countDocuments({ $or: [{ _u: 'doomed' }, { '_c._a': 'doomed' }, { '_c._o._a': 'doomed' }] })).toBe(0);
    const fanTimeline = (await ok('fan', '{ timeline(first: 50) { edges { node { id author { handle } } } } }')).timeline.edges;
    expect(fanTimeline.map((edge: any) => edge.node.id)).toEqual([fanReply]);
    // Followers heard about each removed post.
    await removed.waitFor(2);
    expect(removed.results).toEqual(expect.arrayContaining(doomedPosts));
    removed.stop();
    await live.dispose();

    // Counts fixed on both sides of every edge and interaction; replies to idol stay counted only while they exist.
    expect(await counts(idolPost)).toEqual({ likeCount: 0, repostCount: 0, replyCount: 0 });
    expect(await user('fan')).toEqual({ followerCount: 0, followingCount: 0 });
    expect(await user('bystander')).toEqual({ followerCount: 0, followingCount: 0 });
    expect(await user('idol')).toEqual({ followerCount: 0, followingCount: 0 });
    expect((await ok('fan', `{ post(id: "${fanReply}") { replyTo { id } } }`)).post.replyTo).toBeNull();
    for (const name of ['following', 'followers']) {
      expect(await db.collection(name).countDocuments({ $or: [{ _f: 'doomed' }, { _t: 'doomed' }] })).toBe(0);
    }
    for (const name of ['likes', 'reposts']) expect(await db.collection(name).countDocuments({ u: 'doomed' })).toBe(0);
    expect(await db.collection('reader_filters').countDocuments({ $or: [{ _id: 'doomed' as never }, { muted: 'doomed' }, { blocked: 'doomed' }, { blockedBy: 'doomed' }] })).toBe(0);

    // The handle is free, and the new account inherits nothing.
    tokens.doomed = await app.signUp('doomed', 'a brand new password');
    expect((await ok('doomed', '{ viewer { followerCount followingCount posts { edges { cursor } } } }')).viewer).toEqual({
      followerCount: 0,
      followingCount: 0,
      posts: { edges: [] },
    });
    expect((await ok('bystander', '{ user(handle: "doomed") { viewerHasMuted viewerIsFollowing } }')).user).toEqual({ viewerHasMuted: false, viewerIsFollowing: false });
  });

  it('removes an account whose repost a dead request left half-made', async () => {
    const db = app.database.db;
    tokens.halfway = await app.signUp('halfway');
    const idolPost = await post('idol', 'reposted halfway');
    // What a repost request killed before the repost's entry was made leaves: its edge, still being added.
    const past = new Date(Date.now() - 60_000);
    await db.collection<any>('reposts').insertOne({
      _id: `${internalHex(idolPost)}:halfway`, p: internalId(idolPost), u: 'halfway', state: 'adding', token: 'died-here', at: past, entry: newPostId('halfway'), d: past,
    });

    expect(await ok('halfway', `mutation { deleteAccount(password: "${password}") }`)).toEqual({ deleteAccount: true });
    await app.settled();
    expect(await db.collection('users').countDocuments({ _id: 'halfway' as never })).toBe(0);
    expect(await db.collection('reposts').countDocuments({ u: 'halfway' })).toBe(0);
    expect(await db.collection('content').countDocuments({ '_o._a': 'idol', _a: 'halfway' })).toBe(0);
    expect(await counts(idolPost)).toMatchObject({ repostCount: 0 });
  });

  it('deletes an account with 5,000 followers through the queue, every follower fixed', async () => {
    const db = app.database.db;
    tokens.famous = await app.signUp('famous');
    const fans = Array.from({ length: 5000 }, (_, i) => `famous_fan_${String(i).padStart(4, '0')}`);
    await insertFollowers(db, 'famous', fans);
    const posts = [await post('famous', 'hello everyone'), await post('famous', 'goodbye everyone')];
    await app.settled(60_000);
    expect(await db.collection('sized_buckets').countDocuments({ '_c._id': internalId(posts[0]!) })).toBeGreaterThanOrEqual(5000);

    expect(await ok('famous', `mutation { deleteAccount(password: "${password}") }`)).toEqual({ deleteAccount: true });
    await app.settled(120_000);
    expect(await db.collection('users').countDocuments({ _id: 'famous' as never })).toBe(0);
    expect(await db.collection('followers').countDocuments({ _f: 'famous' })).toBe(0);
    expect(await db.collection('following').countDocuments({ _t: 'famous' })).toBe(0);
    expect(await db.collection('users').countDocuments({ _id: { $in: fans as never[] }, followingCount: { $ne: 0 } })).toBe(0);
    expect(await db.collection('sized_buckets').countDocuments({ '_c._a': 'famous' })).toBe(0);
    expect(await db.collection('content').countDocuments({ _a: 'famous' })).toBe(0);
  }, 180_000);
});

describe('an account while it is being removed', () => {
  let app: TestApp;
  // No workers: the removal stays where the request leaves it, the account marked and its posts still stored.
  beforeAll(async () => {
    app = await startTestApp({ FANOUT_WORKERS: '0' });
  });
  afterAll(() => app?.stop());

  it('is gone from replies, post(id) and replyTo already, and reply pages stay whole', async () => {
    const fan = await app.signUp('mid_fan');
    const going = await app.signUp('mid_going');
    const postedBy = async (token: string, text: string, replyTo?: string) =>
      (await app.gql('mutation($t: String!, $r: ID) { createPost(text: $t, replyTo: $r) { id } }', { t: text, r: replyTo ?? null }, token)).data.createPost.id as string;
    const question = await postedBy(fan, 'a question');
    const goingPost = await postedBy(going, 'soon gone');
    await postedBy(going, 'a first answer', question);
    await postedBy(going, 'a second answer', question);
    const kept = [await postedBy(fan, 'my own answer', question), await postedBy(fan, 'and another', question)];
    const fanReply = await postedBy(fan, 'answering the one going', goingPost);

    expect((await app.gql(`mutation { deleteAccount(password: "${password}") }`, {}, going)).data).toEqual({ deleteAccount: true });
    expect(await app.database.db.collection('content').countDocuments({ _a: 'mid_going' })).toBe(3);

    const replies = await app.gql(`{ post(id: "${question}") { replies(first: 2) { edges { node { id author { handle } } } pageInfo { hasNextPage } } } }`, {}, fan);
    expect(replies.errors).toBeUndefined();
    expect(replies.data.post.replies.edges.map((edge: any) => edge.node.id)).toEqual(kept);
    expect(replies.data.post.replies.pageInfo.hasNextPage).toBe(false);
    const gone = await app.gql(`{ post(id: "${goingPost}") { id author { handle } } }`, {}, fan);
    expect(gone).toMatchObject({ data: { post: null } });
    expect(gone.errors).toBeUndefined();
    const answer = await app.gql(`{ post(id: "${fanReply}") { text replyTo { id } } }`, {}, fan);
    expect(answer.errors).toBeUndefined();
    expect(answer.data.post).toEqual({ text: 'answering the one going', replyTo: null });
  });
});

