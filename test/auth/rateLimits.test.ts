import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/testApp.js';

const realLimits = {
  RATE_LIMIT_SIGNUPS_PER_ADDRESS: '20',
  RATE_LIMIT_POSTS_PER_MINUTE: '60',
  RATE_LIMIT_FOLLOWS_PER_MINUTE: '120',
  RATE_LIMIT_LOGIN_FAILURES_PER_ADDRESS: '100',
};

/** Rate limits counted in MongoDB, as a brute-forcing or spamming client meets them. */
describe('rate limits', () => {
  let app: TestApp;
  const logIn = (handle: string, password: string) =>
    app.gql('mutation($h: String!, $p: String!) { logIn(handle: $h, password: $p) { token } }', { h: handle, p: password });

  beforeAll(async () => {
    app = await startTestApp(realLimits);
    await app.signUp('victim', 'the right password');
  });
  afterAll(() => app?.stop());

  it('throttles wrong passwords for a handle after five, with growing waits, and refuses even the right one meanwhile', async () => {
    for (let i = 0; i < 5; i++) expect((await logIn('victim', `guess ${i}`)).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    const throttled = await logIn('victim', 'guess 5');
    expect(throttled.status).toBe(429);
    expect(throttled.errors?.[0]?.extensions).toMatchObject({ code: 'RATE_LIMITED', retryAfterSeconds: 2 });
    expect(throttled.errors?.[0]?.extensions).not.toHaveProperty('http');
    const rightButTooSoon = await logIn('victim', 'the right password');
    expect(rightButTooSoon.errors?.[0]?.extensions?.code).toBe('RATE_LIMITED');

    // Each failure after the wait doubles it. (Waiting is simulated by moving the last failure back.)
    const limits = app.database.db.collection<any>('rate_limits');
    const back = async (seconds: number) => {
      const doc = await limits.findOne({ key: 'login-handle:victim' });
      await limits.updateOne({ key: 'login-handle:victim' }, { $set: { expire: new Date(doc.expire.getTime() - seconds * 1000) } });
    };
    await back(3);
    expect((await logIn('victim', 'guess 6')).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect((await logIn('victim', 'guess 7')).errors?.[0]?.extensions).toMatchObject({ code: 'RATE_LIMITED', retryAfterSeconds: 4 });

    // Once the wait is over, the right password works and the count starts over.
    await back(5);
    expect((await logIn('victim', 'the right password')).errors).toBeUndefined();
    expect((await logIn('victim', 'one more typo')).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('counts no refused input against the sign-up and post limits', async () => {
    const limits = app.database.db.collection<any>('rate_limits');
    const consumed = async () => (await limits.find({ key: { $regex: '^(signup-address|post-account):' } }).toArray()).map((doc) => [doc.key, doc.points]);
    const before = await consumed();
    const signUp = (handle: string, password: string) => app.gql('mutation($h: String!, $p: String!) { signUp(handle: $h, password: $p) { token } }', { h: handle, p: password });
    for (const [handle, password] of [['No Spaces', 'long enough'], ['ok_handle', 'short'], ['ok_handle', 'long enough \ud800']]) {
      expect((await signUp(handle!, password!)).errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    }
    // Log-ins of this handle are throttled by the test before: a token is minted instead.
    const token = await app.services.accounts.tokenFor('victim');
    for (const text of ['', '   ', '\u200b\u200b', '\u3164', 'x'.repeat(501)]) {
      expect((await app.gql('mutation($t: String!) { createPost(text: $t) { id } }', { t: text }, token)).errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    }
    expect(await consumed()).toEqual(before);
    expect(await app.database.db.collection('content').countDocuments({ _a: 'victim' })).toBe(0);
  });

  it('limits sign-ups per address and posts per account, counted across instances', async () => {
    const second = await startTestApp({ ...realLimits, MONGODB_URI: app.mongodbUri });
    try {
      const signUp = (target: TestApp, i: number) =>
        target.gql('mutation($h: String!) { signUp(handle: $h, password: "long enough") { token } }', { h: `spammer_${i}` });
      const results = [];
      for (let i = 0; i < 20; i++) results.push(await signUp(i % 2 ? app : second, i)); // 1 already counted in beforeAll
      const refused = results.filter((result) => result.errors?.[0]?.extensions?.code === 'RATE_LIMITED');
      expect(refused).toHaveLength(1);
      expect(await app.database.db.collection('users').countDocuments({ _id: { $regex: '^spammer_' } as never })).toBe(19);

      const token = results[0]!.data.signUp.token as string;
      const posts = [];
      for (let i = 0; i < 61; i++) posts.push(await (i % 2 ? app : second).gql(`mutation { createPost(text: "spam ${i}") { id } }`, {}, token));
      const last = posts.at(-1)!;
      expect(last.status).toBe(429);
      expect(last.errors?.[0]?.extensions).toMatchObject({ code: 'RATE_LIMITED' });
      expect(last.errors?.[0]?.extensions?.retryAfterSeconds).toBeGreaterThan(0);
      expect(await app.database.db.collection('content').countDocuments({ _a: 'spammer_0' })).toBe(60);
    } finally {
      await second.stop();
    }
  });

  it('counts posts against the shared limit a few at a time, never letting one more through', async () => {
    // Its own database: the tests above used up this address's sign-ups.
    const fresh = await startTestApp(realLimits);
    const results: Awaited<ReturnType<TestApp['gql']>>[] = [];
    let commands;
    try {
      const token = await fresh.signUp('leaser');
      commands = await fresh.commandsDuring(async () => {
        for (let i = 0; i < 61; i++) results.push(await fresh.gql(`mutation { createPost(text: "leased ${i}") { id } }`, {}, token));
      });
      expect(await fresh.database.db.collection('content').countDocuments({ _a: 'leaser' })).toBe(60);
      // All at once: the requests share leases, and exactly the limit gets through.
      const burster = await fresh.signUp('burster');
      const burst = await Promise.all(Array.from({ length: 70 }, (_, i) => fresh.gql(`mutation { createPost(text: "burst ${i}") { id } }`, {}, burster)));
      expect(burst.filter((result) => result.errors?.[0]?.extensions?.code === 'RATE_LIMITED')).toHaveLength(10);
      expect(await fresh.database.db.collection('content').countDocuments({ _a: 'burster' })).toBe(60);
    } finally {
      await fresh.stop();
    }
    expect(results.slice(0, 60).every((result) => result.errors === undefined)).toBe(true);
    expect(results[60]!.errors?.[0]?.extensions?.code).toBe('RATE_LIMITED');
    // Three points a round trip while plenty are left, one at a time near the end.
    const limitRoundTrips = commands.filter((command) => command.command[command.commandName] === 'rate_limits').length;
    expect(limitRoundTrips).toBeGreaterThan(1);
    expect(limitRoundTrips).toBeLessThanOrEqual(30);
  });

  it('says where the client stands in RateLimit-Limit, -Remaining and -Reset on every answer under a limit', async () => {
    // Its own database: the tests above used up this address's sign-ups.
    const fresh = await startTestApp(realLimits);
    try {
      await rateLimitHeadersOn(fresh);
    } finally {
      await fresh.stop();
    }
  });
});

/** Sign-ups, posts, follows and failed log-ins each tell their limit; reads tell none. */
async function rateLimitHeadersOn(app: TestApp): Promise<void> {
  const send = async (query: string, variables: Record<string, unknown> = {}, token?: string) => {
    const response = await fetch(app.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify({ query, variables }),
    });
    const header = (name: string) => response.headers.get(name);
    return { status: response.status, limit: header('ratelimit-limit'), remaining: header('ratelimit-remaining'), reset: Number(header('ratelimit-reset')), retryAfter: header('retry-after') };
  };
  const signUp = 'mutation($h: String!) { signUp(handle: $h, password: "correct horse battery") { token } }';
  const first = await send(signUp, { h: 'headers_a' });
  const second = await send(signUp, { h: 'headers_b' });
  expect(first).toMatchObject({ status: 200, limit: '20' });
  expect(Number(second.remaining)).toBe(Number(first.remaining) - 1);
  expect(second.reset).toBeGreaterThan(0);
  expect(second.reset).toBeLessThanOrEqual(3600);

  const token = await app.signUp('headers_poster');
  const post = (text: string) => send('mutation($t: String!) { createPost(text: $t) { id } }', { t: text }, token);
  expect(await post('one')).toMatchObject({ status: 200, limit: '60', remaining: '59' });
  expect(await post('two')).toMatchObject({ limit: '60', remaining: '58' });
  expect(await send('mutation { follow(handle: "headers_a") { handle } }', {}, token)).toMatchObject({ status: 200, limit: '120', remaining: '119' });

  const failedBefore = await send('mutation { logIn(handle: "headers_a", password: "wrong password") { token } }');
  const failedAfter = await send('mutation { logIn(handle: "headers_a", password: "wrong again") { token } }');
  expect(failedBefore).toMatchObject({ limit: '100' });
  expect(Number(failedAfter.remaining)).toBe(Number(failedBefore.remaining) - 1);

  // A read counts against nothing, and says nothing.
  expect(await send('{ timeline(first: 1) { edges { cursor } } }', {}, token)).toMatchObject({ status: 200, limit: null, remaining: null });

  // Over the limit: 429 with Retry-After, and the same headers saying nothing is left.
  const spammer = await app.signUp('headers_spammer');
  for (let i = 0; i < 60; i++) await send('mutation($t: String!) { createPost(text: $t) { id } }', { t: `post ${i}` }, spammer);
  const refused = await send('mutation { createPost(text: "one too many") { id } }', {}, spammer);
  expect(refused).toMatchObject({ status: 429, limit: '60', remaining: '0' });
  expect(Number(refused.retryAfter)).toBeGreaterThan(0);
  expect(refused.reset).toBeGreaterThan(0);
}
