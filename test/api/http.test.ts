import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawPost as post } from '../support/rawPost.js';
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

  it('answers /livez, and /readyz with each check, /healthz being the same as /readyz', async () => {
    const live = await fetch(app.url.replace('/graphql', '/livez'));
    expect(live.status).toBe(200);
    expect(await live.json()).toEqual({ status: 'ok' });
    for (const path of ['/readyz', '/healthz']) {
      const response = await fetch(app.url.replace('/graphql', path));
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ status: 'ok', accepting: true, database: true, liveEvents: true });
    }
  });

  it('turns /readyz to 503 once draining, while /livez and GraphQL still answer', async () => {
    const draining = await startTestApp();
    try {
      draining.drain();
      const ready = await fetch(draining.url.replace('/graphql', '/readyz'));
      expect(ready.status).toBe(503);
      expect(await ready.json()).toMatchObject({ status: 'unavailable', accepting: false, database: true });
      expect((await fetch(draining.url.replace('/graphql', '/livez'))).status).toBe(200);
      expect((await draining.gql('{ __typename }')).data).toEqual({ __typename: 'Query' });
    } finally {
      await draining.stop();
    }
  });

  it('answers a malformed body with a GraphQL-shaped 400', async () => {
    const response = await fetch(app.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{ not json' });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { errors: { extensions: { code: string } }[] };
    expect(body.errors[0]!.extensions.code).toBe('BAD_REQUEST');
  });

  // A JSON POST with a Content-Length is served without Express (src/api/graphqlPost.ts); a chunked
  // one still goes through Express. A client must not be able to tell which path answered it.
  it('answers a POST the same whether its body comes with a length or chunked', async () => {
    const cases: { body: string; headers?: Record<string, string> }[] = [
      { body: JSON.stringify({ query: '{ __typename }' }), headers: { origin: 'http://localhost:5173' } },
      { body: JSON.stringify({ query: '{ __typename }' }), headers: { origin: 'https://elsewhere.example' } },
      { body: JSON.stringify({ query: '{ __typename }' }), headers: { 'content-type': 'application/json; charset=utf-8' } },
      { body: JSON.stringify({ query: '{ nope }' }) },
      { body: JSON.stringify({ query: 'mutation { createPost(text: "hi") { id } }' }) },
      { body: JSON.stringify({ query: '{ viewer { handle } }' }), headers: { authorization: 'Bearer forged' } },
      { body: JSON.stringify([{ query: '{ __typename }' }]) },
      { body: '"a string"' },
      { body: '{ not json' },
    ];
    for (const { body, headers = {} } of cases) {
      const framed = await post(app.url, body, headers, 'length');
      const chunked = await post(app.url, body, headers, 'chunked');
      expect({ body, ...framed }).toEqual({ body, ...chunked });
    }
    // The cases above reach every branch that matters: answers from Apollo and from the transport.
    const statuses = await Promise.all(cases.map(({ body, headers }) => post(app.url, body, headers ?? {}, 'length')));
    expect(new Set(statuses.map((answer) => answer.status))).toEqual(new Set([200, 400]));
  });

  it('keeps serving when clients announce a body and hang up halfway through it', async () => {
    const target = new URL(app.url);
    const body = JSON.stringify({ query: '{ __typename }' });
    await Promise.all(
      Array.from({ length: 200 }, () =>
        new Promise<void>((resolve) => {
          const socket = connect(Number(target.port), target.hostname, () => {
            socket.write(`POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 9)}`);
            setTimeout(() => socket.destroy(), 5);
          });
          socket.on('close', () => resolve());
          socket.on('error', () => resolve());
        }),
      ),
    );
    const answer = await post(app.url, body, {}, 'length');
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.text)).toEqual({ data: { __typename: 'Query' } });
  });
});
