import { ObjectId } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/testApp.js';
import { apiPostId, internalId } from '../support/ids.js';

const bookmark = 'mutation($id: ID!) { bookmark(id: $id) { id viewerHasBookmarked } }';
const unbookmark = 'mutation($id: ID!) { unbookmark(id: $id) { id viewerHasBookmarked } }';
const bookmarksOf = `query($h: String!, $n: Int, $after: String) {
  user(handle: $h) { bookmarks(first: $n, after: $after) { edges { cursor node { id text viewerHasBookmarked } } pageInfo { hasNextPage endCursor } } }
}`;
const code = (result: { errors?: { extensions?: { code?: string } }[] }) => result.errors?.[0]?.extensions?.code;

describe('bookmarks', () => {
  let app: TestApp;
  let reader: string;
  let author: string;
  const posts: string[] = [];
  const post = async (token: string, text: string) => (await app.gql('mutation($t: String!) { createPost(text: $t) { id } }', { t: text }, token)).data.createPost.id as string;
  const page = async (n: number, after?: string, token = reader, handle = 'reader') => app.gql(bookmarksOf, { h: handle, n, after }, token);
  /** Every bookmark of the reader, page by page. */
  const all = async (n: number) => {
    const texts: string[] = [];
    const pages: boolean[] = [];
    let after: string | undefined;
    for (;;) {
      const result = (await page(n, after)).data.user.bookmarks;
      texts.push(...result.edges.map((edge: any) => edge.node.text));
      pages.push(result.pageInfo.hasNextPage);
      if (!result.pageInfo.hasNextPage) return { texts, pages };
      after = result.pageInfo.endCursor;
    }
  };

  beforeAll(async () => {
    app = await startTestApp();
    reader = await app.signUp('reader');
    author = await app.signUp('author');
    for (let i = 0; i < 6; i++) posts.push(await post(author, `post ${i}`));
  });
  afterAll(() => app?.stop());

  it('is idempotent both ways and shows as viewerHasBookmarked, for the viewer only', async () => {
    expect((await app.gql(bookmark, { id: posts[0] }, reader)).data.bookmark).toEqual({ id: posts[0], viewerHasBookmarked: true });
    expect((await app.gql(bookmark, { id: posts[0] }, reader)).data.bookmark.viewerHasBookmarked).toBe(true);
    expect(await app.database.db.collection('bookmarks').countDocuments({ u: 'reader' })).toBe(1);
    const seen = (token?: string) => app.gql('query($id: ID!) { post(id: $id) { viewerHasBookmarked } }', { id: posts[0] }, token);
    expect((await seen(reader)).data.post.viewerHasBookmarked).toBe(true);
    expect((await seen(author)).data.post.viewerHasBookmarked).toBe(false);
    expect((await seen()).data.post.viewerHasBookmarked).toBe(false);
    expect((await app.gql(unbookmark, { id: posts[0] }, reader)).data.unbookmark).toEqual({ id: posts[0], viewerHasBookmarked: false });
    expect((await app.gql(unbookmark, { id: posts[0] }, reader)).data.unbookmark.viewerHasBookmarked).toBe(false);
    expect((await seen(reader)).data.post.viewerHasBookmarked).toBe(false);
  });

  it('refuses unknown posts (NOT_FOUND) and signed-out callers, storing nothing', async () => {
    for (const id of [apiPostId(new ObjectId()), 'not-an-id']) {
      expect(code(await app.gql(bookmark, { id }, reader))).toBe('NOT_FOUND');
      expect(code(await app.gql(unbookmark, { id }, reader))).toBe('NOT_FOUND');
    }
    expect(code(await app.gql(bookmark, { id: posts[1] }))).toBe('UNAUTHENTICATED');
    expect(code(await app.gql(unbookmark, { id: posts[1] }))).toBe('UNAUTHENTICATED');
    expect(code(await page(5, undefined, ''))).toBe('UNAUTHENTICATED');
    expect(await app.database.db.collection('bookmarks').countDocuments({})).toBe(0);
  });

  it('pages newest bookmark first with exact hasNextPage; another user’s are FORBIDDEN; a timeline cursor is refused', async () => {
    // Bookmarked in the order 3, 1, 4, 0, 2; bookmarking 3 again keeps its place.
    for (const index of [3, 1, 4, 0, 2, 3]) await app.gql(bookmark, { id: posts[index] }, reader);
    const order = ['post 2', 'post 0', 'post 4', 'post 1', 'post 3'];
    expect(await all(2)).toEqual({ texts: order, pages: [true, true, false] });
    expect(await all(5)).toEqual({ texts: order, pages: [false] });
    expect(await all(4)).toEqual({ texts: order, pages: [true, false] });
    const first = (await page(5)).data.user.bookmarks;
    expect(first.edges.every((edge: any) => edge.node.viewerHasBookmarked)).toBe(true);

    expect(code(await page(5, undefined, author))).toBe('FORBIDDEN');
    const timelineCursor = (await app.gql('{ timeline(first: 1) { edges { cursor } } }', {}, author)).data.timeline.edges[0].cursor;
    expect(code(await page(5, timelineCursor))).toBe('BAD_USER_INPUT');
    expect(code(await page(101))).toBe('BAD_USER_INPUT');
  });

  it('drops a deleted post, and one whose bookmark outlived it, and stays full', async () => {
    expect((await app.gql('mutation($id: ID!) { deletePost(id: $id) }', { id: posts[4] }, author)).data.deletePost).toBe(true);
    expect(await app.database.db.collection('bookmarks').countDocuments({ p: internalId(posts[4]!) })).toBe(0);
    // A bookmark stored as its post was being deleted (the delete's cleanup ran first) points at nothing.
    const gone = new ObjectId();
    await app.database.db.collection<any>('bookmarks').insertOne({ _id: `${gone.toHexString()}:reader`, p: gone, u: 'reader', at: new Date() });
    expect(await all(2)).toEqual({ texts: ['post 2', 'post 0', 'post 1', 'post 3'], pages: [true, false] });
    expect(await all(3)).toEqual({ texts: ['post 2', 'post 0', 'post 1', 'post 3'], pages: [true, false] });
    expect(await app.database.db.collection('bookmarks').countDocuments({ u: 'reader' })).toBe(4);
  });

  it('hides the posts of an account blocked either way, as everywhere else, and refuses bookmarking across a block', async () => {
    const blocker = await app.signUp('blocker');
    const theirs = await post(blocker, 'by the blocker');
    await app.gql(bookmark, { id: theirs }, reader);
    expect((await all(10)).texts).toEqual(['by the blocker', 'post 2', 'post 0', 'post 1', 'post 3']);
    await app.gql('mutation { block(handle: "reader") { handle } }', {}, blocker);
    expect(await all(2)).toEqual({ texts: ['post 2', 'post 0', 'post 1', 'post 3'], pages: [true, false] });
    const another = await post(blocker, 'after the block');
    expect(code(await app.gql(bookmark, { id: another }, reader))).toBe('FORBIDDEN');
    await app.gql('mutation { unblock(handle: "reader") { handle } }', {}, blocker);
    expect((await all(10)).texts).toEqual(['by the blocker', 'post 2', 'post 0', 'post 1', 'post 3']);
    await app.gql(unbookmark, { id: theirs }, reader);
  });

  it('goes with the account that bookmarked, and with the account whose posts they were', async () => {
    const other = await app.signUp('collector');
    const own = await post(other, 'collector’s own');
    await app.gql(bookmark, { id: own }, reader);
    await app.gql(bookmark, { id: posts[0] }, other);
    expect((await app.gql('mutation { deleteAccount(password: "correct horse battery") }', {}, other)).data).toEqual({ deleteAccount: true });
    await app.settled();
    expect(await app.database.db.collection('bookmarks').countDocuments({ u: 'collector' })).toBe(0);
    expect(await app.database.db.collection('bookmarks').countDocuments({ p: internalId(own) })).toBe(0);
    expect((await all(10)).texts).toEqual(['post 2', 'post 0', 'post 1', 'post 3']);
  });
});
