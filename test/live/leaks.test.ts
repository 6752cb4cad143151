import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/testApp.js';
import { eventually, follow, liveClient, subscribePostAdded, subscriptionsOpen } from './liveClient.js';

// A real collection between measurements, whether or not the worker was started with --expose-gc.
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

async function heapAfterCollection(): Promise<number> {
  for (let i = 0; i < 4; i++) {
    collectGarbage();
    await new Promise((resolve) => setImmediate(resolve));
  }
  return process.memoryUsage().heapUsed;
}

function activeResources(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const name of process.getActiveResourcesInfo()) counts.set(name, (counts.get(name) ?? 0) + 1);
  return counts;
}

describe('1,000 cycles of connect, subscribe, disconnect', () => {
  let app: TestApp;
  const readers = Array.from({ length: 20 }, (_, i) => `reader_${i}`);
  const tokens: Record<string, string> = {};
  let author: string;
  let cyclesRun = 0;

  beforeAll(async () => {
    app = await startTestApp();
    author = await app.signUp('leak_author');
    for (const handle of readers) {
      tokens[handle] = await app.signUp(handle);
      await follow(app, tokens[handle]!, 'leak_author');
    }
  });
  afterAll(() => app?.stop());

  /**
   * Twenty connections at a time: sixteen subscribe, receive one post and disconnect; four
   * disconnect right after subscribing, at whatever point the server has reached with them.
   */
  async function cycles(count: number): Promise<void> {
    for (let done = 0; done < count; done += readers.length) {
      const steady = readers.slice(0, 16).map((handle) => liveClient(app, tokens[handle]!));
      const subscriptions = steady.map((client) => subscribePostAdded(client));
      await subscriptionsOpen(app, steady.length);
      const abrupt: Client[] = readers.slice(16).map((handle) => liveClient(app, tokens[handle]!));
      for (const client of abrupt) {
        subscribePostAdded(client);
        void client.dispose();
      }
      await app.gql('mutation { createPost(text: "tick") { id } }', {}, author);
      await Promise.all(subscriptions.map((subscription) => subscription.waitFor(1)));
      await Promise.all(steady.map((client) => client.dispose()));
      await eventually(() => {
        const stats = app.services.live.stats();
        return stats.webSockets === 0 && stats.connections === 0 && stats.subscriptions === 0;
      }, 'every connection of the batch is gone');
      cyclesRun += readers.length;
    }
  }

  it('leave no subscribers, sockets, listeners, timers or retained heap behind', async () => {
    await cycles(300); // warm-up: connection pools, JIT, buffers
    const listenersBefore = app.services.live.stats().sourceListeners;
    const resourcesBefore = activeResources();
    const heapBefore = await heapAfterCollection();

    cyclesRun = 0;
    await cycles(1000);
    expect(cyclesRun).toBe(1000);

    expect(app.services.live.stats()).toEqual({
      connections: 0,
      webSockets: 0,
      subscriptions: 0,
      queuedEvents: 0,
      sourceListeners: listenersBefore,
      sourceRestarts: 0,
    });
    expect(listenersBefore).toBe(1);

    // Timers and sockets: one left per cycle would be a thousand. The slack is for the database
    // driver, whose connection pool may still grow a little under the same concurrency.
    const resourcesAfter = activeResources();
    const grown = [...resourcesAfter].filter(([name, count]) => count > (resourcesBefore.get(name) ?? 0) + 20);
    expect(grown, `before: ${JSON.stringify([...resourcesBefore])}`).toEqual([]);

    // Measured: the heap settles 1.5-2 MB above the warm-up level (JIT code, pools) and stays there
    // over thousands more cycles. A leaked connection (socket, graphql-ws context, request context)
    // costs well over 10 kB, so even a 4 kB leak per cycle would cross this line.
    const heapGrowth = (await heapAfterCollection()) - heapBefore;
    expect(heapGrowth).toBeLessThan(4 * 1024 * 1024);
  }, 120_000);
});
