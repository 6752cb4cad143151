import { ObjectId } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { feedStrategies, timelineContentModes } from '../../src/config.js';
import { newPostId, toStoredPost, type PostRecord } from '../../src/records/posts.js';
import { startTestApp, type TestApp } from '../support/testApp.js';
import { publicPost } from '../support/records.js';

const combinations = feedStrategies.flatMap((strategy) => timelineContentModes.map((content) => ({ strategy, content })));
const marker = '{ timelineMarker { cursor unreadCount updatedAt } }';
const mark = 'mutation($c: String!) { markTimelineRead(upTo: $c) { cursor unreadCount updatedAt } }';
const code = (result: { errors?: { extensions?: { code?: string } }[] }) => result.errors?.[0]?.extensions?.code;

/**
 * Stores `count` posts by `authorId`, newer than everything so far, and delivers them to these
 * timelines as fanout would (the strategy's own `deliverTo`): a thousand posts through the API
 * would be a thousand requests per strategy.
 */
async function storePosts(app: TestApp, authorId: string, count: number, recipients: string[]): Promise<void> {
  const start = Date.now();
  const posts: PostRecord[] = Array.from({ length: count }, (_, i) => publicPost({ id: newPostId(authorId), authorId, text: `bulk ${i}`, createdAt: new Date(start + i) }));
  await app.database.db.collection('content').insertMany(posts.map(toStoredPost) as never[]);
  for (let i = 0; i < posts.length; i += 200) await app.services.feed.backend.deliverTo(recipients, posts.slice(i, i + 200));
  app.services.content.forgetOutboxes([authorId]);
  // The bulk posts end in the future by up to `count` ms: posts made after them must be newer.
  while (Date.now() <= start + count) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe.each(combinations)('timeline marker: $strategy, $content', ({ strategy, content }) => {
  let app: TestApp;
  const tokens: Record<string, string> = {};
  const as = (handle: string, query: string, variables: Record<string, unknown> = {}) => app.gql(query, variables, tokens[handle]);
  const post = async (handle: string, text: string) => (await as(handle, 'mutation($t: String!) { createPost(text: $t) { id } }', { t: text })).data.createPost.id as string;
  const cursors = async (n: number) => (await as('reader', `{ timeline(first: ${n}) { edges { cursor node { text } } } }`)).data.timeline.edges as { cursor: string; node: { text: string } }[];
  const unread = async () => (await as('reader', marker)).data.timelineMarker.unreadCount as number;

  beforeAll(async () => {
    app = await startTestApp({ FEED_STRATEGY: strategy, TIMELINE_CONTENT: content, TIMELINE_CACHE_SIZE: '10', TIMELINE_BUCKET_SIZE: '20' });
    for (const handle of ['reader', 'writer', 'muted', 'stranger']) tokens[handle] = await app.signUp(handle);
    await as('reader', 'mutation { follow(handle: "writer") { handle } }');
    await as('reader', 'mutation { follow(handle: "muted") { handle } }');
    await as('reader', 'mutation { mute(handle: "muted") { handle } }');
    await as('reader', 'mutation { addKeywordFilter(phrase: "spoiler") { id } }');
    await cursors(1); // the cache strategy builds its cache here
  });
  afterAll(() => app?.stop());

  it('counts what the timeline would show newer than the marker: mutes, filters and deletions applied; at most 1,000', async () => {
    expect((await as('reader', marker)).data.timelineMarker).toEqual({ cursor: null, unreadCount: 0, updatedAt: null });
    await post('writer', 'before the marker');
    await app.settled();
    expect(await unread()).toBe(1); // no marker yet: the whole timeline is unread
    const [top] = await cursors(1);
    const marked = (await as('reader', mark, { c: top!.cursor })).data.markTimelineRead;
    expect(marked).toMatchObject({ cursor: top!.cursor, unreadCount: 0 });
    expect(Date.parse(marked.updatedAt)).not.toBeNaN();

    await post('writer', 'first news');
    await post('writer', 'a spoiler alert');
    await post('muted', 'muted news');
    await post('writer', 'second news');
    const deleted = await post('writer', 'soon deleted');
    await as('writer', 'mutation($id: ID!) { deletePost(id: $id) }', { id: deleted });
    await post('stranger', 'not followed');
    await app.settled();
    expect((await cursors(3)).map((edge) => edge.node.text)).toEqual(['second news', 'first news', 'before the marker']);
    expect(await unread()).toBe(2);

    await storePosts(app, 'writer', 1003, ['reader', 'writer']);
    expect(await unread()).toBe(1000);
    // Marked at the fifth post from the top: four are unread.
    const fifth = (await cursors(5))[4]!;
    expect((await as('reader', mark, { c: fifth.cursor })).data.markTimelineRead).toMatchObject({ cursor: fifth.cursor, unreadCount: 4 });
    // An older cursor leaves the marker where it is.
    expect((await as('reader', mark, { c: top!.cursor })).data.markTimelineRead).toMatchObject({ cursor: fifth.cursor, unreadCount: 4 });
  });

  it('reads a bounded page, never a count over the history', async () => {
    const commands = await app.commandsDuring(() => as('reader', marker));
    expect(commands.filter((command) => ['count', 'aggregate', 'distinct'].includes(command.commandName))).toEqual([]);
  });
});

describe('timeline marker: rules', () => {
  let a: TestApp;
  let b: TestApp;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    a = await startTestApp();
    b = await startTestApp({ MONGODB_URI: a.mongodbUri });
    for (const handle of ['reader', 'writer', 'stranger']) tokens[handle] = await a.signUp(handle);
    await a.gql('mutation { follow(handle: "writer") { handle } }', {}, tokens.reader);
    for (let i = 0; i < 30; i++) await a.gql(`mutation { createPost(text: "post ${i}") { id } }`, {}, tokens[i % 2 ? 'writer' : 'reader']);
    await a.gql('mutation { createPost(text: "by a stranger") { id } }', {}, tokens.stranger);
  });
  afterAll(async () => {
    await b?.stop();
    await a?.stop();
  });

  it('never moves backwards under racing marks, and is the same on every instance', async () => {
    const edges = (await a.gql('{ timeline(first: 30) { edges { cursor } } }', {}, tokens.reader)).data.timeline.edges as { cursor: string }[];
    for (let round = 0; round < 3; round++) {
      const shuffled = [...edges].sort(() => Math.random() - 0.5);
      const answers = await Promise.all(
        shuffled.map((edge, i) => (i % 2 ? a : b).gql('mutation($c: String!) { markTimelineRead(upTo: $c) { cursor } }', { c: edge.cursor }, tokens.reader)),
      );
      expect(answers.every((answer) => answer.data?.markTimelineRead.cursor)).toBe(true);
      for (const app of [a, b]) {
        expect((await app.gql(marker, {}, tokens.reader)).data.timelineMarker).toMatchObject({ cursor: edges[0]!.cursor, unreadCount: 0 });
      }
    }
  });

  it('refuses a malformed cursor, one of another list, of a post not in the timeline, or a forged time, changing nothing', async () => {
    const before = (await a.gql(marker, {}, tokens.reader)).data.timelineMarker;
    const strangers = (await a.gql('{ user(handle: "stranger") { posts(first: 1) { edges { cursor node { id } } } } }', {}, tokens.reader)).data.user.posts.edges[0];
    await a.gql('mutation($id: ID!) { bookmark(id: $id) { id } }', { id: strangers.node.id }, tokens.reader);
    const bookmarkCursor = (await a.gql('{ viewer { bookmarks { edges { cursor } } } }', {}, tokens.reader)).data.viewer.bookmarks.edges[0].cursor;
    const newest = (await a.gql('{ timeline(first: 1) { edges { cursor } } }', {}, tokens.reader)).data.timeline.edges[0].cursor as string;
    // A post of the timeline, at a time it was not made: it would put the marker past everything to come.
    const [, id] = Buffer.from(newest, 'base64url').toString().split(':');
    const forged = Buffer.from(`${Date.now() + 86_400_000}:${id}`).toString('base64url');
    const unknown = Buffer.from(`${Date.now()}:${new ObjectId().toHexString()}`).toString('base64url');
    for (const cursor of ['nonsense', bookmarkCursor, strangers.cursor, forged, unknown]) {
      const result = await a.gql(mark, { c: cursor }, tokens.reader);
      expect(code(result), cursor).toBe('BAD_USER_INPUT');
    }
    expect(code(await a.gql(mark, { c: before.cursor }))).toBe('UNAUTHENTICATED');
    expect(code(await a.gql(marker))).toBe('UNAUTHENTICATED');
    expect((await a.gql(marker, {}, tokens.reader)).data.timelineMarker).toEqual(before);
  });
});
