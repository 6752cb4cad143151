import { ObjectId } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/testApp.js';
import { act, createPost, follow, like, listed, notificationsOf, repost, undoRepost, unfollow, unlike } from './support.js';
import { apiListId, internalHex, internalId } from '../support/ids.js';

// Replies, mentions and deletions travel with the post's own queued work, which differs between
// fanout on read (none) and the strategies that write timelines.
const strategies = ['fanout-on-read', 'time-buckets'];

describe.each(strategies)('who is told what, %s', (strategy) => {
  let app: TestApp;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    app = await startTestApp({ FEED_STRATEGY: strategy });
    for (const handle of ['ann', 'bob', 'cat', 'dan', 'eve', 'fay']) tokens[handle] = await app.signUp(handle);
  });
  afterAll(() => app?.stop());

  it('tells the followed, the liked and reposted author, the replied-to author and each mentioned user', async () => {
    const post = await createPost(app, tokens.ann!, 'hello world');
    await follow(app, tokens.bob!, 'ann');
    await like(app, tokens.bob!, post);
    await repost(app, tokens.cat!, post);
    const reply = await createPost(app, tokens.dan!, 'nice one @ann, says @eve and @nobody_here', post);

    expect(await listed(app, tokens.ann!)).toEqual(['REPLY 1 [dan]', 'REPOST 1 [cat]', 'LIKE 1 [bob]', 'FOLLOW 1 [bob]']);
    // The parent's author is told of the reply once, not also of the mention; an unknown handle tells no one.
    expect(await listed(app, tokens.eve!)).toEqual(['MENTION 1 [dan]']);
    const { items } = await notificationsOf(app, tokens.ann!);
    expect(items.map((item) => item.post)).toEqual([reply, post, post, null]);
    expect(await listed(app, tokens.bob!)).toEqual([]);
    expect(await listed(app, tokens.dan!)).toEqual([]);
  });

  it('never tells of one’s own action', async () => {
    const post = await createPost(app, tokens.fay!, 'talking to @fay myself');
    await like(app, tokens.fay!, post);
    await createPost(app, tokens.fay!, 'and replying to me', post);
    expect(await listed(app, tokens.fay!)).toEqual([]);
  });
});

describe('grouping', () => {
  let app: TestApp;
  const tokens: Record<string, string> = {};
  const handles = ['gia', 'hal', 'ivy', 'jon', 'kim', 'leo'];

  beforeAll(async () => {
    app = await startTestApp();
    for (const handle of handles) tokens[handle] = await app.signUp(handle);
  });
  afterAll(() => app?.stop());

  it('groups likes and reposts by post, raises a group when someone joins, and takes undone actors out', async () => {
    const first = await createPost(app, tokens.gia!, 'first');
    const second = await createPost(app, tokens.gia!, 'second');
    await like(app, tokens.hal!, first);
    await like(app, tokens.ivy!, first);
    await like(app, tokens.hal!, second);
    await repost(app, tokens.jon!, first);
    expect(await listed(app, tokens.gia!)).toEqual(['REPOST 1 [jon]', 'LIKE 1 [hal]', 'LIKE 2 [ivy,hal]']);

    // A new actor raises the first post's likes to the top, newest actor first.
    await like(app, tokens.kim!, first);
    expect(await listed(app, tokens.gia!)).toEqual(['LIKE 3 [kim,ivy,hal]', 'REPOST 1 [jon]', 'LIKE 1 [hal]']);

    // Liking again changes nothing; unliking takes the actor out; the last one out removes the group.
    await like(app, tokens.kim!, first);
    await unlike(app, tokens.ivy!, first);
    await unlike(app, tokens.hal!, second);
    await undoRepost(app, tokens.jon!, first);
    expect(await listed(app, tokens.gia!)).toEqual(['LIKE 2 [kim,hal]']);
    // The group counts exactly the likes that stand.
    const members = await app.database.db.collection('likes').find({ g: app.services.memberships.postGroup('LIKE', internalId(first)) }).toArray();
    expect(members.map((edge) => edge.u).sort()).toEqual(['hal', 'kim']);
  });

  it('groups follows per UTC day and takes an unfollower out', async () => {
    const { memberships: notifications } = app.services;
    const realNow = notifications.now;
    try {
      notifications.now = () => new Date(Date.now() - 24 * 3600_000);
      await follow(app, tokens.hal!, 'leo');
      await follow(app, tokens.ivy!, 'leo');
      notifications.now = realNow;
      await follow(app, tokens.jon!, 'leo');
      await follow(app, tokens.kim!, 'leo');
      expect(await listed(app, tokens.leo!)).toEqual(['FOLLOW 2 [kim,jon]', 'FOLLOW 2 [ivy,hal]']);
      await unfollow(app, tokens.ivy!, 'leo');
      await unfollow(app, tokens.kim!, 'leo');
      await unfollow(app, tokens.jon!, 'leo');
      expect(await listed(app, tokens.leo!)).toEqual(['FOLLOW 1 [hal]']);
      // Following again joins today's group: the old one keeps its day.
      await follow(app, tokens.ivy!, 'leo');
      expect(await listed(app, tokens.leo!)).toEqual(['FOLLOW 1 [ivy]', 'FOLLOW 1 [hal]']);
    } finally {
      notifications.now = realNow;
    }
  });

  it('never groups replies and mentions', async () => {
    const post = await createPost(app, tokens.kim!, 'ask me');
    await createPost(app, tokens.hal!, 'one', post);
    await createPost(app, tokens.hal!, 'two', post);
    await createPost(app, tokens.ivy!, 'hey @kim');
    await createPost(app, tokens.ivy!, 'hey again @kim');
    expect(await listed(app, tokens.kim!)).toEqual(['MENTION 1 [ivy]', 'MENTION 1 [ivy]', 'REPLY 1 [hal]', 'REPLY 1 [hal]']);
    expect(await listed(app, tokens.kim!, { kinds: ['REPLY'] })).toEqual(['REPLY 1 [hal]', 'REPLY 1 [hal]']);
  });
});

describe.each(strategies)('mutes, blocks and deletions, %s', (strategy) => {
  let app: TestApp;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    app = await startTestApp({ FEED_STRATEGY: strategy });
    for (const handle of ['mia', 'ned', 'oli', 'pam', 'quo', 'ray']) tokens[handle] = await app.signUp(handle);
  });
  afterAll(() => app?.stop());

  it('tells nothing from an account the recipient muted or blocked, or that blocked the recipient, and hides what was told', async () => {
    const post = await createPost(app, tokens.mia!, 'mia writes');
    await like(app, tokens.ned!, post);
    await like(app, tokens.oli!, post);
    await like(app, tokens.pam!, post);
    await createPost(app, tokens.ned!, 'hi @mia');
    await createPost(app, tokens.oli!, 'yo', post);
    expect(await listed(app, tokens.mia!)).toEqual(['REPLY 1 [oli]', 'MENTION 1 [ned]', 'LIKE 3 [pam,oli,ned]']);

    await act(app, tokens.mia!, 'mute(handle: $handle) { handle }', { handle: 'ned' });
    await act(app, tokens.mia!, 'block(handle: $handle) { handle }', { handle: 'oli' });
    await act(app, tokens.pam!, 'block(handle: $handle) { handle }', { handle: 'mia' });
    expect(await listed(app, tokens.mia!)).toEqual([]);

    // New actions of theirs tell nothing either (the blocked ones cannot act at all).
    await createPost(app, tokens.ned!, 'still @mia');
    await follow(app, tokens.ned!, 'mia');
    await like(app, tokens.quo!, post);
    expect(await listed(app, tokens.mia!)).toEqual(['LIKE 1 [quo]']);
  });

  it('removes a deleted post’s notifications, and those its reply or mention caused', async () => {
    const post = await createPost(app, tokens.ray!, 'to be deleted');
    await like(app, tokens.quo!, post);
    await repost(app, tokens.pam!, post);
    const reply = await createPost(app, tokens.quo!, 'reply to @pam', post);
    const kept = await createPost(app, tokens.ray!, 'kept');
    await like(app, tokens.quo!, kept);
    expect(await listed(app, tokens.ray!)).toEqual(['LIKE 1 [quo]', 'REPLY 1 [quo]', 'REPOST 1 [pam]', 'LIKE 1 [quo]']);
    expect(await listed(app, tokens.pam!)).toEqual(['MENTION 1 [quo]']);

    await act(app, tokens.quo!, 'deletePost(id: $id)', { id: reply });
    expect(await listed(app, tokens.pam!)).toEqual([]);
    await act(app, tokens.ray!, 'deletePost(id: $id)', { id: post });
    expect(await listed(app, tokens.ray!)).toEqual(['LIKE 1 [quo]']);
    const about = (id: string) => ({ p: internalId(id) });
    for (const id of [post, reply]) {
      expect(await app.database.db.collection('likes').countDocuments(about(id))).toBe(0);
      expect(await app.database.db.collection('notifications').countDocuments(about(id))).toBe(0);
    }
  });

  it('takes a deleted account out of every group and deletes its own notifications', async () => {
    const tokensB: Record<string, string> = {};
    for (const handle of ['sam', 'tia', 'uma']) tokensB[handle] = await app.signUp(handle);
    const post = await createPost(app, tokensB.sam!, 'sam writes');
    await like(app, tokensB.tia!, post);
    await like(app, tokensB.uma!, post);
    await repost(app, tokensB.tia!, post);
    await follow(app, tokensB.tia!, 'sam');
    await createPost(app, tokensB.tia!, 'cc @sam');
    const tiaPost = await createPost(app, tokensB.tia!, 'tia writes');
    await like(app, tokensB.sam!, tiaPost);
    await follow(app, tokensB.uma!, 'tia');
    await createPost(app, tokensB.uma!, 'hello @tia');
    expect(await listed(app, tokensB.tia!)).toEqual(['MENTION 1 [uma]', 'FOLLOW 1 [uma]', 'LIKE 1 [sam]']);
    expect(await listed(app, tokensB.sam!)).toEqual(['MENTION 1 [tia]', 'FOLLOW 1 [tia]', 'REPOST 1 [tia]', 'LIKE 2 [uma,tia]']);

    await act(app, tokensB.tia!, 'deleteAccount(password: "correct horse battery")');
    expect(await listed(app, tokensB.sam!)).toEqual(['LIKE 1 [uma]']);
    expect(await app.database.db.collection('notifications').countDocuments({ r: 'tia' })).toBe(0);
    expect(await app.database.db.collection('likes').countDocuments({ u: 'tia', state: { $ne: 'off' } })).toBe(0);
    expect(await app.database.db.collection('follow_pairs').countDocuments({ $or: [{ f: 'tia' }, { t: 'tia' }] })).toBe(0);
  });
});
