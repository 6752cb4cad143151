import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { createPost, follow, liveClient, runOverWebSocket, subscriptionsOpen } from '../live/liveClient.js';
import { startTestApp, testDatabaseUri, type TestApp } from '../support/testApp.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

const viewerQuery = 'query Me { viewer { handle } }';
const postAdded = 'subscription PostAdded { timelinePostAdded { node { text } } }';
const untrusted = 'query Other { viewer { handle displayName } }';

async function manifestFile(documents: string[]): Promise<{ path: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'trusted-documents-'));
  const path = join(dir, 'persisted-documents.json');
  await writeFile(path, JSON.stringify(Object.fromEntries(documents.map((text) => [`sha256:${sha256(text)}`, text]))));
  return { path, remove: () => rm(dir, { recursive: true, force: true }) };
}

async function post(app: Pick<TestApp, 'url'>, body: unknown, token?: string) {
  const response = await fetch(app.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as any };
}

async function get(app: Pick<TestApp, 'url'>, parameters: Record<string, string>, token: string) {
  const response = await fetch(`${app.url}?${new URLSearchParams(parameters)}`, {
    headers: { accept: 'application/json', authorization: `Bearer ${token}`, 'apollo-require-preflight': 'true' },
  });
  return { status: response.status, body: (await response.json()) as any };
}

const codeOf = (answer: { body: any }) => answer.body.errors?.[0]?.extensions?.code;

describe('automatic persisted queries, where any document may run', () => {
  let app: RunningApp;
  const logLines: string[] = [];
  let token: string;

  beforeAll(async () => {
    const config = loadConfig({ PORT: '0', JWT_SECRET: 'test-secret-that-is-at-least-32-characters', RATE_LIMIT_SIGNUPS_PER_ADDRESS: '100000' });
    const logger = createLogger({ level: 'info', destination: { write: (line: string) => void logLines.push(line) } });
    app = await startApp(config, { mongodbUri: testDatabaseUri(), logger });
    const signedUp = await post(app, { query: 'mutation { signUp(handle: "apq_user", password: "correct horse battery") { token } }' });
    token = signedUp.body.data.signUp.token;
  });
  afterAll(async () => {
    await app?.database.db.dropDatabase();
    await app?.stop();
  });

  it('registers a document by its hash and then runs it by the hash alone', async () => {
    const extensions = { persistedQuery: { version: 1, sha256Hash: sha256(viewerQuery) } };
    const unknown = await post(app, { extensions }, token);
    expect(codeOf(unknown)).toBe('PERSISTED_QUERY_NOT_FOUND');
    expect(await post(app, { query: viewerQuery, extensions }, token)).toMatchObject({ status: 200, body: { data: { viewer: { handle: 'apq_user' } } } });
    expect(await post(app, { extensions }, token)).toMatchObject({ status: 200, body: { data: { viewer: { handle: 'apq_user' } } } });
  });

  it('answers a hash that is not its query\'s with 400 and a code of its own, over POST and GET, and logs no error', async () => {
    const before = logLines.length;
    const wrong = { persistedQuery: { version: 1, sha256Hash: sha256('something else') } };
    const posted = await post(app, { query: viewerQuery, extensions: wrong }, token);
    expect(posted.status).toBe(400);
    expect(posted.body).toEqual({ errors: [{ message: expect.stringMatching(/not the hash/), extensions: { code: 'PERSISTED_QUERY_HASH_MISMATCH' } }] });
    const viaGet = await get(app, { query: viewerQuery, extensions: JSON.stringify(wrong) }, token);
    expect(viaGet.status).toBe(400);
    expect(codeOf(viaGet)).toBe('PERSISTED_QUERY_HASH_MISMATCH');
    const otherVersion = await post(app, { query: viewerQuery, extensions: { persistedQuery: { version: 2, sha256Hash: sha256(viewerQuery) } } }, token);
    expect([otherVersion.status, codeOf(otherVersion)]).toEqual([400, 'PERSISTED_QUERY_VERSION_NOT_SUPPORTED']);
    const errorLines = logLines.slice(before).map((line) => JSON.parse(line)).filter((line) => line.level >= 50);
    expect(errorLines).toEqual([]);
    expect(logLines.slice(before).join('')).not.toMatch(/stack|INTERNAL_SERVER_ERROR/);
  });
});

describe('trusted documents only', () => {
  let app: TestApp;
  let manifest: Awaited<ReturnType<typeof manifestFile>>;
  let token: string;
  let authorToken: string;

  beforeAll(async () => {
    // The test's own sign-ups and posts are documents too: the manifest holds them.
    const signUp = 'mutation($handle: String!, $password: String!) { signUp(handle: $handle, password: $password) { token } }';
    const createPostText = 'mutation($text: String!) { createPost(text: $text) { id createdAt } }';
    const followText = 'mutation($h: String!) { follow(handle: $h) { handle } }';
    manifest = await manifestFile([viewerQuery, postAdded, signUp, createPostText, followText]);
    app = await startTestApp({ TRUSTED_DOCUMENTS: manifest.path, TRUSTED_DOCUMENTS_ONLY: 'true' });
    token = await app.signUp('trusting');
    authorToken = await app.signUp('trusted_author');
  });
  afterAll(async () => {
    await app?.stop();
    await manifest?.remove();
  });

  it('runs a trusted document named by documentId, by APQ hash, by GET, or sent as its exact text', async () => {
    const expected = { status: 200, body: { data: { viewer: { handle: 'trusting' } } } };
    expect(await post(app, { documentId: `sha256:${sha256(viewerQuery)}` }, token)).toMatchObject(expected);
    expect(await post(app, { extensions: { persistedQuery: { version: 1, sha256Hash: sha256(viewerQuery) } } }, token)).toMatchObject(expected);
    expect(await post(app, { query: viewerQuery }, token)).toMatchObject(expected);
    expect(await get(app, { documentId: `sha256:${sha256(viewerQuery)}` }, token)).toMatchObject(expected);
  });

  it('refuses any other document with 400 and a stable code, before it is parsed', async () => {
    const notInList = await post(app, { query: untrusted }, token);
    expect([notInList.status, codeOf(notInList)]).toEqual([400, 'PERSISTED_QUERY_NOT_IN_LIST']);
    // Not even parsed: a syntax error answers the same.
    expect(codeOf(await post(app, { query: '{ not graphql' }, token))).toBe('PERSISTED_QUERY_NOT_IN_LIST');
    const unknownId = await post(app, { documentId: `sha256:${sha256(untrusted)}` }, token);
    expect([unknownId.status, codeOf(unknownId)]).toEqual([400, 'PERSISTED_QUERY_NOT_FOUND']);
    // An APQ client cannot register a document here: the hash is unknown, and the text is untrusted.
    const extensions = { persistedQuery: { version: 1, sha256Hash: sha256(untrusted) } };
    expect(codeOf(await post(app, { extensions }, token))).toBe('PERSISTED_QUERY_NOT_FOUND');
    expect(codeOf(await post(app, { query: untrusted, extensions }, token))).toBe('PERSISTED_QUERY_NOT_IN_LIST');
    expect(codeOf(await post(app, { extensions }, token))).toBe('PERSISTED_QUERY_NOT_FOUND');
    expect(codeOf(await get(app, { query: untrusted }, token))).toBe('PERSISTED_QUERY_NOT_IN_LIST');
    // A trusted id with another document's text is a mismatch, not a way to run that text.
    const smuggled = await post(app, { documentId: `sha256:${sha256(viewerQuery)}`, query: untrusted }, token);
    expect([smuggled.status, codeOf(smuggled)]).toEqual([400, 'PERSISTED_QUERY_HASH_MISMATCH']);
  });

  it('applies the same to live updates: a trusted subscription by hash runs, anything else is refused', async () => {
    await follow(app, token, 'trusted_author');
    const client = liveClient(app, token);
    try {
      const refused = await runOverWebSocket(client, untrusted);
      expect(refused.errors[0]?.extensions?.code).toBe('PERSISTED_QUERY_NOT_IN_LIST');
      // The hash travels as APQ's extension; graphql-ws needs a query string, and an empty one names nothing.
      const byHash = await new Promise<{ text: string }>((resolve, reject) => {
        const stop = client.subscribe<{ timelinePostAdded: { node: { text: string } } }>(
          { query: '', extensions: { persistedQuery: { version: 1, sha256Hash: sha256(postAdded) } } },
          {
            next: (result) => {
              if (result.errors) reject(new Error(JSON.stringify(result.errors)));
              if (result.data) {
                stop();
                resolve(result.data.timelinePostAdded.node);
              }
            },
            error: reject,
            complete: () => {},
          },
        );
        void subscriptionsOpen(app, 1).then(() => createPost(app, authorToken, 'a trusted live post'));
      });
      expect(byHash).toEqual({ text: 'a trusted live post' });
    } finally {
      await client.dispose();
    }
  });
});
