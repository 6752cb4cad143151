import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TokenService } from '../../src/auth/tokens.js';
import { closeEventFor } from '../live/liveClient.js';
import { startTestApp, type TestApp } from '../support/testApp.js';

const secret = new TextEncoder().encode('test-secret-that-is-at-least-32-characters');

/**
 * Verified tokens are held in process so that a request does not verify its token again; holding
 * one must never stretch its life. The service's clock is the test's, so expiry is a step of the
 * clock, not a wait.
 */
describe('tokens held as verified', () => {
  const subject = { handle: 'ada', accountId: 'account-of-ada', generation: 3 };
  let now = Date.UTC(2030, 0, 1, 12, 0, 0);
  const tokens = new TokenService(secret, 600, 'feed-service/held', () => now);

  it('stops a token at its expiry although it was verified, and held, while valid', async () => {
    now = Date.UTC(2030, 0, 1, 12, 0, 0);
    const token = await tokens.issue(subject);
    expect(await tokens.verify(token)).toEqual(subject);
    now += 599_999; // the last millisecond of its life: still good, from what is held
    expect(await tokens.verify(token)).toEqual(subject);
    expect(await tokens.fromAuthorization(`Bearer ${token}`)).toEqual(subject);
    now += 1;
    expect(await tokens.verify(token)).toBeNull();
    expect(await tokens.fromAuthorization(`Bearer ${token}`)).toBe('invalid');
    // Still refused when asked again, and by a service that never held it.
    expect(await tokens.verify(token)).toBeNull();
    expect(await new TokenService(secret, 600, 'feed-service/held', () => now).verify(token)).toBeNull();
  });

  it('stops a token used for the first time just before its expiry, when the expiry comes', async () => {
    now = Date.UTC(2030, 0, 2, 12, 0, 0);
    const token = await tokens.issue(subject);
    now += 590_000;
    expect(await tokens.verify(token)).toEqual(subject);
    now += 10_000;
    expect(await tokens.verify(token)).toBeNull();
  });
});

/** Tokens speak for one account of one deployment, for a limited time. */
describe('tokens bound to accounts', () => {
  let app: TestApp;
  let issuer: string;
  const errorOf = (result: { errors?: { message: string; extensions?: { code?: string } }[] }) => result.errors?.[0];
  /** A token signed with the deployment's real secret, with whatever claims an attacker chooses. */
  const forge = (claims: { sub: string; aid?: string; exp?: number; iss?: string; aud?: string }) => {
    let jwt = new SignJWT(claims.aid ? { aid: claims.aid } : {})
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(claims.sub)
      .setIssuer(claims.iss ?? issuer)
      .setAudience(claims.aud ?? issuer)
      .setIssuedAt(Math.floor(Date.now() / 1000) - 7200);
    if (claims.exp !== undefined) jwt = jwt.setExpirationTime(claims.exp);
    return jwt.sign(secret);
  };
  const accountIdOf = async (handle: string) =>
    (await app.database.db.collection<any>('users').findOne({ _id: handle }))!.accountId as string;

  beforeAll(async () => {
    app = await startTestApp();
    issuer = `feed-service/${app.database.db.databaseName}`;
    await app.signUp('holder');
    await app.signUp('target');
  });
  afterAll(() => app?.stop());

  it('refuses a token past its lifetime over HTTP, saying why, and over WebSocket', async () => {
    const expired = await forge({ sub: 'holder', aid: await accountIdOf('holder'), exp: Math.floor(Date.now() / 1000) - 60 });
    const result = await app.gql('mutation { createPost(text: "too late") { id } }', {}, expired);
    expect(errorOf(result)).toMatchObject({
      message: 'The token is invalid or expired; sign in again',
      extensions: { code: 'UNAUTHENTICATED' },
    });
    expect(await closeEventFor(app, { authorization: `Bearer ${expired}` })).toMatchObject({ code: 4403 });
    const missing = await app.gql('mutation { createPost(text: "no token") { id } }');
    expect(errorOf(missing)?.message).toMatch(/^Sign in first/);
  });

  it('tells a client that sends the token without "Bearer " how to send it, over HTTP and WebSocket', async () => {
    const token = await app.signUp('baretoken');
    for (const authorization of [token, `Token ${token}`, `Bearer`]) {
      const response = await fetch(app.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization },
        body: JSON.stringify({ query: '{ timeline(first: 1) { edges { cursor } } }' }),
      });
      const result = (await response.json()) as Parameters<typeof errorOf>[0];
      expect(errorOf(result)).toMatchObject({
        message: 'Send the token as Authorization: Bearer <token> (the word Bearer, a space, then the token)',
        extensions: { code: 'UNAUTHENTICATED' },
      });
    }
    const closed = await closeEventFor(app, { authorization: token });
    expect(closed).toMatchObject({ code: 4401, reason: 'Unauthorized: send the token as connectionParams { authorization: "Bearer <token>" }' });
    // The same token with the scheme works.
    expect(errorOf(await app.gql('{ timeline(first: 1) { edges { cursor } } }', {}, token))).toBeUndefined();
  });

  it('refuses a token without an expiry, or for another deployment', async () => {
    const accountId = await accountIdOf('holder');
    const exp = Math.floor(Date.now() / 1000) + 600;
    for (const token of [
      await forge({ sub: 'holder', aid: accountId }),
      await forge({ sub: 'holder', aid: accountId, exp, iss: 'feed-service/elsewhere', aud: 'feed-service/elsewhere' }),
      // Issued here for another deployment's audience, or elsewhere for this one: either claim alone refuses it.
      await forge({ sub: 'holder', aid: accountId, exp, aud: 'feed-service/elsewhere' }),
      await forge({ sub: 'holder', aid: accountId, exp, iss: 'feed-service/elsewhere' }),
    ]) {
      expect(errorOf(await app.gql('{ timeline { edges { cursor } } }', {}, token))?.extensions?.code).toBe('UNAUTHENTICATED');
    }
  });

  it('refuses a validly signed token for a handle that has no account, and changes nothing', async () => {
    const ghost = await forge({ sub: 'ghost', aid: 'made-up', exp: Math.floor(Date.now() / 1000) + 600 });
    expect(errorOf(await app.gql('mutation { follow(handle: "target") { handle } }', {}, ghost))?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(errorOf(await app.gql('mutation { createPost(text: "boo") { id } }', {}, ghost))?.extensions?.code).toBe('UNAUTHENTICATED');
    const target = await app.gql('{ user(handle: "target") { followerCount followers { totalCount edges { cursor } } } }');
    expect(target.data.user).toEqual({ followerCount: 0, followers: { totalCount: 0, edges: [] } });
    expect(await app.database.db.collection('content').countDocuments({ _a: 'ghost' })).toBe(0);
  });

  it('refuses the old owner’s token once the handle belongs to a new account', async () => {
    const oldToken = await app.signUp('recycled');
    expect(errorOf(await app.gql('{ timeline { edges { cursor } } }', {}, oldToken))).toBeUndefined();
    // The database is reset (or the account removed) and someone else registers the handle.
    await app.database.db.collection<any>('users').deleteOne({ _id: 'recycled' });
    const newToken = await app.signUp('recycled', 'a different password');
    const withOld = await app.gql('mutation { createPost(text: "as the old owner") { id } }', {}, oldToken);
    expect(errorOf(withOld)?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(await app.database.db.collection('content').countDocuments({ _a: 'recycled' })).toBe(0);
    expect(errorOf(await app.gql('mutation { createPost(text: "as the new owner") { id } }', {}, newToken))).toBeUndefined();
  });
});
