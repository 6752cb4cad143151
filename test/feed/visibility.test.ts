import { ObjectId } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { feedStrategies, timelineContentModes } from '../../src/config.js';
import type { TimelineEntry } from '../../src/feed/timelineEntry.js';
import { passesGraph, type Reader } from '../../src/feed/visibility.js';
import { ReaderView, type ReaderFiltersDocument } from '../../src/graph/readerView.js';
import { newBody } from '../../src/records/posts.js';
import { requestCommands, startTestApp, type TestApp } from '../support/testApp.js';
import { internalId } from '../support/ids.js';

const combinations = feedStrategies.flatMap((strategy) => timelineContentModes.map((content) => ({ strategy, content })));
const timelineCollections = ['timed_buckets', 'sized_buckets', 'timeline_cache'];

/**
 * Who sees a followers-only or mentioned-only post, through every path other than the timeline
 * page (which the conformance oracle covers): a post by id, a profile, replies and their counts,
 * likes and reposts; with the follow graph read at read time and the audience fixed at posting.
 * `ann` has more followers than FANOUT_PULL_THRESHOLD, so her public posts are pulled in the
 * materialized strategies.
 */
describe.each(combinations)('visibility: FEED_STRATEGY=$strategy TIMELINE_CONTENT=$content', ({ strategy, content }) => {
  let app: TestApp;
  const tokens: Record<string, string | undefined> = {};
  const ids: Record<'pub' | 'fol' | 'men', string> = { pub: '', fol: '', men: '' };

  const gql = (handle: string | null, query: string, variables: Record<string, unknown> = {}) =>
    app.gql(query, variables, handle === null ? undefined : tokens[handle]);
  const ok = async (handle: string | null, query: string, variables: Record<string, unknown> = {}) => {
    const result = await gql(handle, query, variables);
    if (result.errors) throw new Error(`${handle}: ${JSON.stringify(result.errors)}`);
    return result.data;
  };
  const code = async (handle: string, query: string) => (await gql(handle, query)).errors?.[0]?.extensions?.code ?? null;
  const create = async (handle: string, text: string, visibility?: string, replyTo?: string) => {
    const args = [`text: ${JSON.stringify(text)}`, visibility ? `visibility: ${visibility}` : '', replyTo ? `replyTo: "${replyTo}"` : ''].join(' ');
    return (await ok(handle, `mutation { createPost(${args}) { id visibility } }`)).createPost as { id: string; visibility: string };
  };
  const follow = (handle: string, whom: string, verb = 'follow') => ok(handle, `mutation { ${verb}(handle: "${whom}") { handle } }`);
  const byId = async (viewer: string | null, id: string) => (await ok(viewer, `{ post(id: "${id}") { id visibility } }`)).post;
  const profile = async (viewer: string | null, handle: string) =>
    (await ok(viewer, `{ user(handle: "${handle}") { posts(first: 50) { edges { node { text } } } } }`)).user.posts.edges.map((edge: any) => edge.node.text);
  const timeline = async (viewer: string) => {
    await app.settled();
    return (await ok(viewer, '{ timeline(first: 50) { edges { node { text } } } }')).timeline.edges.map((edge: any) => edge.node.text);
  };
  /** Which of the three posts the viewer sees by id, on ann's profile and in their timeline (when signed in). */
  const seen = async (viewer: string | null) => {
    const visible = [];
    for (const key of ['pub', 'fol', 'men'] as const) if (await byId(viewer, ids[key])) visible.push(key);
    const texts = { pub: 'ann in public', fol: 'ann for followers', men: 'ann to @men and @ghost' };
    const shownAs = (list: string[]) => (['pub', 'fol', 'men'] as const).filter((key) => list.includes(texts[key]));
    return {
      byId: visible,
      profile: shownAs(await profile(viewer, 'ann')),
      timeline: viewer === null ? null : shownAs(await timeline(viewer)),
    };
  };

  beforeAll(async () => {
    app = await startTestApp({ FEED_STRATEGY: strategy, TIMELINE_CONTENT: content, FANOUT_PULL_THRESHOLD: '2' });
    for (const handle of ['ann', 'fol', 'men', 'out', 'late', 'quit', 'fan']) tokens[handle] = await app.signUp(handle);
    for (const handle of ['fol', 'quit', 'fan']) await follow(handle, 'ann');
    for (const handle of ['fol', 'men', 'out', 'late', 'quit']) await timeline(handle); // caches exist before the posts
    ids.pub = (await create('ann', 'ann in public')).id;
    const followersOnly = await create('ann', 'ann for followers', 'FOLLOWERS');
    const mentioned = await create('ann', 'ann to @men and @ghost', 'MENTIONED');
    expect([followersOnly.visibility, mentioned.visibility]).toEqual(['FOLLOWERS', 'MENTIONED']);
    ids.fol = followersOnly.id;
    ids.men = mentioned.id;
  });
  afterAll(() => app?.stop());

  it('shows each level to exactly its audience: by id, on the profile and in the timeline', async () => {
    expect(await seen('ann')).toEqual({ byId: ['pub', 'fol', 'men'], profile: ['pub', 'fol', 'men'], timeline: ['pub', 'fol', 'men'] });
    expect(await seen('fol')).toEqual({ byId: ['pub', 'fol'], profile: ['pub', 'fol'], timeline: ['pub', 'fol'] });
    // Mentioned, not following: the post reaches men's timeline by address.
    expect(await seen('men')).toEqual({ byId: ['pub', 'men'], profile: ['pub', 'men'], timeline: ['men'] });
    expect(await seen('out')).toEqual({ byId: ['pub'], profile: ['pub'], timeline: [] });
    expect(await seen(null)).toEqual({ byId: ['pub'], profile: ['pub'], timeline: null });

    // A page the outbox does not hold is a query, which keeps to public posts as well: here the
    // posts newer than ann's public one, which are her two limited posts.
    const publicOne = (await ok('out', '{ user(handle: "ann") { posts(first: 1) { pageInfo { endCursor } } } }')).user.posts.pageInfo.endCursor;
    app.services.content.forgetOutboxes(['ann']);
    const newer = await ok('out', `{ user(handle: "ann") { posts(last: 10, before: "${publicOne}") { edges { node { text } } } } }`);
    expect(newer.user.posts.edges).toEqual([]);
  });

  it('decides followers-only at read time: a new follower sees it, one who unfollows no longer does', async () => {
    await follow('late', 'ann');
    await follow('quit', 'ann', 'unfollow');
    expect(await seen('late')).toEqual({ byId: ['pub', 'fol'], profile: ['pub', 'fol'], timeline: ['pub', 'fol'] });
    expect(await seen('quit')).toEqual({ byId: ['pub'], profile: ['pub'], timeline: [] });
    await follow('quit', 'ann');
    expect((await seen('quit')).byId).toEqual(['pub', 'fol']);
  });

  it('fixes a mentioned-only audience when posting: an account made later with a mentioned handle never sees it', async () => {
    const stored = await app.database.db.collection('content').findOne({ _id: internalId(ids.men) });
    expect(stored?._to).toEqual(['men']);
    tokens.ghost = await app.signUp('ghost');
    expect(await seen('ghost')).toEqual({ byId: ['pub'], profile: ['pub'], timeline: [] });
  });

  it('takes a deleted account out of the audiences it was in, so a new account with its handle sees nothing', async () => {
    tokens.mia = await app.signUp('mia');
    const secret = await create('ann', 'for @mia alone', 'MENTIONED');
    expect(await byId('mia', secret.id)).not.toBeNull();
    await ok('mia', 'mutation { deleteAccount(password: "correct horse battery") }');
    for (let attempt = 0; ; attempt++) {
      const again = await app.gql('mutation { signUp(handle: "mia", password: "correct horse battery") { token } }');
      if (again.data) {
        tokens.mia = again.data.signUp.token;
        break;
      }
      expect(again.errors?.[0]?.extensions?.code).toBe('CONFLICT'); // still being freed
      expect(attempt).toBeLessThan(200);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(await byId('mia', secret.id)).toBeNull();
    expect(await timeline('mia')).toEqual([]);
    expect(await byId('ann', secret.id)).not.toBeNull();
  });

  it('keeps replies within their parent’s audience, and counts only public ones', async () => {
    expect(await code('out', `mutation { createPost(text: "let me in", replyTo: "${ids.fol}") { id } }`)).toBe('NOT_FOUND');
    const narrowed = await create('fol', 'fol answers in the open', undefined, ids.fol);
    expect(narrowed.visibility).toBe('FOLLOWERS'); // at most the parent's
    const publicReply = await create('fol', 'fol answers ann', undefined, ids.pub);
    const followersReply = await create('fol', 'fol answers ann, for fol followers', 'FOLLOWERS', ids.pub);
    const mentionedReply = await create('men', 'men answers', undefined, ids.men);
    expect([publicReply.visibility, followersReply.visibility, mentionedReply.visibility]).toEqual(['PUBLIC', 'FOLLOWERS', 'MENTIONED']);

    const replies = async (viewer: string | null, parent: string) => {
      const post = (await ok(viewer, `{ post(id: "${parent}") { replyCount replies(first: 10) { edges { node { id } } } } }`)).post;
      return { count: post.replyCount, ids: post.replies.edges.map((edge: any) => edge.node.id) };
    };
    // fol sees their own followers-only reply; ann (who does not follow fol) and strangers see the public one.
    expect(await replies('fol', ids.pub)).toEqual({ count: 1, ids: [publicReply.id, followersReply.id] });
    expect(await replies('ann', ids.pub)).toEqual({ count: 1, ids: [publicReply.id] });
    expect(await replies(null, ids.pub)).toEqual({ count: 1, ids: [publicReply.id] });
    expect(await replies('fol', ids.fol)).toEqual({ count: 0, ids: [narrowed.id] });
    // A mentioned-only reply is for the author it answers too.
    expect(await replies('ann', ids.men)).toEqual({ count: 0, ids: [mentionedReply.id] });
    expect(await replies('men', ids.men)).toEqual({ count: 0, ids: [mentionedReply.id] });
    expect(await byId('fol', mentionedReply.id)).toBeNull();

    // Someone who follows fol but not ann sees fol's reply, and no parent: it does not exist for them.
    await follow('out', 'fol');
    const reply = (await ok('out', `{ post(id: "${narrowed.id}") { text replyTo { id } } }`)).post;
    expect(reply).toEqual({ text: 'fol answers in the open', replyTo: null });
    await follow('out', 'fol', 'unfollow');
    expect(await byId('out', narrowed.id)).toBeNull();
  });

  it('refuses reposts of limited posts and likes of posts the viewer may not see, writing nothing', async () => {
    const db = app.database.db;
    expect(await code('fol', `mutation { repost(id: "${ids.fol}") { id } }`)).toBe('FORBIDDEN');
    expect(await code('men', `mutation { repost(id: "${ids.men}") { id } }`)).toBe('FORBIDDEN');
    expect(await code('out', `mutation { repost(id: "${ids.fol}") { id } }`)).toBe('NOT_FOUND');
    expect(await code('out', `mutation { likePost(id: "${ids.fol}") { id } }`)).toBe('NOT_FOUND');
    expect(await code('fol', `mutation { likePost(id: "${ids.men}") { id } }`)).toBe('NOT_FOUND');
    expect(await db.collection('content').countDocuments({ '_o._id': { $in: [internalId(ids.fol), internalId(ids.men)] } })).toBe(0);
    expect(await db.collection('likes').countDocuments({ p: { $in: [internalId(ids.fol), internalId(ids.men)] } })).toBe(0);

    expect((await ok('fol', `mutation { likePost(id: "${ids.fol}") { likeCount } }`)).likePost.likeCount).toBe(1);
    expect((await ok('men', `mutation { likePost(id: "${ids.men}") { likeCount } }`)).likePost.likeCount).toBe(1);
    expect((await ok('out', `mutation { repost(id: "${ids.pub}") { repostCount } }`)).repost.repostCount).toBe(1);
  });

  it('asks for the inbox in one query per page, and only for readers whom limited posts can concern', async () => {
    const inboxReads = async (viewer: string) => {
      const commands = await app.warmCommandsDuring(() => timeline(viewer), ['users', 'following', 'reader_filters']);
      // The inbox names `_to` or a limited `_v`; every other content query keeps to `_v: { $exists: false }`.
      return commands.filter((command) => command.commandName === 'find' && /"_to"|"_v":"[fm]"/.test(JSON.stringify(command.command.filter))).length;
    };
    expect(await inboxReads('men')).toBe(1); // addressed
    expect(await inboxReads('fol')).toBe(1); // follows an author of followers-only posts
    expect(await inboxReads('fan')).toBe(1);
    expect(await inboxReads('out')).toBe(0); // neither: the page costs what it did
  });

  it('keeps limited posts out of timelines, outboxes and pulls, and public posts on their usual write path', async () => {
    const db = app.database.db;
    const limited = [internalId(ids.fol), internalId(ids.men)];
    expect(await db.collection('content').countDocuments({ _id: { $in: limited }, _p: true })).toBe(0);
    for (const name of timelineCollections) expect(await db.collection(name).countDocuments({ '_c._id': { $in: limited } })).toBe(0);
    expect(await db.collection('fanout_tasks').countDocuments({ 'payload.post.id': { $in: limited } })).toBe(0);
    const outbox = await app.services.content.pageByAuthors(['ann'], { direction: 'older', from: null, limit: 50 });
    expect(outbox.items.map((post) => post.body.visibility)).not.toContain('FOLLOWERS');
    expect(outbox.items.map((post) => post.body.visibility)).not.toContain('MENTIONED');

    // A public post by someone who has posted limited ones costs what it costs her twin, who never
    // did (the same followers, so pulled alike): no command reads or writes anything of visibility.
    tokens.twin = await app.signUp('twin');
    for (const handle of ['fol', 'quit', 'fan']) await follow(handle, 'twin');
    const publicPost = async (handle: string) => {
      // Once the workers are done with earlier work (the follows' notifications), and the author is held again (a first pulled post marks its author as pulling, which other instances hear of).
      await app.settled();
      const commands = requestCommands(await app.warmCommandsDuring(() => create(handle, 'one more public post'), ['users']));
      expect(JSON.stringify(commands.map((command) => command.command))).not.toMatch(/"_v"|"_to"|followersOnly|"inbox"/);
      return commands.map((command) => `${command.commandName} ${command.command[command.commandName]}`);
    };
    expect(await publicPost('ann')).toEqual(await publicPost('twin'));
  });
});

/**
 * What a reader who mutes or blocks someone sees of the conversations around them, decided from
 * the entry alone (passesGraph): nothing of the hidden account, in its own posts, in replies to it,
 * or in reposts of it, though the reader still follows it and follows whoever talks to it.
 */
describe('conversations with an account the reader hides', () => {
  const at = new Date('2026-11-25T10:00:00.000Z');
  let made = 0;
  const entry = (authorId: string, extra: Partial<TimelineEntry> = {}): TimelineEntry => ({
    id: ObjectId.createFromHexString((++made).toString(16).padStart(24, '0')),
    authorId,
    createdAt: at,
    body: newBody(`by ${authorId}`),
    replyTo: null,
    repostOf: null,
    ...extra,
  });
  const replyTo = (authorId: string) => ({ id: new ObjectId(), authorId });
  const repostOf = (authorId: string) => ({ id: new ObjectId(), authorId, createdAt: at, replyTo: null });
  const readerHiding = (filters: ReaderFiltersDocument): Reader => ({
    id: 'reader',
    // Muting or blocking does not unfollow in this view: the reader follows everyone here.
    follows: new Set(['reader', 'ann', 'bob', 'cat']),
    view: new ReaderView(filters),
  });

  it.each<[string, ReaderFiltersDocument]>([
    ['mutes', { _id: 'reader', muted: ['bob'] }],
    ['blocks', { _id: 'reader', blocked: ['bob'] }],
    ['is blocked by', { _id: 'reader', blockedBy: ['bob'] }],
  ])('shows a reader who %s bob nothing of bob: not his posts, not replies to him, not reposts of him', (_how, filters) => {
    const reader = readerHiding(filters);
    expect(passesGraph(entry('bob'), reader)).toBe(false);
    expect(passesGraph(entry('ann', { replyTo: replyTo('bob') }), reader)).toBe(false);
    expect(passesGraph(entry('ann', { repostOf: repostOf('bob') }), reader)).toBe(false);
    expect(passesGraph(entry('bob', { body: newBody('by bob', { visibility: 'MENTIONED', audience: ['reader'] }) }), reader)).toBe(false);
    // Everyone else's conversations still show.
    expect(passesGraph(entry('ann'), reader)).toBe(true);
    expect(passesGraph(entry('ann', { replyTo: replyTo('cat') }), reader)).toBe(true);
    expect(passesGraph(entry('ann', { replyTo: replyTo('reader') }), reader)).toBe(true);
    expect(passesGraph(entry('ann', { repostOf: repostOf('cat') }), reader)).toBe(true);
  });
});
