import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/testApp.js';

const timelineQuery = `
  query Timeline($first: Int, $after: String, $last: Int, $before: String) {
    timeline(first: $first, after: $after, last: $last, before: $before) {
      edges { cursor node { id text createdAt author { handle } } }
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    }
  }`;

interface Page {
  edges: { cursor: string; node: { id: string; text: string; createdAt: string; author: { handle: string } } }[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
}

describe('the home timeline story', () => {
  let app: TestApp;
  const tokens: Record<string, string> = {};
  /** Post texts in creation order, oldest first. */
  const created: { text: string; author: string }[] = [];

  async function post(handle: string, text: string) {
    const result = await app.gql(`mutation($text: String!) { createPost(text: $text) { id text author { handle } } }`, { text }, tokens[handle]);
    expect(result.errors).toBeUndefined();
    expect(result.data.createPost).toMatchObject({ text: text.trim(), author: { handle } });
    created.push({ text: text.trim(), author: handle });
  }

  async function timeline(handle: string, variables: Record<string, unknown>): Promise<Page> {
    const result = await app.gql<{ timeline: Page }>(timelineQuery, variables, tokens[handle]);
    expect(result.errors).toBeUndefined();
    return result.data!.timeline;
  }

  beforeAll(async () => {
    app = await startTestApp();
    for (const handle of ['alice', 'bob', 'carol', 'dave']) tokens[handle] = await app.signUp(handle);
  });
  afterAll(() => app?.stop());

  it('shows the viewer their own posts and those of whom they follow, newest first', async () => {
    for (const handle of ['bob', 'carol']) {
      const result = await app.gql(`mutation($h: String!) { follow(handle: $h) { handle followerCount viewerIsFollowing } }`, { h: handle }, tokens.alice);
      expect(result.data.follow).toEqual({ handle, followerCount: 1, viewerIsFollowing: true });
    }
    // 23 posts interleaved across authors; dave is not followed and must never appear.
    for (let i = 0; i < 23; i++) {
      const author = ['alice', 'bob', 'carol', 'dave'][i % 4]!;
      await post(author, `  post ${i} by ${author}  `);
    }
    const expected = created.filter((p) => p.author !== 'dave').reverse().map((p) => p.text);

    const first = await timeline('alice', { first: 5 });
    expect(first.edges.map((e) => e.node.text)).toEqual(expected.slice(0, 5));
    expect(first.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
    const viewer = await app.gql(`{ viewer { handle followingCount followerCount } }`, {}, tokens.alice);
    expect(viewer.data.viewer).toEqual({ handle: 'alice', followingCount: 2, followerCount: 0 });
  });

  it('scrolls back across every page, yielding each post exactly once, then refreshes forward', async () => {
    const expected = created.filter((p) => p.author !== 'dave').reverse().map((p) => p.text);
    const pages: Page[] = [];
    let after: string | null = null;
    do {
      const page: Page = await timeline('alice', { first: 4, after });
      pages.push(page);
      after = page.pageInfo.hasNextPage ? page.pageInfo.endCursor : null;
    } while (after);
    expect(pages.length).toBeGreaterThanOrEqual(4);
    expect(pages.flatMap((p) => p.edges.map((e) => e.node.text))).toEqual(expected);
    expect(pages.at(-1)!.pageInfo.hasNextPage).toBe(false);
    expect(pages.slice(1).every((p) => p.pageInfo.hasPreviousPage)).toBe(true);
    const times = pages.flatMap((p) => p.edges.map((e) => Date.parse(e.node.createdAt)));
    expect([...times].sort((a, b) => b - a)).toEqual(times);

    // Back towards the present with last/before, from the oldest post: the same posts, in reverse page order.
    const refreshed: string[] = [];
    let before: string | null = pages.at(-1)!.pageInfo.endCursor;
    let last: Page;
    do {
      last = await timeline('alice', { last: 4, before });
      refreshed.unshift(...last.edges.map((e) => e.node.text));
      before = last.pageInfo.hasPreviousPage ? last.pageInfo.startCursor : null;
      expect(last.pageInfo.hasNextPage).toBe(true);
    } while (before);
    expect(refreshed).toEqual(expected.slice(0, -1));
    expect(last.pageInfo.hasPreviousPage).toBe(false);
  });

  it('pull-to-refresh returns exactly the posts newer than the newest one seen', async () => {
    const top = await timeline('alice', { first: 3 });
    await post('bob', 'fresh from bob');
    await post('dave', 'dave is still not followed');
    await post('carol', 'fresh from carol');
    const refresh = await timeline('alice', { last: 20, before: top.pageInfo.startCursor });
    expect(refresh.edges.map((e) => e.node.text)).toEqual(['fresh from carol', 'fresh from bob']);
    expect(refresh.pageInfo).toMatchObject({ hasPreviousPage: false, hasNextPage: true });
    // The refreshed edges' cursors continue paging seamlessly into what was already seen.
    const continued = await timeline('alice', { first: 3, after: refresh.pageInfo.endCursor });
    expect(continued.edges.map((e) => e.node.id)).toEqual(top.edges.map((e) => e.node.id));
  });

  it('removes an author from the timeline after an unfollow, and restores them on follow', async () => {
    const unfollow = await app.gql(`mutation { unfollow(handle: "bob") { handle followerCount viewerIsFollowing } }`, {}, tokens.alice);
    expect(unfollow.data.unfollow).toEqual({ handle: 'bob', followerCount: 0, viewerIsFollowing: false });
    const page = await timeline('alice', { first: 100 });
    expect(page.edges.some((e) => e.node.author.handle === 'bob')).toBe(false);
    expect(page.edges.length).toBe(created.filter((p) => p.author === 'alice' || p.author === 'carol').length);

    await app.gql(`mutation { follow(handle: "bob") { handle } }`, {}, tokens.alice);
    const again = await timeline('alice', { first: 100 });
    expect(again.edges.filter((e) => e.node.author.handle === 'bob').length).toBe(created.filter((p) => p.author === 'bob').length);
  });

  it("pages an author's own posts the same way", async () => {
    const bobsPosts = created.filter((p) => p.author === 'bob').reverse().map((p) => p.text);
    const seen: string[] = [];
    let after: string | null = null;
    let pages = 0;
    do {
      const result: any = await app.gql(
        `query($after: String) { user(handle: "bob") { posts(first: 2, after: $after) { edges { node { text } } pageInfo { hasNextPage endCursor } } } }`,
        { after },
      );
      const connection = result.data.user.posts;
      seen.push(...connection.edges.map((e: any) => e.node.text));
      after = connection.pageInfo.hasNextPage ? connection.pageInfo.endCursor : null;
      pages++;
    } while (after);
    expect(seen).toEqual(bobsPosts);
    expect(pages).toBe(Math.ceil(bobsPosts.length / 2));
  });

  it('lists followers and following with counts, and a post by id', async () => {
    await app.gql(`mutation { follow(handle: "alice") { handle } }`, {}, tokens.dave);
    await app.gql(`mutation { follow(handle: "alice") { handle } }`, {}, tokens.carol);
    const result = await app.gql(
      `{ user(handle: "alice") {
           followers(first: 1) { totalCount edges { node { handle viewerIsFollowing } } pageInfo { hasNextPage endCursor } }
           following { totalCount edges { node { handle } } }
         } }`,
      {},
      tokens.alice,
    );
    const alice = result.data.user;
    expect(alice.followers).toMatchObject({ totalCount: 2, edges: [{ node: { handle: 'carol', viewerIsFollowing: true } }], pageInfo: { hasNextPage: true } });
    expect(alice.following.edges.map((e: any) => e.node.handle)).toEqual(['bob', 'carol']);
    const second = await app.gql(`query($after: String) { user(handle: "alice") { followers(first: 1, after: $after) { edges { node { handle viewerIsFollowing } } pageInfo { hasNextPage } } } }`, { after: alice.followers.pageInfo.endCursor }, tokens.alice);
    expect(second.data.user.followers).toEqual({ edges: [{ node: { handle: 'dave', viewerIsFollowing: false } }], pageInfo: { hasNextPage: false } });

    const top = await timeline('alice', { first: 1 });
    const byId = await app.gql(`query($id: ID!) { post(id: $id) { id text author { handle } } }`, { id: top.edges[0]!.node.id });
    expect(byId.data.post).toEqual({ id: top.edges[0]!.node.id, text: top.edges[0]!.node.text, author: top.edges[0]!.node.author });
    const unknown = await app.gql(`{ post(id: "0123456789abcdef01234567") { id } user(handle: "nobody") { handle } viewer { handle } }`);
    expect(unknown.data).toEqual({ post: null, user: null, viewer: null });
  });
});
