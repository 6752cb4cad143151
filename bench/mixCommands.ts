/**
 * `npm run bench:mix-commands`: every database command of Socialite's traffic model (80 % timeline
 * reads, 10 % posts, 5 % follows, 5 % unfollows), sent one request at a time to a server as `npm
 * start` runs it (its fanout workers in process, live events in process), by command and
 * collection, per 100 operations. What each operation costs the database, whatever the machine:
 * the operations' answers and the work they queued (counted until the queue is drained).
 */
import { parseArgs } from 'node:util';
import type { CommandStartedEvent } from 'mongodb';
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

async function measure(uri: string, strategy: FeedStrategyName, users: number, operations: number): Promise<Map<string, number>> {
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
    await drained(app.services.work.queue.isDrained.bind(app.services.work.queue));

    const tally = new Map<string, number>();
    const record = (event: CommandStartedEvent) => {
      if (event.commandName === 'getMore') return;
      const name = `${event.commandName} ${event.command[event.commandName]}`;
      tally.set(name, (tally.get(name) ?? 0) + 1);
    };
    app.database.client.on('commandStarted', record);
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
      await drained(app.services.work.queue.isDrained.bind(app.services.work.queue));
    } finally {
      app.database.client.off('commandStarted', record);
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

function report(strategy: string, operations: number, tally: Map<string, number>): void {
  const total = [...tally.values()].reduce((sum, n) => sum + n, 0);
  console.log(`\n${strategy}: ${((100 * total) / operations).toFixed(1)} commands per 100 operations\n`);
  console.log('| command | per 100 operations |\n|---|--:|');
  for (const [name, n] of [...tally].sort((a, b) => b[1] - a[1])) console.log(`| ${name} | ${((100 * n) / operations).toFixed(1)} |`);
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
