import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { webSocketUrl } from '../live/liveClient.js';
import { startTestApp, testDatabaseUri, type TestApp } from '../support/testApp.js';

const app1 = 'https://app.example.com';

/** Pages on other origins, as a browser would send their requests. */
describe('cross-origin browser clients', () => {
  let app: TestApp;
  let production: TestApp;

  const preflight = (target: TestApp, origin: string) =>
    fetch(target.url, {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,authorization' },
    });
  /** Resolves with the HTTP status of the upgrade, or 101 when the socket opened. */
  const upgrade = (target: TestApp, origin?: string) =>
    new Promise<number>((resolve) => {
      const socket = new WebSocket(webSocketUrl(target), 'graphql-transport-ws', origin ? { origin } : {});
      socket.once('open', () => {
        socket.close();
        resolve(101);
      });
      socket.once('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
      socket.once('error', () => undefined);
    });

  beforeAll(async () => {
    app = await startTestApp({ CORS_ORIGINS: `${app1}, https://other.example.org` });
    production = await startTestApp({ NODE_ENV: 'production', MONGODB_URI: testDatabaseUri(), CORS_ORIGINS: app1 });
  });
  afterAll(async () => {
    await app?.stop();
    await production?.services.live.stop();
    await production?.database.db.dropDatabase();
    await production?.stop();
  });

  it('answers the preflight of an allowed origin, and lets its page read over HTTP', async () => {
    const answer = await preflight(app, app1);
    expect(answer.status).toBe(204);
    expect(answer.headers.get('access-control-allow-origin')).toBe(app1);
    expect(answer.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('authorization');

    const token = await app.signUp('cors_reader');
    const response = await fetch(app.url, {
      method: 'POST',
      headers: { origin: app1, 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: '{ timeline { edges { cursor } } }' }),
    });
    expect(response.headers.get('access-control-allow-origin')).toBe(app1);
    expect(((await response.json()) as any).data.timeline.edges).toEqual([]);
  });

  it('gives other origins no CORS headers, so the browser keeps their page out', async () => {
    const answer = await preflight(app, 'https://evil.example.net');
    expect(answer.headers.get('access-control-allow-origin')).toBeNull();
    const response = await fetch(app.url, {
      method: 'POST',
      headers: { origin: 'https://evil.example.net', 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ viewer { handle } }' }),
    });
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('allows pages on localhost outside production only', async () => {
    expect((await preflight(app, 'http://localhost:5173')).headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    expect((await preflight(production, 'http://localhost:5173')).headers.get('access-control-allow-origin')).toBeNull();
    expect((await preflight(production, app1)).headers.get('access-control-allow-origin')).toBe(app1);
  });

  it('refuses WebSocket upgrades from origins outside the list, and accepts clients that send none', async () => {
    expect(await upgrade(app, app1)).toBe(101);
    expect(await upgrade(app, 'https://evil.example.net')).toBe(401);
    expect(await upgrade(production, 'http://localhost:3000')).toBe(401);
    expect(await upgrade(app)).toBe(101);
  });

  it('keeps refusing simple cross-site requests that a page could send without a preflight', async () => {
    const simple = await fetch(`${app.url}?query=${encodeURIComponent('{ viewer { handle } }')}`, { headers: { origin: 'https://evil.example.net' } });
    expect(simple.status).toBe(400);
  });
});
