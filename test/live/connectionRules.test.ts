import type { Client, FormattedExecutionResult } from 'graphql-ws';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startTestApp, type TestApp } from '../support/testApp.js';
import {
  closeEventFor,
  eventually,
  liveClient,
  subscribePostAdded,
  subscriptionsOpen,
  webSocketUrl,
  runOverWebSocket,
  LiveClients,
  type CloseEventLike,
} from './liveClient.js';

const codesOf = (errors: readonly { extensions?: { code?: unknown } }[] | undefined) => (errors ?? []).map((e) => e.extensions?.code);

describe('who may connect, and how many', () => {
  let app: TestApp;
  const tokens: Record<string, string> = {};
  const clients = new LiveClients(() => app, tokens);
  const connect = (handle: string) => clients.connect(handle);

  beforeAll(async () => {
    app = await startTestApp({
      LIVE_CONNECTION_INIT_TIMEOUT_MS: '300',
      LIVE_MAX_CONNECTIONS_PER_USER: '2',
      LIVE_MAX_SUBSCRIPTIONS_PER_CONNECTION: '3',
    });
    for (const handle of ['ursula', 'victor']) tokens[handle] = await app.signUp(handle);
  });
  afterEach(async () => {
    await clients.disposeAll();
    await eventually(() => app.services.live.stats().webSockets === 0, 'every socket is closed');
  });
  afterAll(() => app?.stop());

  it('closes a connection without a token with 4401 and says what to send', async () => {
    const closed = await closeEventFor(app, {});
    expect(closed.code).toBe(4401);
    expect(closed.reason).toMatch(/authorization.*Bearer/);
  });

  it('closes a connection whose authorization is not "Bearer <token>" with 4401 and says how to send it', async () => {
    for (const authorization of [tokens.ursula!, `Token ${tokens.ursula!}`, 42]) {
      const closed = await closeEventFor(app, { authorization });
      expect(closed).toMatchObject({ code: 4401, reason: expect.stringContaining('"Bearer <token>"') });
    }
    expect(app.services.live.stats().connections).toBe(0);
  });

  it('closes a connection with a forged or malformed token with 4403', async () => {
    const forged = tokens.ursula!.slice(0, -4) + 'AAAA';
    for (const authorization of [`Bearer ${forged}`, 'Bearer not-a-token']) {
      const closed = await closeEventFor(app, { authorization });
      expect(closed).toMatchObject({ code: 4403, reason: expect.stringMatching(/invalid or expired/) });
    }
    expect(app.services.live.stats().connections).toBe(0);
  });

  it('closes a socket that never sends connection_init once the timeout passes', async () => {
    const started = performance.now();
    const socket = new WebSocket(webSocketUrl(app), 'graphql-transport-ws');
    const closed = await new Promise<CloseEventLike>((resolve) =>
      socket.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
    );
    const waited = performance.now() - started;
    expect(closed).toEqual({ code: 4408, reason: 'Connection initialisation timeout' });
    expect(waited).toBeGreaterThanOrEqual(250);
    expect(waited).toBeLessThan(2500);
  });

  it('limits subscriptions per connection: one too many closes the connection with 4429', async () => {
    const client = connect('ursula');
    const subscriptions = [subscribePostAdded(client), subscribePostAdded(client), subscribePostAdded(client)];
    await subscriptionsOpen(app, 3);
    const fourth = subscribePostAdded(client);
    const closed = (await fourth.ended) as CloseEventLike;
    expect(closed).toMatchObject({ code: 4429, reason: 'Too many subscriptions on this connection (at most 3)' });
    // The whole connection goes, so nothing it opened lingers on the server.
    for (const subscription of subscriptions) expect(await subscription.ended).toMatchObject({ code: 4429 });
    await subscriptionsOpen(app, 0);
    await eventually(() => app.services.live.stats().connections === 0, 'the connection is released');
  });

  it('limits connections per user, counting only open ones', async () => {
    const first = connect('ursula');
    const second = connect('ursula');
    const victors = connect('victor');
    subscribePostAdded(first);
    subscribePostAdded(second);
    subscribePostAdded(victors);
    await subscriptionsOpen(app, 3);

    const third = subscribePostAdded(connect('ursula'));
    expect(await third.ended).toMatchObject({ code: 4429, reason: 'Too many live connections for this user (at most 2)' });
    expect(app.services.live.stats().connections).toBe(3);

    // Once one of them is gone, ursula may connect again.
    await first.dispose();
    await eventually(() => app.services.live.stats().connections === 2, 'the closed connection is released');
    subscribePostAdded(connect('ursula'));
    await subscriptionsOpen(app, 3);
  });
});

describe('operation errors over WebSocket', () => {
  let app: TestApp;
  let token: string;
  let client: Client;

  beforeAll(async () => {
    app = await startTestApp({ MAX_QUERY_DEPTH: '4' });
    token = await app.signUp('wanda');
    client = liveClient(app, token);
  });
  afterAll(async () => {
    await client?.dispose();
    await app?.stop();
  });

  it('carries the same extensions.code as HTTP for the same document', async () => {
    const documents = [
      '{ timeline(first: 1000) { edges { cursor } } }', // BAD_USER_INPUT from a resolver
      'subscription { timelinePostAdded { nope } }', // validation
      '{ viewer { posts { edges { node { author { posts { edges { cursor } } } } } } } }', // depth limit
      'query($n: Int!) { timeline(first: $n) { edges { cursor } } }', // missing variable
      'subscription { timelinePostAdded {', // syntax
    ];
    for (const query of documents) {
      const overHttp = await app.gql(query, {}, token);
      const overWebSocket = await runOverWebSocket(client, query);
      const wsErrors = [...overWebSocket.errors, ...overWebSocket.results.flatMap((r) => r.errors ?? [])];
      expect(codesOf(wsErrors), query).toEqual(codesOf(overHttp.errors));
      expect(codesOf(wsErrors), query).not.toContain(undefined);
      expect(wsErrors.map((e) => e.message), query).toEqual(overHttp.errors!.map((e) => e.message));
    }
  });

  it('answers a subscription sent over HTTP with where to send it', async () => {
    for (const query of ['subscription { timelinePostAdded { cursor } }', 'subscription { timelinePostRemoved }']) {
      const result = await app.gql(query, {}, token);
      expect(result.errors).toMatchObject([
        { message: expect.stringMatching(/WebSocket.*graphql-transport-ws/), extensions: { code: 'BAD_USER_INPUT' } },
      ]);
    }
  });

  it('keeps the connection open after a malformed operation', async () => {
    let opened = 0;
    let closed = 0;
    const own = liveClient(app, token, { on: { opened: () => void (opened += 1), closed: () => void (closed += 1) } });
    try {
      expect(codesOf((await runOverWebSocket(own, 'subscription {')).errors)).toEqual(['GRAPHQL_PARSE_FAILED']);
      // The codes HTTP gives the same mistakes.
      const two = 'query Mine { viewer { handle } } query Theirs { viewer { handle } }';
      expect(codesOf((await runOverWebSocket(own, two, 'Nobody')).errors)).toEqual(['OPERATION_RESOLUTION_FAILURE']);
      expect(codesOf((await runOverWebSocket(own, two)).errors)).toEqual(['OPERATION_RESOLUTION_FAILURE']);
      const result = await runOverWebSocket(own, '{ viewer { handle } }');
      expect(result.results).toEqual([{ data: { viewer: { handle: 'wanda' } } }]);
      expect({ opened, closed }).toEqual({ opened: 1, closed: 0 });
    } finally {
      await own.dispose();
    }
  });
});
