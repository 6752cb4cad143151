import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultDatabaseName } from '../../src/db/connect.js';
import { startStandIn } from '../../src/db/standIn.js';
import { liveClient, subscribePostAdded } from '../live/liveClient.js';
import { startServerProcess, stopped } from '../support/serverProcess.js';

/** `npm start` as a user runs it, as a real child process, on the embedded database in `dataDir`. */
const startServer = (dataDir: string) =>
  startServerProcess({ DATA_DIR: dataDir, MONGODB_URI: undefined, JWT_SECRET: undefined, NODE_ENV: undefined });

async function gql(url: string, query: string, token?: string): Promise<any> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query }),
  });
  return response.json();
}

describe('DATA_DIR: the embedded database keeps its data across restarts', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'feed-data-'));
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it('keeps accounts, posts, follows and tokens when npm start is stopped and started again', async () => {
    let server = await startServer(dataDir);
    const signUp = await gql(server.url, 'mutation { signUp(handle: "keeper", password: "correct horse") { token } }');
    const token = signUp.data.signUp.token as string;
    await gql(server.url, 'mutation { signUp(handle: "friend", password: "correct horse") { token } }');
    await gql(server.url, 'mutation { follow(handle: "friend") { handle } }', token);
    const posted = await gql(server.url, 'mutation { createPost(text: "still here after a restart") { id } }', token);
    await stopped(server.child, 'SIGTERM');

    server = await startServer(dataDir);
    try {
      // The old token still works: its secret was kept in the database too.
      const viewer = await gql(server.url, '{ viewer { handle followingCount } timeline { edges { node { id text } } } }', token);
      expect(viewer.data).toEqual({
        viewer: { handle: 'keeper', followingCount: 1 },
        timeline: { edges: [{ node: { id: posted.data.createPost.id, text: 'still here after a restart' } }] },
      });
      const logIn = await gql(server.url, 'mutation { logIn(handle: "keeper", password: "correct horse") { user { handle } } }');
      expect(logIn.data.logIn.user.handle).toBe('keeper');
      // Indexes came back too: the handle is still unique.
      const again = await gql(server.url, 'mutation { signUp(handle: "keeper", password: "correct horse") { token } }');
      expect(again.errors[0].extensions.code).toBe('CONFLICT');
    } finally {
      await stopped(server.child, 'SIGTERM');
    }
  }, 120_000);

  it('loses no acknowledged write when the database itself is killed with SIGKILL, and refuses a second user of the directory', async () => {
    const directory = join(dataDir, 'killed');
    let standIn = await startStandIn({ dataDir: directory });
    const second = await startStandIn({ dataDir: directory }).catch((error: Error) => error);
    expect(second).toBeInstanceOf(Error);
    expect(String(second)).toContain('in use by another stand-in');

    let client = await MongoClient.connect(standIn.uri);
    const notes = client.db('feed').collection<{ _id: number; text: string }>('notes');
    await notes.createIndex({ text: 1 }, { unique: true });
    await notes.insertMany(Array.from({ length: 50 }, (_, i) => ({ _id: i, text: `note ${i}` })));
    await notes.updateOne({ _id: 7 }, { $set: { text: 'changed' } });
    await notes.deleteOne({ _id: 8 });
    process.kill(standIn.pid, 'SIGKILL');
    await client.close(true);
    await standIn.stop();

    standIn = await startStandIn({ dataDir: directory });
    try {
      client = await MongoClient.connect(standIn.uri);
      const restored = client.db('feed').collection<{ _id: number; text: string }>('notes');
      expect(await restored.countDocuments()).toBe(49);
      expect((await restored.findOne({ _id: 7 }))?.text).toBe('changed');
      expect(await restored.findOne({ _id: 8 })).toBeNull();
      await expect(restored.insertOne({ _id: 100, text: 'note 1' })).rejects.toMatchObject({ code: 11000 });
      await client.close();
    } finally {
      await standIn.stop();
    }
  }, 120_000);
});

/**
 * `npm start` on the embedded database it starts itself is the only server there: its live events
 * stay in the process, and nothing about them is written to the database. LIVE_EVENTS set by hand
 * still decides.
 */
describe('live events of a server on its own embedded database', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'feed-events-'));
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  /** Posts once with a live follower watching, then counts what the database kept of the events. */
  async function postAndCountStoredEvents(directory: string, liveEvents: string | undefined): Promise<number> {
    const server = await startServerProcess({ DATA_DIR: directory, MONGODB_URI: undefined, JWT_SECRET: undefined, NODE_ENV: undefined, LIVE_EVENTS: liveEvents });
    try {
      const author = (await gql(server.url, 'mutation { signUp(handle: "author", password: "correct horse") { token } }')).data.signUp.token as string;
      const reader = (await gql(server.url, 'mutation { signUp(handle: "reader", password: "correct horse") { token } }')).data.signUp.token as string;
      await gql(server.url, 'mutation { follow(handle: "author") { handle } }', reader);
      const client = liveClient(server, reader);
      try {
        const added = subscribePostAdded(client);
        // The subscription starts when the server has it: post until one arrives, however long that
        // takes on a busy machine; only a subscription that never opens runs out the minute.
        for (let attempt = 0, deadline = performance.now() + 60_000; added.results.length === 0 && performance.now() < deadline; attempt++) {
          await gql(server.url, `mutation { createPost(text: "live either way ${attempt}") { id } }`, author);
          await added.waitFor(1, 200).catch(() => {}); // wakes as soon as one arrives
        }
        expect(added.results[0]?.node.text).toMatch(/^live either way/);
        // A post, a follow and its group are announced by their own writes; a deletion by an event document.
        expect((await gql(server.url, `mutation { deletePost(id: "${added.results[0]!.node.id}") }`, author)).data.deletePost).toBe(true);
      } finally {
        await client.dispose();
      }
    } finally {
      await stopped(server.child, 'SIGTERM');
    }
    const standIn = await startStandIn({ dataDir: directory });
    const client = new MongoClient(standIn.uri);
    try {
      return await client.db(defaultDatabaseName).collection('live_events').countDocuments();
    } finally {
      await client.close();
      await standIn.stop();
    }
  }

  it('keeps them in the process by default, and in the database when LIVE_EVENTS=change-stream', async () => {
    expect(await postAndCountStoredEvents(join(dataDir, 'default'), undefined)).toBe(0);
    expect(await postAndCountStoredEvents(join(dataDir, 'chosen'), 'change-stream')).toBeGreaterThan(0);
  }, 120_000);
});
