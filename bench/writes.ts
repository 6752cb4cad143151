/**
 * `npm run bench:writes`: what each write costs, all of it. For follow, unfollow, post, like and
 * delete in each strategy, the database commands the request sends and those its queued work and
 * announcements send after it answers (the fanout workers' notification and delivery work, the
 * change stream), by command and collection, and the embedded database's CPU per write. The API
 * and a worker (as `npm run worker` runs one) each run in this process on a client of their own,
 * so every command is counted and told apart: the API's are the request's (its change stream's
 * getMores aside), the worker's come after.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { CommandStartedEvent } from 'mongodb';
import { startApp, type RunningApp } from '../src/app.js';
import { feedStrategies, loadConfig, type FeedStrategyName } from '../src/config.js';
import { connectDatabase, withDatabaseName, type Database } from '../src/db/connect.js';
import { startStandIn } from '../src/db/standIn.js';
import { quietLogger } from '../src/logger.js';
import { createServices, prepareDatabase, startWorkers, type Services } from '../src/services.js';
import { generateGraph, seededRandom } from './generate.js';
import { int, list } from './options.js';
import { buildTimelines } from './prepare.js';

const usage = `Usage: npm run bench:writes -- [options]

  --writes <n>         writes of each kind (default 300)
  --concurrency <n>    writes in flight (default 4)
  --strategies <list>  of ${feedStrategies.join(', ')} (default fanout-on-read,cache)
`;

const kinds = ['follow', 'unfollow', 'post', 'like', 'delete'] as const;
type WriteKind = (typeof kinds)[number];

interface Cost {
  /** Commands per write, by "command collection". */
  request: Map<string, number>;
  after: Map<string, number>;
  /** The stand-in's CPU per write, milliseconds. */
  databaseMs: number;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ args: process.argv.slice(2), strict: true, options: { writes: { type: 'string' }, concurrency: { type: 'string' }, strategies: { type: 'string' }, help: { type: 'boolean', short: 'h' } } });
  if (values.help) return void console.error(usage);
  const writes = int('writes', values.writes, 300, 10);
  const concurrency = int('concurrency', values.concurrency, 4, 1);
  const strategies = list('strategies', values.strategies, ['fanout-on-read', 'cache'] as FeedStrategyName[]);
  const standIn = await startStandIn({ log: () => {} });
  try {
    for (const strategy of strategies) report(strategy, await measure(standIn.uri, standIn.pid, strategy, writes, concurrency));
  } finally {
    await standIn.stop();
  }
}

async function measure(serverUri: string, databasePid: number, strategy: FeedStrategyName, writes: number, concurrency: number): Promise<Map<WriteKind, Cost>> {
  const uri = withDatabaseName(serverUri, `writes_${strategy.replace(/-/g, '_')}_${Date.now().toString(36)}`);
  const environment = { PORT: '0', FEED_STRATEGY: strategy, JWT_SECRET: 'bench-secret-that-is-at-least-32-characters', RATE_LIMIT_POSTS_PER_MINUTE: '1000000', RATE_LIMIT_FOLLOWS_PER_MINUTE: '1000000' };
  const worker = await connectDatabase(uri, { monitorCommands: true });
  const graph = await generateGraph(worker.db, { users: 2000, followsPerUser: 10, zipf: 1, postsPerUser: 5, days: 7, seed: 42 }, () => {});
  await buildTimelines(worker.db, loadConfig(environment), strategy, graph.posts);
  const app = await startApp(loadConfig({ ...environment, FANOUT_WORKERS: '0' }), { mongodbUri: uri, logger: quietLogger, mongoClientOptions: { monitorCommands: true } });
  const workerServices = createServices(worker.db, loadConfig(environment));
  await prepareDatabase(workerServices);
  startWorkers(workerServices, quietLogger);
  try {
    const writers = graph.handles.slice(0, 50);
    const tokens = new Map(await Promise.all(writers.map(async (handle) => [handle, await app.services.accounts.tokenFor(handle)] as const)));
    const send = async (handle: string, query: string, variables: Record<string, unknown>) => {
      const response = await fetch(app.url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens.get(handle)}` }, body: JSON.stringify({ query, variables }) });
      const body = (await response.json()) as { data?: any; errors?: unknown };
      if (body.errors) throw new Error(JSON.stringify(body.errors));
      return body.data;
    };
    const random = seededRandom(5);
    const followed = new Map<string, string[]>();
    const posts: [string, string][] = [];
    const plans: Record<WriteKind, (i: number) => [string, () => Promise<unknown>]> = {
      follow: (i) => {
        const handle = writers[i % writers.length]!;
        const followee = graph.handles[100 + Math.floor(random() * (graph.handles.length - 100))]!;
        followed.set(handle, [...(followed.get(handle) ?? []), followee]);
        return [handle, () => send(handle, 'mutation ($h: String!) { follow(handle: $h) { followerCount } }', { h: followee })];
      },
      unfollow: (i) => {
        const handle = writers[i % writers.length]!;
        const followee = followed.get(handle)!.pop()!;
        return [handle, () => send(handle, 'mutation ($h: String!) { unfollow(handle: $h) { followerCount } }', { h: followee })];
      },
      post: (i) => {
        const handle = writers[i % writers.length]!;
        return [handle, async () => posts.push([handle, (await send(handle, 'mutation ($t: String!) { createPost(text: $t) { id } }', { t: `write ${i}` })).createPost.id])];
      },
      like: (i) => {
        const handle = writers[(i + 1) % writers.length]!;
        return [handle, () => send(handle, 'mutation ($id: ID!) { likePost(id: $id) { likeCount } }', { id: posts[i % posts.length]![1] })];
      },
      delete: (i) => {
        const [handle, id] = posts[i]!;
        return [handle, () => send(handle, 'mutation ($id: ID!) { deletePost(id: $id) }', { id })];
      },
    };
    const costs = new Map<WriteKind, Cost>();
    // A first pass of every kind, not counted: the first writes pay for compiling (the stand-in's
    // JIT most of all) and for loading what the rest find held.
    for (const counted of [false, true]) {
      posts.length = 0;
      for (const kind of kinds) {
        const planned = Array.from({ length: counted ? writes : Math.ceil(writes / 3) }, (_, i) => plans[kind](i));
        const cost = await run(app, { database: worker, services: workerServices }, databasePid, planned, concurrency);
        if (counted) costs.set(kind, cost);
      }
    }
    return costs;
  } finally {
    await workerServices.work.stop();
    await app.services.live.stop();
    await app.database.db.dropDatabase().catch(() => {});
    await app.stop();
    await worker.close();
  }
}

/** Runs the writes, then waits for the worker to finish what they queued, counting both sides' commands. */
async function run(
  app: RunningApp,
  worker: { database: Database; services: Services },
  databasePid: number,
  planned: [string, () => Promise<unknown>][],
  concurrency: number,
): Promise<Cost> {
  const request = new Map<string, number>();
  const after = new Map<string, number>();
  const add = (into: Map<string, number>, event: CommandStartedEvent) => {
    const collection = event.commandName === 'getMore' ? event.command.collection : event.command[event.commandName];
    const key = `${event.commandName} ${collection}`;
    into.set(key, (into.get(key) ?? 0) + 1);
  };
  const fromApi = (event: CommandStartedEvent) => add(event.commandName === 'getMore' ? after : request, event);
  const fromWorker = (event: CommandStartedEvent) => add(after, event);
  app.database.client.on('commandStarted', fromApi);
  worker.database.client.on('commandStarted', fromWorker);
  const before = cpuSeconds(databasePid);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < planned.length) await planned[next++]![1]();
    }),
  );
  const deadline = Date.now() + 60_000;
  while (!(await worker.services.fanout.queue.isDrained()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  // The last announcements come back through the change stream.
  await new Promise((resolve) => setTimeout(resolve, 500));
  app.database.client.off('commandStarted', fromApi);
  worker.database.client.off('commandStarted', fromWorker);
  const databaseMs = ((cpuSeconds(databasePid) - before) * 1000) / planned.length;
  const perWrite = (counts: Map<string, number>) => new Map([...counts].map(([key, n]) => [key, n / planned.length]));
  return { request: perWrite(request), after: perWrite(after), databaseMs };
}

function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function report(strategy: FeedStrategyName, costs: Map<WriteKind, Cost>): void {
  const total = (counts: Map<string, number>) => [...counts.values()].reduce((sum, n) => sum + n, 0);
  const top = (counts: Map<string, number>) =>
    [...counts]
      .filter(([, n]) => n >= 0.05)
      .sort((a, b) => b[1] - a[1])
      .map(([key, n]) => `${n.toFixed(n % 1 === 0 ? 0 : 1)} ${key}`)
      .join(', ');
  console.log(`\n${strategy}\n\n| write | request commands | after the answer | database CPU ms / write | request, by command | after, by command |\n|---|--:|--:|--:|---|---|`);
  for (const [kind, cost] of costs) {
    console.log(`| ${kind} | ${total(cost.request).toFixed(1)} | ${total(cost.after).toFixed(1)} | ${cost.databaseMs.toFixed(2)} | ${top(cost.request)} | ${top(cost.after)} |`);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
