import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answersAs, startTestApp, type TestApp } from '../support/testApp.js';

const strategies = ['fanout-on-read', 'time-buckets', 'sized-buckets', 'cache'] as const;
const reportMutation = `mutation($h: String!, $p: ID, $r: ReportReason!) { report(handle: $h, postId: $p, reason: $r) { id } }`;
const resolveMutation = `mutation($id: ID!, $a: ModerationAction!) { resolveReport(id: $id, action: $a) { state resolution } }`;

/**
 * A suspended account's posts exist for no one: whoever still holds the id of one cannot like,
 * repost, answer, quote or bookmark it, and its replies and quotes leave the counts of the posts
 * they answer and quote, in every timeline; unsuspending brings back exactly what there was.
 */
describe.each(strategies)('a suspended account\'s posts: %s', (strategy) => {
  let app: TestApp;
  const tokens: Record<string, string> = {};
  const ok = answersAs(() => app, tokens);
  const code = async (as: string, query: string) => (await app.gql(query, {}, tokens[as])).errors?.[0]?.extensions?.code;
  const countsOf = async (postId: string) => (await ok('fan', `{ post(id: "${postId}") { replyCount quoteCount } }`)).post;
  /** The texts of the replies and quotes auth is told of. */
  const toldOf = async () =>
    (await ok('auth', '{ notifications(first: 50, kinds: [REPLY, QUOTE]) { edges { node { kind post { text } } } } }')).notifications.edges
      .map((edge: any) => `${edge.node.kind} ${edge.node.post?.text}`)
      .sort();
  const inTimeline = async (postId: string) => {
    const edges = (await ok('fan', '{ timeline { edges { node { id replyCount quoteCount } } } }')).timeline.edges;
    const { replyCount, quoteCount } = edges.find((edge: any) => edge.node.id === postId).node;
    return { replyCount, quoteCount };
  };
  /** The suspension's second pass (15 s after the first), brought forward and waited for. */
  const secondPass = async () => {
    const tasks = app.database.db.collection<any>('fanout_tasks');
    const again = await tasks.findOne({ _id: { $regex: '^suspend-account:bad:.*:again$' } });
    if (!again) throw new Error('no second pass queued');
    await tasks.updateOne({ _id: again._id }, { $set: { runAt: new Date() } });
    for (let waited = 0; await tasks.findOne({ _id: again._id }); waited += 50) {
      if (waited > 20_000) throw new Error('the second pass did not run');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const unsuspended = async () => {
    await ok('mod', 'mutation { unsuspendAccount(handle: "bad") { handle } }');
    await app.settled();
    const content = app.database.db.collection<any>('content');
    for (let waited = 0; (await content.countDocuments({ sh: { $exists: true, $ne: [] } })) > 0; waited += 50) {
      if (waited > 20_000) throw new Error('the unsuspension did not finish');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // The suspension ended its tokens: it signs in again.
    tokens.bad = (await ok('bad', 'mutation { logIn(handle: "bad", password: "correct horse battery") { token } }')).logIn.token;
  };

  beforeAll(async () => {
    app = await startTestApp({ FEED_STRATEGY: strategy, STAFF_HANDLES: 'mod' });
    for (const handle of ['mod', 'auth', 'fan', 'bad']) tokens[handle] = await app.signUp(handle);
    await ok('fan', 'mutation { follow(handle: "auth") { handle } }');
  });
  afterAll(() => app?.stop());

  it('answers NOT_FOUND to a like, repost, reply, quote or bookmark of its post, and takes them again once unsuspended', async () => {
    const own = (await ok('bad', 'mutation { createPost(text: "by the suspended") { id } }')).createPost.id;
    await ok('mod', `mutation { suspend: resolveReport(id: "${(await ok('fan', reportMutation, { h: 'bad', r: 'SPAM' })).report.id}", action: SUSPEND_ACCOUNT) { state } }`);
    await app.settled();
    const acts = {
      like: `mutation { likePost(id: "${own}") { id } }`,
      repost: `mutation { repost(id: "${own}") { id } }`,
      reply: `mutation { createPost(text: "an answer", replyTo: "${own}") { id } }`,
      quote: `mutation { createPost(text: "a quote", quoteOf: "${own}") { id } }`,
      bookmark: `mutation { bookmark(id: "${own}") { id } }`,
    };
    for (const [act, query] of Object.entries(acts)) expect({ act, code: await code('fan', query) }).toEqual({ act, code: 'NOT_FOUND' });
    // Nothing was written: no reply or quote of fan's, no like, repost or bookmark.
    expect((await ok('fan', '{ user(handle: "fan") { posts { edges { node { text } } } } }')).user.posts.edges).toEqual([]);
    expect((await ok('fan', '{ user(handle: "fan") { bookmarks { edges { node { id } } } } }')).user.bookmarks.edges).toEqual([]);
    expect(await app.database.db.collection('likes').countDocuments({ u: 'fan' })).toBe(0);

    await unsuspended();
    expect((await ok('fan', acts.like)).likePost.id).toBe(own);
    expect((await ok('fan', acts.bookmark)).bookmark.id).toBe(own);
    expect((await ok('fan', `{ post(id: "${own}") { likeCount viewerHasBookmarked } }`)).post).toEqual({ likeCount: 1, viewerHasBookmarked: true });
  });

  it('takes its replies and quotes out of the counts of what they answer and quote, a removed one included, and brings back exactly what there is', async () => {
    const original = (await ok('auth', 'mutation { createPost(text: "answered") { id } }')).createPost.id;
    const replies: string[] = [];
    for (const text of ['first answer', 'second answer', 'third answer']) replies.push((await ok('bad', `mutation { createPost(text: "${text}", replyTo: "${original}") { id } }`)).createPost.id);
    await ok('bad', `mutation { createPost(text: "quoting", quoteOf: "${original}") { id } }`);
    await ok('fan', `mutation { createPost(text: "a fan's answer", replyTo: "${original}") { id } }`);
    await ok('fan', `mutation { createPost(text: "a fan's quote", quoteOf: "${original}") { id } }`);
    // A limited reply never counted; it must not be counted out either.
    await ok('bad', `mutation { createPost(text: "for followers", replyTo: "${original}", visibility: FOLLOWERS) { id } }`);
    await app.settled();
    const before = { replyCount: 4, quoteCount: 2 };
    expect(await countsOf(original)).toEqual(before);
    expect(await inTimeline(original)).toEqual(before);
    const told = await toldOf();
    expect(told).toEqual(expect.arrayContaining(['REPLY first answer', 'REPLY second answer', 'REPLY third answer', 'QUOTE quoting', "REPLY a fan's answer", "QUOTE a fan's quote"]));
    // Reported before the suspension; removed by staff while the account is suspended.
    const removal = (await ok('fan', reportMutation, { h: 'bad', p: replies[0], r: 'ABUSE' })).report.id;

    const report = (await ok('fan', reportMutation, { h: 'bad', r: 'SPAM' })).report.id;
    await ok('mod', resolveMutation, { id: report, a: 'SUSPEND_ACCOUNT' });
    await app.settled();
    const hidden = { replyCount: 1, quoteCount: 1 };
    expect(await countsOf(original)).toEqual(hidden);
    expect(await inTimeline(original)).toEqual(hidden);
    // What its replies and quotes told auth is shown no longer.
    expect(await toldOf()).toEqual(["QUOTE a fan's quote", "REPLY a fan's answer"]);
    expect((await ok('fan', `{ post(id: "${original}") { replies { edges { node { text } } } } }`)).post.replies.edges.map((edge: any) => edge.node.text)).toEqual(["a fan's answer"]);

    await ok('mod', resolveMutation, { id: removal, a: 'REMOVE_POST' });
    await app.settled();
    await secondPass();
    expect(await countsOf(original)).toEqual(hidden);
    expect(await inTimeline(original)).toEqual(hidden);
    // A new answer counts as ever meanwhile.
    await ok('fan', `mutation { createPost(text: "another fan answer", replyTo: "${original}") { id } }`);
    await app.settled();
    expect(await countsOf(original)).toEqual({ replyCount: 2, quoteCount: 1 });

    await unsuspended();
    const back = { replyCount: 4, quoteCount: 2 };
    expect(await countsOf(original)).toEqual(back);
    expect(await inTimeline(original)).toEqual(back);
    // Told again, but of the reply staff removed (and of fan's new answer as well).
    expect(await toldOf()).toEqual([...told.filter((text: string) => text !== 'REPLY first answer'), 'REPLY another fan answer'].sort());
    // Back for good: the author's own deletion of a reply counts it off once, as ever.
    expect((await ok('bad', `mutation { deletePost(id: "${replies[1]}") }`)).deletePost).toBe(true);
    await app.settled();
    expect(await countsOf(original)).toEqual({ replyCount: 3, quoteCount: 2 });
  }, 60_000);

  it("leaves its follows, likes and reposts out of the counts of others' notification groups, and counts them back exactly", async () => {
    const groups = async () => {
      const nodes = (await ok('auth', '{ notifications(first: 50) { edges { node { kind actorCount actors { handle } post { text } } } } }')).notifications.edges.map((edge: any) => edge.node);
      const of = (kind: string, text: string | null) => {
        const found = nodes.find((node: any) => node.kind === kind && (node.post?.text ?? null) === text);
        return found ? { actorCount: found.actorCount, actors: found.actors.map((actor: any) => actor.handle).sort() } : null;
      };
      return { follow: of('FOLLOW', null), likes: of('LIKE', 'liked by both'), reposts: of('REPOST', 'liked by both'), alone: of('LIKE', 'liked by the suspended alone') };
    };
    const both = (await ok('auth', 'mutation { createPost(text: "liked by both") { id } }')).createPost.id;
    const alone = (await ok('auth', 'mutation { createPost(text: "liked by the suspended alone") { id } }')).createPost.id;
    await ok('bad', 'mutation { follow(handle: "auth") { handle } }');
    for (const liker of ['bad', 'fan']) await ok(liker, `mutation { likePost(id: "${both}") { id } }`);
    await ok('bad', `mutation { repost(id: "${both}") { id } }`);
    await ok('bad', `mutation { likePost(id: "${alone}") { id } }`);
    await app.settled();
    const before = {
      follow: { actorCount: 2, actors: ['bad', 'fan'] },
      likes: { actorCount: 2, actors: ['bad', 'fan'] },
      reposts: { actorCount: 1, actors: ['bad'] },
      alone: { actorCount: 1, actors: ['bad'] },
    };
    expect(await groups()).toEqual(before);

    const report = (await ok('fan', reportMutation, { h: 'bad', r: 'SPAM' })).report.id;
    await ok('mod', resolveMutation, { id: report, a: 'SUSPEND_ACCOUNT' });
    await app.settled();
    const hidden = { follow: { actorCount: 1, actors: ['fan'] }, likes: { actorCount: 1, actors: ['fan'] }, reposts: null, alone: null };
    expect(await groups()).toEqual(hidden);
    // The second pass finds nothing to change: each group counted out once.
    await secondPass();
    expect(await groups()).toEqual(hidden);
    // Others still join and leave meanwhile.
    await ok('fan', `mutation { unlikePost(id: "${both}") { id } }`);
    await app.settled();
    expect((await groups()).likes).toBeNull();
    // The sweep's pass over what the unlike left: the group everyone shown left stays, for bad's like.
    await app.services.interactions.likes.pruneSettled();
    await ok('fan', `mutation { likePost(id: "${both}") { id } }`);
    await app.settled();
    expect((await groups()).likes).toEqual({ actorCount: 1, actors: ['fan'] });

    await unsuspended();
    const notifications = app.database.db.collection<any>('notifications');
    for (let waited = 0; (await notifications.countDocuments({ sh: { $exists: true, $ne: [] } })) > 0; waited += 50) {
      if (waited > 20_000) throw new Error('the unsuspension did not finish');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(await groups()).toEqual(before);
  }, 60_000);

  it('gives a group its count back when a like in flight left it after the first pass', async () => {
    const post = (await ok('auth', 'mutation { createPost(text: "liked then taken back") { id } }')).createPost.id;
    for (const liker of ['bad', 'fan']) await ok(liker, `mutation { likePost(id: "${post}") { id } }`);
    await app.settled();
    const report = (await ok('fan', reportMutation, { h: 'bad', r: 'SPAM' })).report.id;
    await ok('mod', resolveMutation, { id: report, a: 'SUSPEND_ACCOUNT' });
    await app.settled();
    const db = app.database.db;
    // bad's newest like: of this post.
    const edge = await db.collection<any>('likes').findOne({ u: 'bad', state: 'on', g: { $exists: true } }, { sort: { d: -1 } });
    expect(edge).toBeTruthy();
    const group = () => db.collection<any>('notifications').findOne({ _id: edge.g });
    expect((await group()).n).toBe(1);
    // What bad's unlike, which read the account before the mark, leaves once it lands after the
    // first pass: its edge off, its group's count one lower and its actor gone (the post's like count is not asked here).
    await db.collection<any>('likes').updateOne({ _id: edge._id }, { $set: { state: 'off' }, $unset: { g: '', ga: '' } });
    await db.collection<any>('notifications').updateOne({ _id: edge.g }, { $inc: { n: -1, v: 1 }, $pull: { a: { u: 'bad' } } } as any);
    expect((await group()).n).toBe(0);
    await secondPass();
    // The group counts fan alone, as it should.
    expect((await group()).n).toBe(1);
    await unsuspended();
    // Exact: fan alone likes the post.
    expect((await group()).n).toBe(1);
    const shown = (await ok('auth', '{ notifications(first: 50) { edges { node { kind actorCount actors { handle } post { text } } } } }')).notifications.edges
      .map((edge: any) => edge.node)
      .find((node: any) => node.kind === 'LIKE' && node.post?.text === 'liked then taken back');
    expect(shown).toMatchObject({ actorCount: 1, actors: [{ handle: 'fan' }] });
  }, 60_000);
});
