import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/testApp.js';

describe('pinned posts', () => {
  let app: TestApp;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    app = await startTestApp();
    for (const handle of ['ada', 'bea']) tokens[handle] = await app.signUp(handle);
  });
  afterAll(() => app?.stop());

  const create = async (token: string, text: string, visibility = 'PUBLIC') =>
    (await app.gql('mutation($text: String!, $v: Visibility) { createPost(text: $text, visibility: $v) { id } }', { text, v: visibility }, token)).data.createPost.id as string;
  const pin = (token: string, id: string) => app.gql('mutation($id: ID!) { pinPost(id: $id) { handle pinnedPosts { id pinned } } }', { id }, token);
  const unpin = (token: string, id: string) => app.gql('mutation($id: ID!) { unpinPost(id: $id) { pinnedPosts { id } } }', { id }, token);
  const pinned = async (viewer: string | undefined) =>
    (await app.gql('{ user(handle: "ada") { pinnedPosts { id } } }', {}, viewer)).data.user.pinnedPosts.map((post: any) => post.id);

  it('keeps at most 5 of the author\'s own posts, most recently pinned first, idempotently', async () => {
    const posts: string[] = [];
    for (let index = 0; index < 6; index++) posts.push(await create(tokens.ada!, `post ${index}`));
    for (const id of posts.slice(0, 5)) expect((await pin(tokens.ada!, id)).errors).toBeUndefined();
    expect((await pin(tokens.ada!, posts[2]!)).errors).toBeUndefined();
    expect(await pinned(tokens.bea)).toEqual(posts.slice(0, 5).reverse());
    expect((await pin(tokens.ada!, posts[5]!)).errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const shown = await app.gql('query($a: ID!, $b: ID!) { a: post(id: $a) { pinned } b: post(id: $b) { pinned } }', { a: posts[0], b: posts[5] }, tokens.bea);
    expect(shown.data).toEqual({ a: { pinned: true }, b: { pinned: false } });

    expect((await unpin(tokens.ada!, posts[0]!)).errors).toBeUndefined();
    expect((await unpin(tokens.ada!, posts[0]!)).errors).toBeUndefined();
    expect((await pin(tokens.ada!, posts[5]!)).errors).toBeUndefined();
    expect(await pinned(undefined)).toEqual([posts[5], ...posts.slice(1, 5).reverse()]);

    // A deleted post leaves the pins, and its place is free.
    await app.gql('mutation($id: ID!) { deletePost(id: $id) }', { id: posts[3] }, tokens.ada);
    expect(await pinned(tokens.bea)).toEqual([posts[5], posts[4], posts[2], posts[1]]);
    expect((await pin(tokens.ada!, posts[0]!)).errors).toBeUndefined();
    expect(await pinned(tokens.bea)).toEqual([posts[0], posts[5], posts[4], posts[2], posts[1]]);
  });

  it('is FORBIDDEN for someone else\'s post, NOT_FOUND for one the viewer may not see', async () => {
    const theirs = await create(tokens.bea!, 'bea\'s');
    expect((await pin(tokens.ada!, theirs)).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect((await unpin(tokens.ada!, theirs)).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const hidden = await create(tokens.bea!, 'for followers', 'FOLLOWERS');
    expect((await pin(tokens.ada!, hidden)).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });

  it('shows only the pinned posts the viewer may see', async () => {
    const limited = await create(tokens.bea!, 'limited and pinned', 'FOLLOWERS');
    expect((await pin(tokens.bea!, limited)).errors).toBeUndefined();
    const seen = async (viewer: string) => (await app.gql('{ user(handle: "bea") { pinnedPosts { id } } }', {}, viewer)).data.user.pinnedPosts.map((post: any) => post.id);
    expect(await seen(tokens.bea!)).toEqual([limited]);
    expect(await seen(tokens.ada!)).toEqual([]);
  });

  it('holds 5 under concurrent pins', async () => {
    const posts: string[] = [];
    for (let index = 0; index < 8; index++) posts.push(await create(tokens.bea!, `race ${index}`));
    await unpin(tokens.bea!, posts[0]!);
    const answers = await Promise.all(posts.map((id) => pin(tokens.bea!, id)));
    const refused = answers.filter((answer) => answer.errors?.[0]?.extensions?.code === 'BAD_USER_INPUT').length;
    // One slot is taken by the limited post pinned above.
    expect(refused).toBe(4);
    const shown = (await app.gql('{ user(handle: "bea") { pinnedPosts { id } } }', {}, tokens.bea)).data.user.pinnedPosts;
    expect(shown).toHaveLength(5);
  });

  it('go with a deleted account, before its handle is free again', async () => {
    const token = await app.signUp('gus');
    const id = await create(token, 'gus pins this');
    expect((await pin(token, id)).errors).toBeUndefined();
    expect(await app.database.db.collection('pins').countDocuments({ _id: 'gus' as never })).toBe(1);
    expect((await app.gql('mutation { deleteAccount(password: "correct horse battery") }', {}, token)).errors).toBeUndefined();
    await app.settled();
    await expect.poll(() => app.database.db.collection('users').countDocuments({ _id: 'gus' as never }), { timeout: 15_000 }).toBe(0);
    expect(await app.database.db.collection('pins').countDocuments({ _id: 'gus' as never })).toBe(0);
  });
});
