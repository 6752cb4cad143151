/**
 * `npm run bench:mix-commands`: every database command of Socialite's traffic model (80 % timeline
 * reads, 10 % posts, 5 % follows, 5 % unfollows), sent one request at a time to a server as `npm
 * start` runs it (its fanout workers in process, live events in process), by command and
 * collection, per 100 operations. What each operation costs the database, whatever the machine:
 * the operations' answers and the work they queued (counted until the queue is drained). Beside
 * each count, the time its commands took to answer as the driver saw them, one request at a time:
 * where the database's share of an operation goes.
 */
import { parseArgs } from 'node:util';
import type { CommandStartedEvent, CommandSucceededEvent } from 'mongodb';
import { startApp } from '../src/app.js';
import { feedStrategies, loadConfig, type FeedStrategyName } from '../src/config.js';
import { withDatabaseName } from '../src/db/connect.js';
import { startStandIn } from '../src/db/standIn.js';
import { quietLogger } from '../src/logger.js';
import { seededRandom } from './generate.js';
import { int, list } from './options.js';

const usage = `Usage: npm run bench:mix-commands -- [options]

  --users <n>          accounts, each following about 10 others and with 5 posts (default 200)
  --operations <n>     operations of the mix counted (default 2000)
  --strategies <list>  of ${feedStrategies.join(', ')} (default fanout-on-read,cache)
`;

async function main(): Promise<void> {
  const { values } = parseArgs({ args: process.argv.slice(2), strict: true, options: { users: { type: 'string' }, operations: { type: 'string' }, strategies: { type: 'string' }, help: { type: 'boolean', short: 'h' } } });
  if (values.help) return void console.error(usage);
  const users = int('users', values.users, 200, 10);
  const operations = int('operations', values.operations, 2000, 100);
  const strategies = values.strategies === undefined ? (['fanout-on-read', 'cache'] as FeedStrategyName[]) : list('strategies', values.strategies, feedStrategies);
  const standIn = await startStandIn({ log: () => {} });
  try {
    for (const strategy of strategies) report(strategy, operations, await measure(withDatabaseName(standIn.uri, `mix_${strategy.replace(/-/g, '_')}`), strategy, users, operations));
  } finally {
    await standIn.stop();
  }
}

/** Per command and collection: how many were sent, and the milliseconds they took to answer. */
type Tally = Map<string, { count: number; ms: number }>;

async function measure(uri: string, strategy: FeedStrategyName, users: number, operations: number): Promise<Tally> {
  const environment = {
    PORT: '0',
    FEED_STRATEGY: strategy,
    LIVE_EVENTS: 'local',
    JWT_SECRET: 'bench-secret-that-is-at-least-32-characters',
    RATE_LIMIT_SIGNUPS_PER_ADDRESS: '1000000',
    RATE_LIMIT_POSTS_PER_MINUTE: '1000000',
    RATE_LIMIT_FOLLOWS_PER_MINUTE: '1000000',
  };
  const app = await startApp(loadConfig(environment), { mongodbUri: uri, logger: quietLogger, mongoClientOptions: { monitorCommands: true } });
  try {
    const send = async (token: string | null, query: string, variables: Record<string, unknown> = {}) => {
      const response = await fetch(app.url, { method: 'POST', headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: JSON.stringify({ query, variables }) });
      const body = (await response.json()) as { data?: any; errors?: unknown };
      if (body.errors) throw new Error(JSON.stringify(body.errors));
      return body.data;
    };
    const queueDrained = () => drained(app.services.work.queue.isDrained.bind(app.services.work.queue));
    const handle = (i: number) => `mix_${i}`;
    const tokens: string[] = [];
    for (let i = 0; i < users; i++) tokens.push((await send(null, 'mutation ($h: String!) { signUp(handle: $h, password: "correct horse battery") { token } }', { h: handle(i) })).signUp.token);
    const random = seededRandom(7);
    const pick = () => Math.floor(random() * users);
    const follow = (from: number, to: number) => send(tokens[from]!, 'mutation ($h: String!) { follow(handle: $h) { handle } }', { h: handle(to) });
    for (let i = 0; i < users * 10; i++) {
      const [from, to] = [pick(), pick()];
      if (from !== to) await follow(from, to);
    }
    for (let i = 0; i < users * 5; i++) await send(tokens[pick()]!, 'mutation ($t: String!) { createPost(text: $t) { id } }', { t: `seed ${i}` });
    await queueDrained();
    // Every reader reads once first, as Socialite's benchmark warms up: a strategy's first build of
    // a timeline is not what the mix costs.
    for (const token of tokens) await send(token, '{ timeline(first: 20) { edges { node { id } } } }');
    await queueDrained();

    const tally: Tally = new Map();
    const started = new Map<number, string>();
    const record = (event: CommandStartedEvent) => {
      if (event.commandName === 'getMore') return;
      const name = `${event.commandName} ${event.command[event.commandName]}`;
      started.set(event.requestId, name);
      const kind = tally.get(name) ?? { count: 0, ms: 0 };
      kind.count += 1;
      tally.set(name, kind);
    };
    const answered = (event: CommandSucceededEvent) => {
      const name = started.get(event.requestId);
      if (name === undefined) return;
      started.delete(event.requestId);
      tally.get(name)!.ms += event.duration;
    };
    app.database.client.on('commandStarted', record);
    app.database.client.on('commandSucceeded', answered);
    try {
      for (let i = 0; i < operations; i++) {
        const roll = random() * 100;
        const user = pick();
        if (roll < 80) await send(tokens[user]!, '{ timeline(first: 20) { edges { node { id text createdAt author { handle } } } } }');
        else if (roll < 90) await send(tokens[user]!, 'mutation ($t: String!) { createPost(text: $t) { id } }', { t: `mix ${i}` });
        else if (roll < 95) {
          const followee = pick();
          if (followee !== user) await follow(user, followee);
        } else await send(tokens[user]!, 'mutation ($h: String!) { unfollow(handle: $h) { handle } }', { h: handle(pick()) });
      }
      await queueDrained();
    } finally {
      app.database.client.off('commandStarted', record);
      app.database.client.off('commandSucceeded', answered);
    }
    // The drain's own looks at the queue are the bench's, not the traffic's.
    tally.delete('aggregate fanout_tasks');
    return tally;
  } finally {
    await app.database.db.dropDatabase().catch(() => {});
    await app.stop();
  }
}

async function drained(isDrained: () => Promise<boolean>): Promise<void> {
  while (!(await isDrained())) await new Promise((resolve) => setTimeout(resolve, 20));
}

function report(strategy: string, operations: number, tally: Tally): void {
  const kinds = [...tally].sort((a, b) => b[1].ms - a[1].ms);
  const per100 = (n: number) => ((100 * n) / operations).toFixed(1);
  const count = kinds.reduce((sum, [, kind]) => sum + kind.count, 0);
  const ms = kinds.reduce((sum, [, kind]) => sum + kind.ms, 0);
  console.log(`\n${strategy}: ${per100(count)} commands per 100 operations, answered in ${per100(ms)} ms\n`);
  console.log('| command | per 100 operations | ms to answer them |\n|---|--:|--:|');
  for (const [name, kind] of kinds) console.log(`| ${name} | ${per100(kind.count)} | ${per100(kind.ms)} |`);
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
