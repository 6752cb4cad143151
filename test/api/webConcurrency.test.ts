import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, liveClient, subscribePostAdded } from '../live/liveClient.js';

/**
 * `WEB_CONCURRENCY=2 npm start` as a user runs it: two server processes on one port and one
 * database, live updates correct whichever process takes a request, and a killed process replaced.
 */
describe('WEB_CONCURRENCY: several server processes on one port', () => {
  let primary: ChildProcess;
  let output = '';
  const listening = () => [...output.matchAll(/listening on \S+: (http:\/\/\S+\/graphql) .*\(server process (\d+)\)/g)];

  beforeAll(async () => {
    const environment: Record<string, string | undefined> = { ...process.env, WEB_CONCURRENCY: '2', PORT: '0', HOST: '127.0.0.1', JWT_SECRET: 'x'.repeat(40) };
    delete environment.MONGODB_URI;
    primary = spawn(process.execPath, ['--import', 'tsx/esm', 'src/main.ts', '--in-memory'], { env: environment, stdio: ['ignore', 'pipe', 'pipe'] });
    primary.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    primary.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await eventually(() => listening().length === 2, `two server processes listen:\n${output}`, 60_000);
  }, 90_000);
  afterAll(async () => {
    if (primary.exitCode === null) {
      await new Promise((resolve) => {
        primary.once('exit', resolve);
        primary.kill('SIGTERM');
      });
    }
  });

  it('shares one port, delivers every post live across processes, and replaces a killed process', async () => {
    const [first, second] = listening();
    expect(first![1]).toBe(second![1]); // one URL, one port
    expect(first![2]).not.toBe(second![2]);
    const url = first![1]!;
    const gql = async (query: string, token?: string) => {
      // A new connection per request, so the cluster spreads them over both processes.
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', connection: 'close', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: JSON.stringify({ query }),
      });
      return (await response.json()) as any;
    };
    const reader = (await gql('mutation { signUp(handle: "reader", password: "correct horse") { token } }')).data.signUp.token;
    const writer = (await gql('mutation { signUp(handle: "writer", password: "correct horse") { token } }')).data.signUp.token;
    expect((await gql('mutation { follow(handle: "writer") { handle } }', reader)).data.follow.handle).toBe('writer');

    const client = liveClient({ url }, reader);
    const live = subscribePostAdded(client);
    try {
      // The subscription lives in one process; wait until it is open there (a probe post arrives).
      // Probes until one arrives, however long the processes take: only a subscription that never
      // opens runs out the minute.
      let probe = 0;
      for (const deadline = performance.now() + 60_000; live.results.length === 0; ) {
        expect(performance.now(), 'no probe post ever arrived live').toBeLessThan(deadline);
        await gql(`mutation { createPost(text: "probe ${probe++}") { id } }`, writer);
        await live.waitFor(1, 200).catch(() => {}); // wakes as soon as one arrives
      }
      const spread = () => live.results.map((edge) => edge.node.text).filter((text) => text.startsWith('spread'));
      for (let i = 0; i < 10; i++) await gql(`mutation { createPost(text: "spread ${i}") { id } }`, writer);
      await eventually(() => spread().length === 10, 'every post arrived live', 30_000);
      expect(spread()).toEqual(Array.from({ length: 10 }, (_, i) => `spread ${i}`));

      // kill -9 one server process: the primary starts another, and the API keeps answering.
      process.kill(Number(second![2]), 'SIGKILL');
      await eventually(() => listening().length === 3, `a replacement process listens:\n${output}`, 60_000);
      expect((await gql('{ viewer { handle } }', reader)).data.viewer.handle).toBe('reader');
    } finally {
      live.stop();
      await client.dispose();
    }
  }, 120_000);
});
