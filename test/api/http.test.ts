import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/testApp.js';

describe('the HTTP surface', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app?.stop());

  it('serves GraphiQL to browsers from its own assets', async () => {
    const response = await fetch(app.url, { headers: { accept: 'text/html,application/xhtml+xml' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/text\/html/);
    const html = await response.text();
    expect(html).toMatch(/graphiql/i);
    // Nothing is fetched from elsewhere: no external scripts, styles or fonts.
    expect(html).not.toMatch(/<script[^>]+src=["']https?:/i);
    expect(html).not.toMatch(/<link[^>]+href=["']https?:/i);
    expect(html).not.toMatch(/unpkg\.com|jsdelivr|esm\.sh|fonts\.googleapis/);
  });

  it('still answers GraphQL over GET and POST for programs', async () => {
    const get = await fetch(`${app.url}?query=${encodeURIComponent('{ __typename }')}`, {
      headers: { accept: 'application/json', 'apollo-require-preflight': '1' },
    });
    expect(await get.json()).toEqual({ data: { __typename: 'Query' } });
  });

  it('reports database reachability on /healthz', async () => {
    const response = await fetch(app.url.replace('/graphql', '/healthz'));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok', database: true });
  });

  it('answers a malformed body with a GraphQL-shaped 400', async () => {
    const response = await fetch(app.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{ not json' });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { errors: { extensions: { code: string } }[] };
    expect(body.errors[0]!.extensions.code).toBe('BAD_REQUEST');
  });
});
