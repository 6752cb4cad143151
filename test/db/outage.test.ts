import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverSelectionTimeoutMs } from '../../src/db/connect.js';
import { startStandIn, type StandIn } from '../../src/db/standIn.js';
import { startTestApp, withDatabaseName, type TestApp } from '../support/testApp.js';

/**
 * A request during an outage is answered once the driver gives up choosing a server (2 s), where
 * its default would hang for 30 s. The bound tells the two apart and leaves a busy machine 8 s.
 */
const answeredWithinMs = serverSelectionTimeoutMs + 8_000;

/** The database goes away under a running server, then comes back. */
describe('a database outage', () => {
  let database: StandIn;
  let app: TestApp;
  let port: number;

  beforeAll(async () => {
    database = await startStandIn();
    port = Number(new URL(database.uri).port);
    // Live updates in one process: this test is about requests, not the change stream.
    app = await startTestApp({ MONGODB_URI: withDatabaseName(database.uri, 'outage'), LIVE_EVENTS: 'local', FANOUT_WORKERS: '0' });
  });
  afterAll(async () => {
    await app?.stop().catch(() => undefined);
    await database?.stop();
  });

  it('answers /healthz 503 and queries SERVICE_UNAVAILABLE at once, and recovers by itself', async () => {
    const token = await app.signUp('survivor');
    expect((await fetch(app.url.replace('/graphql', '/healthz'))).status).toBe(200);

    await database.stop();
    let started = Date.now();
    const health = await fetch(app.url.replace('/graphql', '/healthz'));
    expect(health.status).toBe(503);
    // The process itself is fine: nothing should restart it.
    expect((await fetch(app.url.replace('/graphql', '/livez'))).status).toBe(200);
    expect(Date.now() - started).toBeLessThan(answeredWithinMs);

    started = Date.now();
    const anonymous = await app.gql('{ user(handle: "survivor") { handle } }');
    expect(Date.now() - started).toBeLessThan(answeredWithinMs);
    expect(anonymous.errors?.[0]).toMatchObject({ message: 'The database is unavailable; try again shortly', extensions: { code: 'SERVICE_UNAVAILABLE' } });

    started = Date.now();
    const signedIn = await app.gql('{ timeline { edges { cursor } } }', {}, token);
    expect(Date.now() - started).toBeLessThan(answeredWithinMs);
    expect(signedIn.status).toBe(503);
    expect(signedIn.errors?.[0]?.extensions?.code).toBe('SERVICE_UNAVAILABLE');
    expect(JSON.stringify(signedIn)).not.toContain('stacktrace');

    // The database returns (empty: the stand-in keeps nothing); nobody restarts the server.
    database = await startStandIn({ port });
    for (const deadline = Date.now() + 15_000; ; ) {
      if ((await fetch(app.url.replace('/graphql', '/healthz'))).status === 200) break;
      if (Date.now() > deadline) throw new Error('the server did not recover');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect((await app.gql('{ user(handle: "nobody") { handle } }')).data).toEqual({ user: null });
    expect(await app.signUp('newcomer')).toMatch(/\./);
  });
});
