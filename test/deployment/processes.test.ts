import type { ChildProcess } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { liveClient, subscribePostAdded, type CloseEventLike } from '../live/liveClient.js';
import { startServerProcess, stopped } from '../support/serverProcess.js';
import { testDatabaseUri } from '../support/testApp.js';
import { startWorkerProcess } from '../support/workerProcess.js';

/** The settings compose.yaml gives its feed processes, on this test's database. */
const deployment = (mongodbUri: string) => ({
  NODE_ENV: 'production',
  MONGODB_URI: mongodbUri,
  JWT_SECRET: 'a-deployment-secret-of-at-least-32-characters',
  LIVE_EVENTS: 'change-stream',
  FEED_STRATEGY: 'time-buckets',
  METRICS_PORT: '0',
  LOG_LEVEL: 'info',
  SHUTDOWN_DELAY_SECONDS: '1',
  SHUTDOWN_TIMEOUT_SECONDS: '10',
});

interface Instance {
  child: ChildProcess;
  url: string;
  output: () => string;
  /** METRICS_PORT as it chose it (0 in this test). */
  endpoints: string;
}

async function startApi(mongodbUri: string): Promise<Instance> {
  const started = await startServerProcess({ ...deployment(mongodbUri), FANOUT_WORKERS: '0' });
  // Said in the line after the one startServerProcess waits for.
  for (const deadline = Date.now() + 5000; ; await new Promise((resolve) => setTimeout(resolve, 20))) {
    const port = /also on port (\d+) \(METRICS_PORT\)/.exec(started.output())?.[1];
    if (port) return { ...started, endpoints: `http://127.0.0.1:${port}` };
    if (Date.now() > deadline) {
      await stopped(started.child, 'SIGKILL');
      throw new Error(`no METRICS_PORT line:\n${started.output()}`);
    }
  }
}

/**
 * What compose.yaml starts, without containers: two API instances and `npm run worker` on one
 * database, as real processes with the production settings. They serve, share live events and
 * queued work, and drain on SIGTERM.
 */
describe('two API instances and a worker on one database', () => {
  const mongodbUri = testDatabaseUri();
  let apiOne: Instance;
  let apiTwo: Instance;
  let worker: ChildProcess;
  let workerOutput = '';

  const gql = async (instance: Instance, query: string, variables: Record<string, unknown> = {}, token?: string) => {
    const response = await fetch(instance.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify({ query, variables }),
    });
    return (await response.json()) as { data?: any; errors?: unknown[] };
  };
  const signUp = async (instance: Instance, handle: string) =>
    (await gql(instance, 'mutation($h: String!) { signUp(handle: $h, password: "correct horse battery") { token } }', { h: handle })).data!.signUp.token as string;

  beforeAll(async () => {
    const started = await Promise.allSettled([
      startApi(mongodbUri),
      startApi(mongodbUri),
      startWorkerProcess({ ...deployment(mongodbUri), FANOUT_WORKERS: '2' }),
    ]);
    const failure = started.find((result) => result.status === 'rejected');
    if (failure) {
      // Whatever did start must not outlive the test.
      for (const result of started) {
        if (result.status === 'fulfilled') await stopped('child' in result.value ? result.value.child : result.value, 'SIGKILL');
      }
      throw failure.reason;
    }
    const [one, two, workerProcess] = started as [PromiseFulfilledResult<Instance>, PromiseFulfilledResult<Instance>, PromiseFulfilledResult<ChildProcess>];
    [apiOne, apiTwo, worker] = [one.value, two.value, workerProcess.value];
    worker.stdout!.on('data', (chunk: Buffer) => (workerOutput += chunk.toString()));
  }, 120_000);
  afterAll(async () => {
    await Promise.all([apiOne, apiTwo].filter(Boolean).map(({ child }) => stopped(child, 'SIGKILL')));
    if (worker) await stopped(worker, 'SIGKILL');
  });

  it('serve, share live events, and deliver through the worker', async () => {
    const author = await signUp(apiOne, 'deployed_author');
    const reader = await signUp(apiTwo, 'deployed_reader');
    expect((await gql(apiTwo, 'mutation { follow(handle: "deployed_author") { handle } }', {}, reader)).data).toEqual({ follow: { handle: 'deployed_author' } });

    const client = liveClient(apiTwo, reader);
    const live = subscribePostAdded(client);
    // The subscription is open once the instance counts it (its /metrics says so).
    for (const deadline = Date.now() + 10_000; ; ) {
      const metrics = await (await fetch(`${apiTwo.endpoints}/metrics`)).text();
      if (metrics.includes('feed_live_subscriptions{kind="timeline"} 1')) break;
      if (Date.now() > deadline) throw new Error('the subscription did not open');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await gql(apiOne, 'mutation { createPost(text: "from instance one") { id } }', {}, author);
    expect((await live.waitFor(1, 10_000))[0]!.node.text).toBe('from instance one');

    // The APIs run no fanout workers: the post reaches the reader's stored timeline through the worker process.
    for (const deadline = Date.now() + 20_000; ; ) {
      const page = await gql(apiTwo, '{ timeline(first: 5) { edges { node { text } } } }', {}, reader);
      if (page.data?.timeline.edges.some((edge: any) => edge.node.text === 'from instance one')) break;
      if (Date.now() > deadline) throw new Error('the worker did not deliver the post');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // The page may show the post before the worker has logged its task (fanout on read reads the
    // author's posts itself), so its line is waited for, generously, not looked for once.
    const delivered = () =>
      workerOutput
        .split('\n')
        .slice(0, -1) // whole lines only: the last may still be arriving
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .some((line) => line.msg === 'task' && line.kind === 'deliver' && line.outcome === 'done');
    for (const deadline = Date.now() + 20_000; !delivered(); await new Promise((resolve) => setTimeout(resolve, 50))) {
      if (Date.now() > deadline) throw new Error(`the worker logged no finished delivery:\n${workerOutput}`);
    }
    live.stop();
    await client.dispose();
  });

  it('drain on SIGTERM: /readyz turns 503 at once, requests in flight finish, WebSockets close with 1001, and the process exits in time', async () => {
    const token = await signUp(apiTwo, 'deployed_draining');
    let closed: CloseEventLike | null = null;
    const client = liveClient(apiTwo, token, { on: { closed: (event) => (closed = event as CloseEventLike) } });
    const live = subscribePostAdded(client);
    for (const deadline = Date.now() + 10_000; ; ) {
      const metrics = await (await fetch(`${apiTwo.endpoints}/metrics`)).text();
      if (metrics.includes('feed_live_subscriptions{kind="timeline"} 1')) break;
      if (Date.now() > deadline) throw new Error('the subscription did not open');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // A request whose body is still arriving when the signal comes.
    const inFlight = await startRequest(apiTwo.url, JSON.stringify({ query: '{ viewer { handle } }' }), token);
    const exited = new Promise<{ code: number | null; at: number }>((resolve) => apiTwo.child.once('exit', (code) => resolve({ code, at: Date.now() })));

    const signalledAt = Date.now();
    apiTwo.child.kill('SIGTERM');
    // Ordered, not timed: /readyz must say 503 while the server still serves, before the delay ends and it
    // stops taking connections; a loaded machine may take a while to run the signal's handler at all.
    for (const deadline = Date.now() + 10_000; ; ) {
      const ready = await fetch(`${apiTwo.endpoints}/readyz`).catch(() => {
        throw new Error('the server stopped taking connections before /readyz turned 503');
      });
      if (ready.status === 503) {
        expect(await ready.json()).toMatchObject({ status: 'unavailable', accepting: false, database: true });
        break;
      }
      if (Date.now() > deadline) throw new Error('/readyz did not turn 503');
    }
    expect((await fetch(`${apiTwo.endpoints}/livez`)).status).toBe(200);
    // Within SHUTDOWN_DELAY_SECONDS new requests are still served, for clients the balancer has not moved yet.
    expect((await gql(apiTwo, '{ viewer { handle } }', {}, token)).data).toEqual({ viewer: { handle: 'deployed_draining' } });

    await new Promise((resolve) => setTimeout(resolve, 1500)); // past the delay: the server is draining now
    expect(await inFlight.finish()).toMatchObject({ status: 200, body: { data: { viewer: { handle: 'deployed_draining' } } } });
    const { code, at } = await exited;
    expect(code).toBe(0);
    expect(at - signalledAt).toBeLessThan(10_000);
    expect(closed).toMatchObject({ code: 1001 });
    expect(apiTwo.output()).toContain('SIGTERM received, shutting down');

    // The other instance never noticed, and the worker stops as cleanly.
    expect((await gql(apiOne, '{ viewer { handle } }', {}, token)).data).toEqual({ viewer: { handle: 'deployed_draining' } });
    const workerExited = new Promise<number | null>((resolve) => worker.once('exit', (exitCode) => resolve(exitCode)));
    worker.kill('SIGTERM');
    expect(await workerExited).toBe(0);
    await client.dispose();
  });
});

/** A POST whose headers and first half are sent now, the rest by `finish`, which resolves with the answer. */
async function startRequest(url: string, body: string, token: string): Promise<{ finish(): Promise<{ status: number; body: unknown }> }> {
  const target = new URL(url);
  const socket: Socket = await new Promise((resolve, reject) => {
    const opened = connect(Number(target.port), target.hostname, () => resolve(opened));
    opened.once('error', reject);
  });
  let answer = '';
  const ended = new Promise<void>((resolve) => socket.on('end', () => resolve()));
  socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
  const half = Math.floor(body.length / 2);
  socket.write(
    `POST ${target.pathname} HTTP/1.1\r\nHost: ${target.host}\r\nContent-Type: application/json\r\nAuthorization: Bearer ${token}\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, half)}`,
  );
  return {
    async finish() {
      socket.write(body.slice(half));
      await Promise.race([ended, new Promise((resolve) => setTimeout(resolve, 5000))]);
      const [head, ...rest] = answer.split('\r\n\r\n');
      const status = Number(/^HTTP\/1\.1 (\d+)/.exec(head ?? '')?.[1]);
      return { status, body: JSON.parse(rest.join('\r\n\r\n')) as unknown };
    },
  };
}
