/**
 * `npm run bench:live`: N subscribers, each a user following one author, hold a
 * `timelinePostAdded` subscription open over real WebSockets; the author posts M times through
 * the HTTP API; every delivery is timed from the moment the author's createPost request left.
 * The servers run as separate processes (like production), the subscribers in this one.
 *
 *   npm run bench:live -- [--subscribers 1000] [--posts 100] [--interval-ms 50] [--instances 1]
 *
 * With --instances 2 or more, subscribers are spread over the instances and every post goes
 * through the first one, so most deliveries cross instances through the change stream.
 * MONGODB_URI (if set) is used, in a fresh database dropped at the end; otherwise the embedded
 * stand-in is started. Progress goes to stderr, the markdown report to stdout.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpus, loadavg, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import cliProgress from 'cli-progress';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { loadConfig } from '../src/config.js';
import { connectDatabase, type Database } from '../src/db/connect.js';
import { startStandIn, type StandIn } from '../src/db/standIn.js';
import { createServices } from '../src/services.js';
import { noRequest } from '../src/observability/requestScope.js';

const jwtSecret = 'bench-live-secret-that-is-at-least-32-characters';
const root = fileURLToPath(new URL('..', import.meta.url));

interface Options {
  subscribers: number;
  posts: number;
  intervalMs: number;
  instances: number;
  connectConcurrency: number;
}

function parseOptions(): Options {
  const { values } = parseArgs({
    options: {
      subscribers: { type: 'string', default: '1000' },
      posts: { type: 'string', default: '100' },
      'interval-ms': { type: 'string', default: '50' },
      instances: { type: 'string', default: '1' },
      'connect-concurrency': { type: 'string', default: '100' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log('npm run bench:live -- [--subscribers 1000] [--posts 100] [--interval-ms 50] [--instances 1] [--connect-concurrency 100]');
    process.exit(0);
  }
  const positive = (name: string, value: string, min = 1) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min) throw new Error(`--${name} must be an integer >= ${min}`);
    return n;
  };
  return {
    subscribers: positive('subscribers', values.subscribers),
    posts: positive('posts', values.posts),
    intervalMs: positive('interval-ms', values['interval-ms'], 0),
    instances: positive('instances', values.instances),
    connectConcurrency: positive('connect-concurrency', values['connect-concurrency']),
  };
}

const log = (line: string) => process.stderr.write(`${line}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function inParallel<T>(items: readonly T[], limit: number, task: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await task(items[next++]!);
    }),
  );
}

/** One API server process; resolves with its URL once it serves. */
function startServer(mongodbUri: string): Promise<{ url: string; process: ChildProcess }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx/esm', 'src/main.ts'], {
      cwd: root,
      env: { ...process.env, PORT: '0', MONGODB_URI: mongodbUri, JWT_SECRET: jwtSecret, NODE_ENV: 'production' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /serving (http:\/\/\S+)/.exec(output);
      if (match) resolve({ url: match[1]!, process: child });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (/error/i.test(chunk.toString())) process.stderr.write(`[server ${child.pid}] ${chunk}`);
    });
    child.once('exit', (code) => reject(new Error(`server exited with code ${code} before serving:\n${output}`)));
  });
}

async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await Promise.race([exited, sleep(10_000).then(() => child.kill('SIGKILL'))]);
}

async function graphql(url: string, query: string, variables: Record<string, unknown>, token: string): Promise<any> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json()) as { data?: unknown; errors?: unknown };
  if (!body.data) throw new Error(`GraphQL request failed: ${JSON.stringify(body.errors)}`);
  return body.data;
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const subscriptionQuery = 'subscription { timelinePostAdded { cursor node { id text createdAt author { handle } } } }';

async function main(): Promise<void> {
  const options = parseOptions();
  const loadAtStart = loadavg()[0]!;
  const config = loadConfig({ ...process.env, JWT_SECRET: jwtSecret });
  const databaseName = `feed_bench_live_${randomBytes(4).toString('hex')}`;

  let standIn: StandIn | undefined;
  let database: Database | undefined;
  const servers: ChildProcess[] = [];
  const clients: Client[] = [];
  try {
    let serverUri = config.mongodbUri?.replace(/^(mongodb(?:\+srv)?:\/\/[^/?]+).*$/, '$1');
    if (!serverUri) {
      standIn = await startStandIn({ log });
      serverUri = standIn.uri;
    }
    const query = config.mongodbUri?.match(/\?.*$/)?.[0] ?? '';
    const mongodbUri = `${serverUri}/${databaseName}${query}`;

    log(`starting ${options.instances} server instance(s)…`);
    const urls: string[] = [];
    for (let i = 0; i < options.instances; i++) {
      const server = await startServer(mongodbUri);
      servers.push(server.process);
      urls.push(server.url);
    }

    // Users and follows straight through the services: N password hashes would take minutes.
    log(`creating 1 author and ${options.subscribers} followers…`);
    database = await connectDatabase(mongodbUri);
    const services = createServices(database.db, config);
    const author = 'bench_author';
    await services.graph.createUser({ handle: author, displayName: 'Bench author', passwordHash: 'unused' });
    const followers = Array.from({ length: options.subscribers }, (_, i) => `bench_reader_${i}`);
    const tokens = new Map<string, string>();
    await inParallel(followers, 32, async (handle) => {
      await services.graph.createUser({ handle, displayName: null, passwordHash: 'unused' });
      await services.relations.follow(handle, author, noRequest);
      tokens.set(handle, await services.accounts.tokenFor(handle));
    });
    const authorToken = await services.accounts.tokenFor(author);

    // Subscribers: each records when each bench post arrived.
    const arrivals = new Map<number, number>(); // subscriber * posts + post -> ms
    const sentAt: number[] = [];
    const warmedUp = new Set<number>();
    let delivered = 0;
    let duplicates = 0;
    let unexpected = 0;
    const closes: string[] = [];
    const progress = new cliProgress.SingleBar(
      { format: '{phase} [{bar}] {value}/{total} {extra}', stream: process.stderr, hideCursor: true },
      cliProgress.Presets.shades_classic,
    );

    progress.start(options.subscribers, 0, { phase: 'connecting ', extra: '' });
    let connected = 0;
    await inParallel(
      followers.map((handle, index) => ({ handle, index })),
      options.connectConcurrency,
      ({ handle, index }) =>
        new Promise<void>((resolve, reject) => {
          const url = urls[index % urls.length]!.replace(/^http/, 'ws');
          const client = createClient({
            url,
            webSocketImpl: WebSocket,
            connectionParams: { authorization: `Bearer ${tokens.get(handle)}` },
            retryAttempts: 0,
            on: {
              connected: () => {
                connected += 1;
                progress.update(connected);
                resolve();
              },
              closed: (event) => {
                const { code, reason } = event as { code: number; reason: string };
                if (code !== 1000) closes.push(`${code} ${reason}`);
              },
            },
          });
          clients.push(client);
          client.subscribe<{ timelinePostAdded: { node: { text: string } } }>(
            { query: subscriptionQuery },
            {
              next: (result) => {
                const now = performance.now();
                const text = result.data?.timelinePostAdded.node.text ?? '';
                if (text.startsWith('warm-up')) return void warmedUp.add(index);
                const match = /^bench (\d+)$/.exec(text);
                if (!match) return void (unexpected += 1);
                const key = index * options.posts + Number(match[1]);
                if (arrivals.has(key)) return void (duplicates += 1);
                arrivals.set(key, now);
                delivered += 1;
              },
              error: (error) => reject(error instanceof Error ? error : new Error(JSON.stringify(error))),
              complete: () => {},
            },
          );
        }),
    );
    progress.stop();

    // Every subscription is registered once every subscriber has seen a warm-up post.
    log('waiting until every subscription receives a warm-up post…');
    const warmUpDeadline = performance.now() + 60_000;
    for (let i = 0; warmedUp.size < options.subscribers; i++) {
      if (performance.now() > warmUpDeadline) throw new Error(`only ${warmedUp.size} subscribers received a warm-up post`);
      await graphql(urls[0]!, 'mutation($t: String!) { createPost(text: $t) { id } }', { t: `warm-up ${i}` }, authorToken);
      await sleep(500);
    }

    const expected = options.subscribers * options.posts;
    progress.start(expected, 0, { phase: 'delivering ', extra: '' });
    const ticker = setInterval(() => progress.update(delivered), 200);
    const mutationLatencies: number[] = [];
    const started = performance.now();
    for (let k = 0; k < options.posts; k++) {
      sentAt[k] = performance.now();
      await graphql(urls[0]!, 'mutation($t: String!) { createPost(text: $t) { id } }', { t: `bench ${k}` }, authorToken);
      mutationLatencies.push(performance.now() - sentAt[k]!);
      if (options.intervalMs > 0) await sleep(options.intervalMs);
    }
    const postedFor = performance.now() - started;
    const deliveryDeadline = performance.now() + 30_000;
    while (delivered < expected && performance.now() < deliveryDeadline) await sleep(50);
    const deliveredFor = performance.now() - started;
    clearInterval(ticker);
    progress.update(delivered);
    progress.stop();

    const latencies: number[] = [];
    for (const [key, at] of arrivals) latencies.push(at - sentAt[key % options.posts]!);
    latencies.sort((a, b) => a - b);
    mutationLatencies.sort((a, b) => a - b);
    const ms = (value: number) => `${value.toFixed(1)} ms`;

    const lines = [
      `## bench:live — ${new Date().toISOString()}`,
      '',
      `Machine: ${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB; Node ${process.version}; ` +
        `database: ${standIn ? 'embedded stand-in (mongo-java-server)' : 'MONGODB_URI'}; ` +
        `FEED_STRATEGY=${config.feedStrategy}, LIVE_EVENTS=${config.live.events}; ` +
        `1-min load average ${loadAtStart.toFixed(1)} at start, ${loadavg()[0]!.toFixed(1)} at the end`,
      '',
      '| subscribers | instances | posts | interval | deliveries expected | delivered | missing | duplicates | latency p50 | p99 | max | createPost p50 | deliveries/s |',
      '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
      `| ${options.subscribers} | ${options.instances} | ${options.posts} | ${options.intervalMs} ms | ${expected} | ${delivered} | ${expected - delivered} | ${duplicates} | ` +
        `${ms(percentile(latencies, 50))} | ${ms(percentile(latencies, 99))} | ${ms(latencies.at(-1) ?? Number.NaN)} | ` +
        `${ms(percentile(mutationLatencies, 50))} | ${Math.round(delivered / (deliveredFor / 1000))} |`,
      '',
      `Latency: from the author's createPost request leaving to the subscriber receiving the event. ` +
        `Posting took ${(postedFor / 1000).toFixed(1)} s; the last delivery arrived ${((deliveredFor - postedFor) / 1000).toFixed(2)} s after the last post was sent.`,
    ];
    if (closes.length > 0) lines.push('', `Connections closed by the server: ${closes.length} (${[...new Set(closes)].join('; ')})`);
    if (unexpected > 0) lines.push('', `Unexpected events: ${unexpected}`);
    console.log(lines.join('\n'));
    if (delivered < expected || duplicates > 0) process.exitCode = 1;
  } finally {
    await Promise.all(clients.map((client) => client.dispose()));
    await Promise.all(servers.map(stopServer));
    if (database) {
      await database.db.dropDatabase().catch(() => {});
      await database.close();
    }
    await standIn?.stop();
  }
}

main().catch((error: unknown) => {
  console.error('bench:live failed:', error);
  process.exit(1);
});
