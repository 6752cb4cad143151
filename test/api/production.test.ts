import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { liveClient, runOverWebSocket } from '../live/liveClient.js';
import { startTestApp, testDatabaseUri, type TestApp } from '../support/testApp.js';

const production = { NODE_ENV: 'production', MONGODB_URI: '' };
const browser = { accept: 'text/html,application/xhtml+xml', 'accept-encoding': 'gzip' };

describe('NODE_ENV=production', () => {
  const apps: TestApp[] = [];
  const start = async (environment: Record<string, string> = {}) => {
    const app = await startTestApp({ ...production, MONGODB_URI: testDatabaseUri(), ...environment });
    apps.push(app);
    return app;
  };
  let app: TestApp;

  beforeAll(async () => {
    app = await start();
  });
  afterAll(async () => {
    for (const running of apps) {
      await running.services.live.stop(); // before the drop, which would end its change stream
      await running.database.db.dropDatabase();
      await running.stop();
    }
  });

  it('does not describe the schema in error messages, over HTTP or WebSocket', async () => {
    const result = await app.gql('{ viewr { handle } }');
    expect(result.errors?.[0]?.message).toBe('Cannot query field "viewr" on type "Query".');
    const token = await app.signUp('producer');
    const client = liveClient(app, token);
    try {
      const { errors } = await runOverWebSocket(client, 'subscription { timelinePostAdde { cursor } }');
      expect(errors[0]?.message).toBe('Cannot query field "timelinePostAdde" on type "Subscription".');
    } finally {
      await client.dispose();
    }
  });

  it('serves no GraphiQL unless GRAPHIQL=true, and then compressed and cacheable', async () => {
    const off = await fetch(app.url, { headers: browser });
    expect(off.headers.get('content-type')).not.toMatch(/html/);

    const withIde = await start({ GRAPHIQL: 'true' });
    const page = await fetch(withIde.url, { headers: browser });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-encoding')).toBe('gzip');
    expect(page.headers.get('cache-control')).toBe('public, max-age=86400');
    const etag = page.headers.get('etag')!;
    expect((await page.text()).toLowerCase()).toContain('graphiql');
    const again = await fetch(withIde.url, { headers: { ...browser, 'if-none-match': etag } });
    expect(again.status).toBe(304);
    // A browser reloading a GraphiQL address with ?query= gets the IDE too.
    const reload = await fetch(`${withIde.url}?query=${encodeURIComponent('{ viewer { handle } }')}`, { headers: browser });
    expect(reload.status).toBe(200);
    expect(reload.headers.get('content-type')).toMatch(/text\/html/);
  });
});
