import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keywordPattern } from '../../src/graph/readerView.js';
import { startTestApp, type TestApp } from '../support/testApp.js';

describe('keyword filters match whole words, case-insensitively, in any script', () => {
  const matches = (phrases: string[], text: string) => keywordPattern(phrases)!.test(text);

  it('matches words and phrases, not parts of words', () => {
    expect(matches(['cat'], 'My CAT sleeps')).toBe(true);
    expect(matches(['cat'], 'cat.')).toBe(true);
    expect(matches(['cat'], 'concatenate and cats')).toBe(false);
    expect(matches(['red wine'], 'some red   wine tonight')).toBe(true);
    expect(matches(['red wine'], 'red wines')).toBe(false);
    expect(matches(['Straße'], 'die STRASSE ist lang')).toBe(false); // no case folding beyond simple case
    expect(matches(['Straße'], 'die straße ist lang')).toBe(true);
    expect(matches(['微博'], '我在微博上')).toBe(false); // CJK has no spaces: the phrase is part of a longer word
    expect(matches(['c++'], 'I write c++ daily')).toBe(true); // punctuation is literal
    expect(matches(['a.b'], 'axb')).toBe(false);
  });
});

describe('mute, block and keyword filters through the API', () => {
  let app: TestApp;
  const tokens: Record<string, string> = {};
  const gql = (handle: string | null, query: string, variables: Record<string, unknown> = {}) =>
    app.gql(query, variables, handle ? tokens[handle] : undefined);
  const ok = async (handle: string | null, query: string, variables: Record<string, unknown> = {}) => {
    const result = await gql(handle, query, variables);
    if (result.errors) throw new Error(JSON.stringify(result.errors));
    return result.data;
  };
  const code = async (handle: string | null, query: string, variables: Record<string, unknown> = {}) =>
    (await gql(handle, query, variables)).errors?.[0]?.extensions?.code;

  beforeAll(async () => {
    app = await startTestApp();
    for (const handle of ['kim', 'lee', 'max', 'nat']) tokens[handle] = await app.signUp(handle);
  });
  afterAll(() => app?.stop());

  it('mutes and unmutes idempotently, and says so on the user', async () => {
    const muted = 'mutation { mute(handle: "lee") { handle viewerHasMuted viewerHasBlocked } }';
    expect((await ok('kim', muted)).mute).toEqual({ handle: 'lee', viewerHasMuted: true, viewerHasBlocked: false });
    expect((await ok('kim', muted)).mute.viewerHasMuted).toBe(true);
    expect((await ok('max', '{ user(handle: "lee") { viewerHasMuted } }')).user.viewerHasMuted).toBe(false);
    expect((await ok(null, '{ user(handle: "lee") { viewerHasMuted viewerHasBlocked } }')).user).toEqual({ viewerHasMuted: false, viewerHasBlocked: false });
    expect((await ok('kim', 'mutation { unmute(handle: "lee") { viewerHasMuted } }')).unmute.viewerHasMuted).toBe(false);
    expect((await ok('kim', 'mutation { unmute(handle: "lee") { viewerHasMuted } }')).unmute.viewerHasMuted).toBe(false);
  });

  it('refuses bad input with stable codes', async () => {
    for (const mutation of ['mute', 'unmute', 'block', 'unblock']) {
      expect(await code('kim', `mutation { ${mutation}(handle: "nobody_here") { handle } }`)).toBe('NOT_FOUND');
      expect(await code('kim', `mutation { ${mutation}(handle: "kim") { handle } }`)).toBe('BAD_USER_INPUT');
      expect(await code(null, `mutation { ${mutation}(handle: "lee") { handle } }`)).toBe('UNAUTHENTICATED');
    }
    expect(await code('kim', '{ user(handle: "lee") { keywordFilters { phrase } } }')).toBe('FORBIDDEN');
    expect(await code(null, '{ user(handle: "lee") { keywordFilters { phrase } } }')).toBe('UNAUTHENTICATED');
    for (const phrase of ['', '   ', 'x'.repeat(101), 'bell\u0007', '\u202Eevil']) {
      expect(await code('kim', 'mutation($p: String!) { addKeywordFilter(phrase: $p) { id } }', { p: phrase })).toBe('BAD_USER_INPUT');
    }
    expect((await ok('kim', '{ viewer { keywordFilters { id } } }')).viewer.keywordFilters).toEqual([]);
  });

  it('keeps up to 100 keyword filters, one per phrase in any case, and removes them by id', async () => {
    const add = (phrase: string) => ok('nat', 'mutation($p: String!) { addKeywordFilter(phrase: $p) { id phrase } }', { p: phrase });
    const first = (await add('  Hello   World ')).addKeywordFilter;
    expect(first.phrase).toBe('Hello World');
    expect((await add('hello world')).addKeywordFilter).toEqual(first);
    await Promise.all(Array.from({ length: 120 }, (_, i) => add(`word${i}`).catch(() => null)));
    const filters = (await ok('nat', '{ viewer { keywordFilters { id phrase } } }')).viewer.keywordFilters;
    expect(filters).toHaveLength(100);
    expect(await code('nat', 'mutation { addKeywordFilter(phrase: "one too many") { id } }')).toBe('BAD_USER_INPUT');
    expect((await ok('nat', `mutation { removeKeywordFilter(id: "${first.id}") }`)).removeKeywordFilter).toBe(true);
    expect((await ok('nat', `mutation { removeKeywordFilter(id: "${first.id}") }`)).removeKeywordFilter).toBe(false);
    expect(await code('nat', 'mutation { removeKeywordFilter(id: "garbage") }')).toBe('BAD_USER_INPUT');
    expect(await code('nat', 'mutation { removeKeywordFilter(id: "Not an id!") }')).toBe('NOT_FOUND');
    expect((await ok('nat', '{ viewer { keywordFilters { id } } }')).viewer.keywordFilters).toHaveLength(99);
  });

  it('never returns a short or empty page while filtered-out posts hide older ones', async () => {
    await ok('max', 'mutation { follow(handle: "lee") { handle } }');
    for (let i = 0; i < 3; i++) await ok('lee', `mutation { createPost(text: "keeper ${i}") { id } }`);
    for (let i = 0; i < 60; i++) await ok('lee', `mutation { createPost(text: "noise ${i}") { id } }`);
    await ok('max', 'mutation { addKeywordFilter(phrase: "NOISE") { id } }');
    await app.settled();
    const page = (await ok('max', '{ timeline(first: 2) { edges { node { text } } pageInfo { hasNextPage endCursor } } }')).timeline;
    expect(page.edges.map((edge: any) => edge.node.text)).toEqual(['keeper 2', 'keeper 1']);
    expect(page.pageInfo.hasNextPage).toBe(true);
    const rest = (await ok('max', '{ timeline(first: 2, after: "' + page.pageInfo.endCursor + '") { edges { node { text } } pageInfo { hasNextPage } } }')).timeline;
    expect(rest).toEqual({ edges: [{ node: { text: 'keeper 0' } }], pageInfo: { hasNextPage: false } });
    const newer = (await ok('max', '{ timeline(last: 5) { edges { node { text } } pageInfo { hasPreviousPage } } }')).timeline;
    expect(newer.edges.map((edge: any) => edge.node.text)).toEqual(['keeper 2', 'keeper 1', 'keeper 0']);
    expect(newer.pageInfo.hasPreviousPage).toBe(false);
  });

  it('blocks: ends follows both ways with exact counts, refuses new ones, hides posts both ways', async () => {
    await ok('kim', 'mutation { follow(handle: "nat") { handle } }');
    await ok('nat', 'mutation { follow(handle: "kim") { handle } }');
    const natPost = (await ok('nat', 'mutation { createPost(text: "nat speaks") { id } }')).createPost.id;
    const kimPost = (await ok('kim', 'mutation { createPost(text: "kim speaks") { id } }')).createPost.id;
    const blocked = (await ok('kim', 'mutation { block(handle: "nat") { viewerHasBlocked viewerIsFollowing followerCount followingCount } }')).block;
    expect(blocked).toEqual({ viewerHasBlocked: true, viewerIsFollowing: false, followerCount: 0, followingCount: 0 });
    const kim = (await ok('kim', '{ viewer { followerCount followingCount } }')).viewer;
    expect(kim).toEqual({ followerCount: 0, followingCount: 0 });

    expect(await code('kim', 'mutation { follow(handle: "nat") { handle } }')).toBe('FORBIDDEN');
    expect(await code('nat', 'mutation { follow(handle: "kim") { handle } }')).toBe('FORBIDDEN');
    expect(await code('nat', `mutation { repost(id: "${kimPost}") { id } }`)).toBe('FORBIDDEN');
    expect(await code('nat', `mutation { createPost(text: "hey", replyTo: "${kimPost}") { id } }`)).toBe('FORBIDDEN');
    expect((await ok('nat', '{ viewer { followingCount } }')).viewer.followingCount).toBe(0);

    const posts = (viewer: string, of: string) => ok(viewer, `{ user(handle: "${of}") { posts { edges { node { id } } } } }`);
    expect((await posts('kim', 'nat')).user.posts.edges).toEqual([]);
    expect((await posts('nat', 'kim')).user.posts.edges).toEqual([]);
    expect((await posts('lee', 'nat')).user.posts.edges.map((edge: any) => edge.node.id)).toEqual([natPost]);

    await ok('kim', 'mutation { unblock(handle: "nat") { handle } }');
    expect((await posts('nat', 'kim')).user.posts.edges.map((edge: any) => edge.node.id)).toEqual([kimPost]);
    expect((await ok('nat', 'mutation { follow(handle: "kim") { viewerIsFollowing followerCount } }')).follow).toEqual({ viewerIsFollowing: true, followerCount: 1 });
  });

  it('hides posts across a block by id and among replies too, and reply pages stay whole', async () => {
    for (const handle of ['ola', 'pia', 'quinn']) tokens[handle] = await app.signUp(handle);
    const olaPost = (await ok('ola', 'mutation { createPost(text: "ola speaks") { id } }')).createPost.id;
    const piaPost = (await ok('pia', 'mutation { createPost(text: "pia speaks") { id } }')).createPost.id;
    const question = (await ok('quinn', 'mutation { createPost(text: "quinn asks") { id } }')).createPost.id;
    await ok('ola', `mutation { createPost(text: "ola answers", replyTo: "${question}") { id } }`);
    await ok('pia', `mutation { createPost(text: "pia answers", replyTo: "${question}") { id } }`);
    await ok('pia', 'mutation { block(handle: "ola") { handle } }');

    const byId = async (viewer: string, id: string) => (await ok(viewer, `{ post(id: "${id}") { id } }`)).post;
    expect(await byId('pia', olaPost)).toBeNull();
    expect(await byId('ola', piaPost)).toBeNull();
    expect(await byId('quinn', olaPost)).toEqual({ id: olaPost });
    const firstReply = async (viewer: string) =>
      (await ok(viewer, `{ post(id: "${question}") { replies(first: 1) { edges { node { author { handle } } } pageInfo { hasNextPage } } } }`)).post.replies;
    const only = (handle: string, hasNextPage: boolean) => ({ edges: [{ node: { author: { handle } } }], pageInfo: { hasNextPage } });
    expect(await firstReply('pia')).toEqual(only('pia', false));
    expect(await firstReply('ola')).toEqual(only('ola', false));
    expect(await firstReply('quinn')).toEqual(only('ola', true));

    await ok('pia', 'mutation { unblock(handle: "ola") { handle } }');
    expect(await byId('pia', olaPost)).toEqual({ id: olaPost });
    expect(await firstReply('pia')).toEqual(only('ola', true));
  });

  it('lets no follow slip past a block that races it', async () => {
    await Promise.all([
      ...Array.from({ length: 5 }, () => gql('lee', 'mutation { follow(handle: "kim") { handle } }')),
      ok('kim', 'mutation { block(handle: "lee") { handle } }'),
      ...Array.from({ length: 5 }, () => gql('lee', 'mutation { follow(handle: "kim") { handle } }')),
    ]);
    expect(await app.database.db.collection('following').countDocuments({ _f: 'lee', _t: 'kim' })).toBe(0);
    expect((await ok('lee', '{ user(handle: "kim") { followerCount viewerIsFollowing } }')).user).toEqual({ followerCount: 1, viewerIsFollowing: false });
  });
});
