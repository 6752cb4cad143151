import { ApolloServer } from '@apollo/server';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { serverSelectionTimeoutMs } from '../../src/db/connect.js';
import { startStandIn, type StandIn } from '../../src/db/standIn.js';
import { startExecutionPair } from '../support/executionPair.js';
import { rawPost } from '../support/rawPost.js';
import { startTestApp, withDatabaseName, type TestApp } from '../support/testApp.js';

/**
 * A request during an outage is answered once the driver gives up choosing a server (2 s), where
 * its default would hang for 30 s. The bound tells the two apart and leaves a busy machine 8 s.
 */
const answeredWithinMs = serverSelectionTimeoutMs + 8_000;

/**
 * A query sent again after Apollo has validated and compiled it is run without Apollo's pipeline
 * (src/api/compiledExecution.ts, answerDirectly). A client must not be able to tell: every answer,
 * clean or not, is byte for byte the one an instance without that path (interpreted execution) gives.
 */
describe('queries answered without Apollo’s pipeline', () => {
  let compiled: TestApp;
  let interpreted: TestApp;
  let token: string;
  const apolloRequests = vi.spyOn(ApolloServer.prototype, 'executeHTTPGraphQLRequest');

  beforeAll(async () => {
    ({ compiled, interpreted, token } = await startExecutionPair(['one', 'two', 'three']));
  });
  afterAll(async () => {
    apolloRequests.mockRestore();
    await interpreted?.stop();
    await compiled?.stop();
  });
  afterEach(() => apolloRequests.mockClear());

  const page = 'query Page($after: String) { timeline(first: 2, after: $after) { edges { cursor node { id text createdAt author { handle displayName } } } pageInfo { hasNextPage endCursor } } }';
  const cases: [string, { query: string; variables?: unknown; operationName?: unknown }, Record<string, string>][] = [
    ['a timeline page', { query: page }, {}],
    ['a page from a cursor, with an allowed origin', { query: page, variables: { after: 'CURSOR' } }, { origin: 'http://localhost:5173' }],
    ['a page for Accept: */*', { query: page }, { accept: '*/*' }],
    ['a page for a client preferring application/graphql-response+json', { query: page }, { accept: 'application/graphql-response+json, application/json;q=0.9' }],
    ['a page for a client that takes no JSON', { query: page }, { accept: 'text/plain' }],
    ['a page without a token', { query: page }, { authorization: '' }],
    ['a page with a forged token', { query: page }, { authorization: 'Bearer forged' }],
    ['a malformed cursor', { query: page, variables: { after: 'not a cursor' } }, {}],
    ['a variable of the wrong type', { query: page, variables: { after: 7 } }, {}],
    ['variables that are not an object', { query: page, variables: [1] }, {}],
    ['an operation name that names none', { query: page, operationName: 'Other' }, {}],
    ['an empty operation name', { query: page, operationName: '' }, {}],
    ['an operation name of one NUL character', { query: page, operationName: '\u0000' }, {}],
    ['an error beside data', { query: 'query Two {\n  viewer { handle }\n  timeline(first: 0) { edges { cursor } }\n}' }, {}],
    ['a query over its cost budget', { query: '{ timeline(first: 100) { edges { node { replies(first: 100) { edges { node { text } } } } } } }' }, {}],
    ['a query with unknown body fields', { query: page, extensions: {} } as never, {}],
    ['a mutation refused', { query: 'mutation { deletePost(id: "000000000000000000000000") }' }, {}],
  ];

  it.each(cases)('answers %s exactly as Apollo does', async (_name, body, headers) => {
    const cursor = (await compiled.gql(page, {}, token)).data.timeline.pageInfo.endCursor as string;
    const text = JSON.stringify(body).replace('CURSOR', cursor);
    const send = (app: TestApp) => post(app.url, text, { authorization: `Bearer ${token}`, ...headers });
    // The first request of a document is interpreted and the second compiled, both through Apollo.
    await send(compiled);
    await send(compiled);
    const fromCompiled = await send(compiled);
    const fromInterpreted = await send(interpreted);
    expect(fromCompiled).toEqual(fromInterpreted);
  });

  it('takes clean results of known queries past Apollo, and everything else through it', async () => {
    const body = (after: string | null) => JSON.stringify({ query: page, variables: { after } });
    const headers = { authorization: `Bearer ${token}` };
    await post(compiled.url, body(null), headers);
    await post(compiled.url, body(null), headers);
    apolloRequests.mockClear();

    const first = await post(compiled.url, body(null), headers);
    const next = await post(compiled.url, body(JSON.parse(first.text).data.timeline.pageInfo.endCursor), headers);
    expect(JSON.parse(first.text).data.timeline.edges.map((edge: { node: { text: string } }) => edge.node.text)).toEqual(['three', 'two']);
    expect(JSON.parse(next.text).data.timeline.edges.map((edge: { node: { text: string } }) => edge.node.text)).toEqual(['one']);
    expect(apolloRequests).not.toHaveBeenCalled();

    await post(compiled.url, body('not a cursor'), headers);
    await post(compiled.url, body(null), { authorization: 'Bearer forged' });
    expect(apolloRequests).toHaveBeenCalledTimes(2);
  });

  it('checks the cost of a known query with each request’s variables', async () => {
    const query = 'query($n: Int) { timeline(first: $n) { edges { node { replies(first: $n) { edges { node { text } } } } } } }';
    const send = (app: TestApp, n: number) => post(app.url, JSON.stringify({ query, variables: { n } }), { authorization: `Bearer ${token}` });
    await send(compiled, 1);
    await send(compiled, 1);
    expect(JSON.parse((await send(compiled, 1)).text).data.timeline.edges).toHaveLength(1);
    const refused = await send(compiled, 100);
    expect(JSON.parse(refused.text).errors[0].extensions.code).toBe('QUERY_TOO_COMPLEX');
    expect(refused).toEqual(await send(interpreted, 100));
  });

  it('runs a query with errors once, then lets Apollo answer with what it gave', async () => {
    // Each run of the query reads the timeline once. Keyword filters are their owner's only: an
    // error, and `user` null beside the page.
    const query = '{ timeline(first: 2) { edges { node { text likeCount } } } user(handle: "writer") { keywordFilters { phrase } } }';
    const ask = () => compiled.gql(query, {}, token);
    await ask();
    await ask();
    const pages = vi.spyOn(compiled.services.timelines, 'timeline');
    let answer: Awaited<ReturnType<typeof ask>> | undefined;
    let runs = 0;
    try {
      answer = await ask();
      runs = pages.mock.calls.length;
    } finally {
      pages.mockRestore();
    }
    expect(answer!.data).toEqual({ timeline: { edges: [{ node: { text: 'three', likeCount: 0 } }, { node: { text: 'two', likeCount: 0 } }] }, user: null });
    expect(answer!.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(runs).toBe(1);
    expect(apolloRequests).toHaveBeenCalledTimes(3);
  });
});

describe('a known query during a database outage', () => {
  let database: StandIn;
  let app: TestApp;

  beforeAll(async () => {
    database = await startStandIn();
    // Time buckets: their pages read the reader's buckets on every request (fanout on read merges
    // warm pages from outboxes held in process, the cache strategy from its held copy of the cache,
    // and both would answer through a short outage).
    app = await startTestApp({ MONGODB_URI: withDatabaseName(database.uri, 'direct_outage'), LIVE_EVENTS: 'local', FANOUT_WORKERS: '0', FEED_STRATEGY: 'time-buckets' });
  });
  afterAll(async () => {
    await app?.stop().catch(() => undefined);
    await database?.stop();
  });

  it('is answered SERVICE_UNAVAILABLE at once, by Apollo, as a page error', async () => {
    const token = await app.signUp('survivor');
    await app.gql('mutation { createPost(text: "hi") { id } }', {}, token);
    // A bucket page reads the database on every request, however warm the process is.
    const query = '{ timeline { edges { node { text } } } }';
    for (let sent = 0; sent < 3; sent++) expect((await app.gql(query, {}, token)).data.timeline.edges).toHaveLength(1);

    await database.stop();
    const started = Date.now();
    const answer = await app.gql(query, {}, token);
    expect(Date.now() - started).toBeLessThan(answeredWithinMs);
    // The token check is served from this process, so the request runs and its page fails: 200 with the error, as Apollo answers it.
    expect(answer).toMatchObject({ status: 200, data: null });
    expect(answer.errors).toEqual([
      { message: 'The database is unavailable; try again shortly', path: ['timeline'], extensions: { code: 'SERVICE_UNAVAILABLE' } },
    ]);
  });
});

/** Headers given as '' are not sent. */
function post(url: string, body: string, headers: Record<string, string>) {
  return rawPost(url, body, Object.fromEntries(Object.entries(headers).filter(([, value]) => value !== '')));
}
