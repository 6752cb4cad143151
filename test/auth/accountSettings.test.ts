import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { heardEverything } from '../support/announcements.js';
import { startTestApp, type TestApp } from '../support/testApp.js';
import { liveClient, subscribePostAdded, subscriptionsOpen, type CloseEventLike, type Subscription, type PostEdge } from '../live/liveClient.js';

const password = 'correct horse battery';
const viewerQuery = '{ viewer { handle } }';
/** Needs a signed-in viewer: a refused token is UNAUTHENTICATED here (`viewer` is null instead). */
const timelineQuery = '{ timeline(first: 1) { edges { cursor } } }';
const changePassword = 'mutation($c: String!, $n: String!) { changePassword(current: $c, next: $n) { token user { handle } } }';

/**
 * The close event that ends `subscription`, or a failure saying it stayed open. Only the change's
 * announcement closes it (nothing checks open connections on a timer), so the wait is generous: a
 * loaded machine is slow, not wrong.
 */
async function closeEventOf(subscription: Subscription<PostEdge>, ms = 20_000): Promise<CloseEventLike> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`still open after ${ms} ms`)), ms)));
  try {
    return (await Promise.race([subscription.ended, timeout])) as CloseEventLike;
  } finally {
    clearTimeout(timer);
  }
}

/** Password changes and logging out everywhere end earlier tokens on every instance, over HTTP and WebSocket. */
describe('token revocation across two instances', () => {
  let a: TestApp;
  let b: TestApp;
  const clients: Client[] = [];
  const code = (result: { errors?: { extensions?: { code?: string } }[] }) => result.errors?.[0]?.extensions?.code;
  const logIn = (app: TestApp, handle: string, pass: string) =>
    app.gql('mutation($h: String!, $p: String!) { logIn(handle: $h, password: $p) { token } }', { h: handle, p: pass });
  const open = (app: TestApp, token: string) => {
    const client = liveClient(app, token);
    clients.push(client);
    return subscribePostAdded(client);
  };

  beforeAll(async () => {
    a = await startTestApp();
    b = await startTestApp({ MONGODB_URI: a.mongodbUri });
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.dispose()));
    await b?.stop();
    await a?.stop();
  });

  it('changePassword: earlier tokens fail on both instances and their subscriptions close with 4403; the new token works', async () => {
    const first = await a.signUp('pia', password);
    const second = (await logIn(b, 'pia', password)).data.logIn.token as string;
    const other = await a.signUp('quinn', password);
    // Both instances hold pia (and her token generation) before the change.
    expect((await a.gql(viewerQuery, {}, first)).data.viewer.handle).toBe('pia');
    expect((await b.gql(viewerQuery, {}, second)).data.viewer.handle).toBe('pia');
    const onA = open(a, first);
    const onB = open(b, second);
    const bystander = open(b, other);
    await subscriptionsOpen(a, 1);
    await subscriptionsOpen(b, 2);

    const changed = await a.gql(changePassword, { c: password, n: 'a brand new secret' }, first);
    expect(changed.data.changePassword.user.handle).toBe('pia');
    const fresh = changed.data.changePassword.token as string;

    expect(await closeEventOf(onA)).toMatchObject({ code: 4403 });
    expect(await closeEventOf(onB)).toMatchObject({ code: 4403 });
    for (const [app, token] of [[a, first], [b, first], [a, second], [b, second]] as const) {
      expect(code(await app.gql(timelineQuery, {}, token))).toBe('UNAUTHENTICATED');
      expect(code(await app.gql('mutation { createPost(text: "old token") { id } }', {}, token))).toBe('UNAUTHENTICATED');
    }
    expect((await b.gql(viewerQuery, {}, fresh)).data.viewer.handle).toBe('pia');
    expect((await a.gql(viewerQuery, {}, fresh)).data.viewer.handle).toBe('pia');
    expect(code(await logIn(a, 'pia', password))).toBe('UNAUTHENTICATED');
    expect((await logIn(b, 'pia', 'a brand new secret')).data.logIn.token).toEqual(expect.any(String));

    // Someone else's connection is untouched, and the new token subscribes.
    const stillOpen = open(a, fresh);
    await subscriptionsOpen(a, 1);
    await a.gql('mutation { createPost(text: "after the change") { id } }', {}, fresh);
    expect((await stillOpen.waitFor(1)).map((edge) => edge.node.text)).toEqual(['after the change']);
    expect(bystander.errors).toEqual([]);
    expect(b.services.live.stats().subscriptions).toBe(1);
  });

  it('logOutEverywhere: every token fails on both instances, the caller’s own included, and subscriptions close', async () => {
    const first = await a.signUp('rosa', password);
    const second = (await logIn(b, 'rosa', password)).data.logIn.token as string;
    const onB = open(b, first);
    await subscriptionsOpen(b, 2); // quinn's from the test above, and this one

    expect((await b.gql('mutation { logOutEverywhere }', {}, second)).data).toEqual({ logOutEverywhere: true });
    expect(await closeEventOf(onB)).toMatchObject({ code: 4403 });
    await heardEverything(b, a); // the instance that did not make the change has heard of it too
    for (const app of [a, b]) {
      for (const token of [first, second]) expect(code(await app.gql(timelineQuery, {}, token))).toBe('UNAUTHENTICATED');
    }
    // Signing in again works, with a token that does.
    const again = (await logIn(a, 'rosa', password)).data.logIn.token as string;
    expect((await b.gql(viewerQuery, {}, again)).data.viewer.handle).toBe('rosa');
  });

  it('refuses a wrong current password (FORBIDDEN), a bad new one and a signed-out caller, changing nothing', async () => {
    const token = await a.signUp('sven', password);
    const wrong = await a.gql(changePassword, { c: 'not my password', n: 'another good secret' }, token);
    expect(code(wrong)).toBe('FORBIDDEN');
    const short = await a.gql(changePassword, { c: password, n: 'short' }, token);
    expect(code(short)).toBe('BAD_USER_INPUT');
    // Half of a surrogate pair hashes as U+FFFD: any other half would then open the account too.
    const broken = await a.gql(changePassword, { c: password, n: 'long enough \ud800' }, token);
    expect(code(broken)).toBe('BAD_USER_INPUT');
    expect(code(await a.gql(changePassword, { c: password, n: 'another good secret' }))).toBe('UNAUTHENTICATED');
    expect(code(await a.gql('mutation { logOutEverywhere }'))).toBe('UNAUTHENTICATED');
    // Nothing changed: the token still works, and so does the old password.
    expect((await b.gql(viewerQuery, {}, token)).data.viewer.handle).toBe('sven');
    expect((await logIn(b, 'sven', password)).data.logIn.token).toEqual(expect.any(String));
  });

  it('counts wrong current passwords against the log-in limits: guessing is slowed as at log-in', async () => {
    const token = await a.signUp('tove', password);
    const codes: (string | undefined)[] = [];
    for (let attempt = 0; attempt < 6; attempt++) {
      codes.push(code(await a.gql(changePassword, { c: `guess number ${attempt}`, n: 'another good secret' }, token)));
    }
    expect(codes).toEqual(['FORBIDDEN', 'FORBIDDEN', 'FORBIDDEN', 'FORBIDDEN', 'FORBIDDEN', 'RATE_LIMITED']);
    expect((await a.gql(viewerQuery, {}, token)).data.viewer.handle).toBe('tove');
  });
});
