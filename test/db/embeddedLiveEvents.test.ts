import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultDatabaseName } from '../../src/db/connect.js';
import { startStandIn } from '../../src/db/standIn.js';
import { liveClient, subscribePostAdded } from '../live/liveClient.js';
import { startServerProcess, stopped } from '../support/serverProcess.js';

async function gql(url: string, query: string, token?: string): Promise<any> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query }),
  });
  return response.json();
}

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
        // The subscription starts when the server has it: post until one arrives.
        for (let attempt = 0; added.results.length === 0 && attempt < 50; attempt++) {
          await gql(server.url, `mutation { createPost(text: "live either way ${attempt}") { id } }`, author);
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        expect(added.results[0]?.node.text).toMatch(/^live either way/);
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
