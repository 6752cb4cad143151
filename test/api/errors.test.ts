import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/testApp.js';

describe('errors a client can rely on', () => {
  let app: TestApp;
  let token: string;

  beforeAll(async () => {
    app = await startTestApp();
    token = await app.signUp('erin');
    await app.signUp('frank');
  });
  afterAll(() => app?.stop());

  const codeOf = (result: { errors?: { extensions?: { code?: string } }[] }) => result.errors?.[0]?.extensions?.code;

  it('UNAUTHENTICATED without a token, with a forged one, and for wrong credentials alike', async () => {
    expect(codeOf(await app.gql('{ timeline { edges { cursor } } }'))).toBe('UNAUTHENTICATED');
    expect(codeOf(await app.gql('mutation { createPost(text: "hi") { id } }', {}, 'not.a.jwt'))).toBe('UNAUTHENTICATED');
    expect(codeOf(await app.gql('mutation { follow(handle: "frank") { handle } }', {}, token.slice(0, -2) + 'xx'))).toBe('UNAUTHENTICATED');
    const wrongPassword = await app.gql('mutation { logIn(handle: "erin", password: "wrong password") { token } }');
    const unknownHandle = await app.gql('mutation { logIn(handle: "nobody_here", password: "wrong password") { token } }');
    expect(codeOf(wrongPassword)).toBe('UNAUTHENTICATED');
    expect(unknownHandle.errors?.[0]).toEqual(wrongPassword.errors?.[0]);
    const viewer = await app.gql('{ viewer { handle } }', {}, 'garbage');
    expect(viewer).toMatchObject({ data: { viewer: null } });
    expect(viewer.errors).toBeUndefined();
  });

  it('logs in with the right password and the token works', async () => {
    const result = await app.gql('mutation { logIn(handle: "erin", password: "correct horse battery") { token user { handle } } }');
    expect(result.data.logIn.user.handle).toBe('erin');
    const viewer = await app.gql('{ viewer { handle } }', {}, result.data.logIn.token);
    expect(viewer.data.viewer.handle).toBe('erin');
  });

  it('CONFLICT for a taken handle, leaving the first account intact', async () => {
    const result = await app.gql('mutation { signUp(handle: "erin", password: "another password") { token } }');
    expect(codeOf(result)).toBe('CONFLICT');
    const login = await app.gql('mutation { logIn(handle: "erin", password: "correct horse battery") { token } }');
    expect(login.errors).toBeUndefined();
  });

  it.each([
    ['a handle with capitals', 'mutation { signUp(handle: "Erin2", password: "long enough") { token } }'],
    ['a too short handle', 'mutation { signUp(handle: "ab", password: "long enough") { token } }'],
    ['a too short password', 'mutation { signUp(handle: "newbie", password: "short") { token } }'],
    ['an empty post', 'mutation { createPost(text: "   ") { id } }'],
    ['a 501-character post', `mutation { createPost(text: "${'x'.repeat(501)}") { id } }`],
    ['following yourself', 'mutation { follow(handle: "erin") { handle } }'],
    ['following a malformed handle', 'mutation { follow(handle: "Not A Handle") { handle } }'],
    ['a forged cursor', '{ timeline(after: "bm90LWEtY3Vyc29y") { edges { cursor } } }'],
    ['a page size of 0', '{ timeline(first: 0) { edges { cursor } } }'],
    ['a page size over 100', '{ timeline(first: 101) { edges { cursor } } }'],
    ['first with last', '{ timeline(first: 2, last: 2) { edges { cursor } } }'],
    ['after with before', '{ timeline(after: "x", before: "y") { edges { cursor } } }'],
    ['a forged followers cursor', '{ user(handle: "erin") { followers(after: "Zm9v") { totalCount } } }'],
  ])('BAD_USER_INPUT for %s', async (_case, query) => {
    const result = await app.gql(query, {}, token);
    expect(codeOf(result)).toBe('BAD_USER_INPUT');
    expect(result.errors?.[0]?.message).not.toMatch(/internal/i);
  });

  it('stores nothing for a rejected sign-up or post', async () => {
    await app.gql('mutation { signUp(handle: "newbie", password: "short") { token } }');
    expect(await app.database.db.collection('users').countDocuments({ _id: 'newbie' as never })).toBe(0);
    const before = await app.database.db.collection('content').countDocuments();
    await app.gql('mutation { createPost(text: "") { id } }', {}, token);
    expect(await app.database.db.collection('content').countDocuments()).toBe(before);
    expect(await app.database.db.collection('following').countDocuments({ _f: 'erin' })).toBe(0);
  });

  it('NOT_FOUND when following or unfollowing an unknown user, with counts untouched', async () => {
    expect(codeOf(await app.gql('mutation { follow(handle: "ghost_user") { handle } }', {}, token))).toBe('NOT_FOUND');
    expect(codeOf(await app.gql('mutation { unfollow(handle: "ghost_user") { handle } }', {}, token))).toBe('NOT_FOUND');
    const viewer = await app.gql('{ viewer { followingCount } }', {}, token);
    expect(viewer.data.viewer.followingCount).toBe(0);
  });

  it('never sends stack traces outside development', async () => {
    const result = await app.gql('mutation { follow(handle: "erin") { handle } }', {}, token);
    expect(JSON.stringify(result)).not.toMatch(/stacktrace|\.ts:\d+/);
  });

  it('rejects queries nested deeper than the limit', async () => {
    const nest = (levels: number): string => (levels === 0 ? 'handle' : `followers(first: 2) { edges { node { ${nest(levels - 1)} } } }`);
    // viewer is level 1, each followers/edges/node adds 3, the leaf 1: two levels (8) fit the default limit of 10, three (11) do not.
    expect((await app.gql(`{ viewer { ${nest(2)} } }`, {}, token)).errors).toBeUndefined();
    const result = await app.gql(`{ viewer { ${nest(3)} } }`, {}, token);
    expect(codeOf(result)).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(result.errors?.[0]?.message).toMatch(/depth limit of 10 exceeded, found 11/);
  });

  it('caps request bodies with a GraphQL-shaped error', async () => {
    const response = await fetch(app.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: `{ viewer { handle } }`, variables: { padding: 'x'.repeat(200_000) } }),
    });
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({ errors: [{ message: 'Request body too large', extensions: { code: 'PAYLOAD_TOO_LARGE' } }] });
  });

  it("keeps Apollo's CSRF prevention on for simple GET requests", async () => {
    const response = await fetch(`${app.url}?query=${encodeURIComponent('{ viewer { handle } }')}`);
    expect(response.status).toBe(400);
    expect(await response.text()).toMatch(/CSRF/);
    const allowed = await fetch(`${app.url}?query=${encodeURIComponent('{ viewer { handle } }')}`, {
      headers: { 'apollo-require-preflight': 'true' },
    });
    expect(await allowed.json()).toEqual({ data: { viewer: null } });
  });
});
