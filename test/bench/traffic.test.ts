import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../../bench/generate.js';
import { httpClient, mixFrom, runTraffic, type Operations } from '../../bench/traffic.js';

/** The workload benchmark's load generator, against a server whose speed the test controls. */
describe('the workload traffic generator', () => {
  let server: Server;
  let baseUrl: string;
  /** One request at a time, each taking `serviceMs`: a server with a known capacity. */
  let serviceMs = 5;
  let queue = Promise.resolve();

  beforeAll(async () => {
    server = createServer((_request, response) => {
      queue = queue.then(() => new Promise<void>((resolve) => setTimeout(() => {
        response.end('ok');
        resolve();
      }, serviceMs)));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const api: Operations = {
    read: async (_session, send) => ({ ran: 'read', ok: (await send('GET', '/read', {})).status === 200 }),
    post: async (_session, send) => ({ ran: 'post', ok: (await send('POST', '/post', {}, '{}')).status === 200 }),
  };

  it('splits the shares not given evenly over the rest, as Socialite does, and refuses more than 1', () => {
    expect(mixFrom({ read: 0.5 }, ['read', 'scroll', 'post'])).toMatchObject({ read: 0.5, scroll: 0.25, post: 0.25, like: 0 });
    expect(mixFrom({ read: 1 })).toMatchObject({ read: 1, scroll: 0, post: 0, follow: 0 });
    expect(() => mixFrom({ read: 0.8, post: 0.3 })).toThrow(/more than 1/);
  });

  it('offers the target rate in the mix and measures each operation apart', async () => {
    serviceMs = 2;
    const client = httpClient(baseUrl, 4);
    const result = await runTraffic(
      { users: ['a', 'b', 'c'], activeUsers: 3, concurrency: 4, targetRate: 100, mix: mixFrom({ read: 0.75, post: 0.25 }, ['read', 'post']), sessionLength: 5, seconds: 1.5, warmupSeconds: 0.2, random: seededRandom(1) },
      api,
      client.send,
      () => {},
    );
    client.close();
    expect(result.errors).toBe(0);
    expect(result.perSecond).toBeGreaterThan(85);
    expect(result.perSecond).toBeLessThan(115);
    const { read, post } = result.byOperation;
    expect(read!.count).toBeGreaterThan(post!.count * 2); // 3:1 in the mix
    expect(read!.p50).toBeGreaterThanOrEqual(2);
  });

  it('counts the time an operation waited for an overloaded server, instead of offering less load', async () => {
    // Capacity 50/s (20 ms each, one at a time), offered 100/s: the queue grows all the time.
    serviceMs = 20;
    const client = httpClient(baseUrl, 4);
    const result = await runTraffic(
      { users: ['a', 'b', 'c', 'd'], activeUsers: 4, concurrency: 4, targetRate: 100, mix: mixFrom({ read: 1 }), sessionLength: 5, seconds: 1.5, warmupSeconds: 0, random: seededRandom(2) },
      api,
      client.send,
      () => {},
    );
    client.close();
    expect(result.perSecond).toBeLessThan(60);
    // A closed loop would report about 4 × 20 ms; waiting behind the schedule shows as far more.
    expect(result.byOperation.read!.p99).toBeGreaterThan(300);
  });
});
