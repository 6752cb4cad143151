/**
 * `npm run bench:conversations`: what conversations cost at size. Per strategy (embedded bodies,
 * where an edit has copies to rewrite): an author with 10,000 followers posts, then edits the post;
 * the time from the edit's answer until the queue is drained and every sampled follower's timeline
 * shows the new text, and the timeline writes that took. Then, once (threads read `content` alone,
 * the same in every strategy): a thread of 2,000 replies 30 levels deep, and the latency of a page
 * of 50 of its descendants read from start to end. API and workers run in this process, on the
 * embedded stand-in unless MONGODB_URI is set, after a first edit that is not counted.
 */
import { parseArgs } from 'node:util';
import type { CommandStartedEvent, Db } from 'mongodb';
import { startApp, type RunningApp } from '../src/app.js';
import { feedStrategies, loadConfig, type FeedStrategyName } from '../src/config.js';
import { withDatabaseName } from '../src/db/connect.js';
import { startStandIn } from '../src/db/standIn.js';
import { authorsFingerprint } from '../src/feed/strategies/timelineCache.js';
import { quietLogger } from '../src/logger.js';
import { int, list } from './options.js';

const usage = `Usage: npm run bench:conversations -- [options]

  --followers <n>      followers of the author who edits (default 10000)
  --replies <n>        replies in the thread (default 2000)
  --strategies <list>  of ${feedStrategies.join(', ')} (default: the three that materialise timelines)
`;

const percentile = (values: readonly number[], q: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))] ?? Number.NaN;

async function gql(app: RunningApp, token: string, query: string, variables: Record<string, unknown> = {}): Promise<any> {
  const response = await fetch(app.url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify({ query, variables }) });
  const body = (await response.json()) as { data?: any; errors?: unknown };
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data;
}

/** Followers written in the stored layout directly, as test/support/bulkGraph.ts does: 10,000 sign-ups would be 10,000 password hashes. */
async function insertFollowers(db: Db, authorId: string, handles: readonly string[]): Promise<void> {
  const now = new Date();
  await db.collection('users').insertMany(handles.map((handle) => ({ _id: handle as never, displayName: null, passwordHash: '-', createdAt: now, readAt: now, followerCount: 0, followingCount: 1 })));
  await db.collection('following').insertMany(handles.map((handle) => ({ _f: handle, _t: authorId })));
  await db.collection('followers').insertMany(handles.map((handle) => ({ _f: authorId, _t: handle })));
  await db.collection('follow_pairs').insertMany(
    handles.map((handle) => ({ _id: `${handle} ${authorId}` as never, f: handle, t: authorId, want: true, v: 1, applied: 1, counted: true, lease: null, dirty: false, updatedAt: now })),
  );
  await db.collection('users').updateOne({ _id: authorId as never }, { $inc: { followerCount: handles.length } });
  await db.collection('timeline_cache').insertMany(handles.map((handle) => ({ _id: handle as never, _c: [], _h: authorsFingerprint([handle, authorId]), _e: '' })));
}

async function drained(app: RunningApp): Promise<void> {
  while (!(await app.services.work.queue.isDrained())) await new Promise((resolve) => setTimeout(resolve, 10));
}

const environment = (strategy: FeedStrategyName) => ({
  PORT: '0',
  FEED_STRATEGY: strategy,
  TIMELINE_CONTENT: 'embed',
  JWT_SECRET: 'bench-secret-that-is-at-least-32-characters',
  RATE_LIMIT_POSTS_PER_MINUTE: '1000000',
  RATE_LIMIT_SIGNUPS_PER_ADDRESS: '1000000',
  // Every follower counts as an active reader: the whole audience is written.
  FANOUT_PULL_THRESHOLD: '1000000',
});

async function editPropagation(serverUri: string, strategy: FeedStrategyName, followerCount: number) {
  const uri = withDatabaseName(serverUri, `conv_${strategy.replace(/-/g, '_')}_${Date.now().toString(36)}`);
  const app = await startApp(loadConfig(environment(strategy)), { mongodbUri: uri, logger: quietLogger, mongoClientOptions: { monitorCommands: true } });
  try {
    const star = (await gql(app, '', 'mutation { signUp(handle: "star", password: "correct horse battery") { token } }')).signUp.token as string;
    const followers = Array.from({ length: followerCount }, (_, i) => `fan_${String(i).padStart(5, '0')}`);
    await insertFollowers(app.database.db, 'star', followers);
    const sampled = [followers[0]!, followers[Math.floor(followerCount / 2)]!, followers.at(-1)!];
    const tokens = await Promise.all(sampled.map((handle) => app.services.accounts.tokenFor(handle)));
    const id = (await gql(app, star, 'mutation { createPost(text: "before the edit") { id } }')).createPost.id as string;
    await drained(app);
    const writes: CommandStartedEvent[] = [];
    const record = (event: CommandStartedEvent) => {
      if (event.commandName === 'update' && ['timed_buckets', 'sized_buckets', 'timeline_cache'].includes(event.command.update)) writes.push(event);
    };
    app.database.client.on('commandStarted', record);
    const started = performance.now();
    await gql(app, star, 'mutation($id: ID!) { editPost(id: $id, text: "after the edit") { id } }', { id });
    const answered = performance.now() - started;
    await drained(app);
    for (const token of tokens) {
      const page = await gql(app, token, '{ timeline(first: 1) { edges { node { text } } } }');
      if (page.timeline.edges[0]?.node.text !== 'after the edit') throw new Error(`a follower's timeline shows ${JSON.stringify(page.timeline.edges)}`);
    }
    const everywhere = performance.now() - started;
    app.database.client.off('commandStarted', record);
    return { answered, everywhere, updateCommands: writes.length, documentUpdates: writes.reduce((sum, event) => sum + event.command.updates.length, 0) };
  } finally {
    await app.database.db.dropDatabase().catch(() => {});
    await app.stop();
  }
}

async function threadPages(serverUri: string, replyCount: number) {
  const uri = withDatabaseName(serverUri, `conv_thread_${Date.now().toString(36)}`);
  const app = await startApp(loadConfig(environment('fanout-on-read')), { mongodbUri: uri, logger: quietLogger });
  try {
    const tokens = await Promise.all(['ada', 'bea', 'cal'].map(async (handle) => (await gql(app, '', `mutation { signUp(handle: "${handle}", password: "correct horse battery") { token } }`)).signUp.token as string));
    const ids: string[] = [];
    const depths: number[] = [];
    const reply = async (index: number, parent: number | null) => {
      const data = await gql(app, tokens[index % 3]!, 'mutation($to: ID) { createPost(text: "a reply", replyTo: $to) { id } }', { to: parent === null ? null : ids[parent] });
      ids.push(data.createPost.id);
      depths.push(parent === null ? 0 : depths[parent]! + 1);
    };
    await reply(0, null);
    for (let depth = 1; depth <= 30; depth++) await reply(depth, depth - 1);
    let seed = 38;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    while (ids.length <= replyCount) {
      let parent = Math.floor(next() * ids.length);
      while (depths[parent]! >= 30) parent -= 1;
      await reply(ids.length, parent);
    }
    await drained(app);
    const latencies: number[] = [];
    for (let round = 0; round < 3; round++) {
      let after: string | null = null;
      do {
        const started = performance.now();
        const data: any = await gql(app, tokens[round % 3]!, 'query($id: ID!, $after: String) { post(id: $id) { descendants(first: 50, after: $after) { edges { node { id text author { handle } } } pageInfo { hasNextPage endCursor } } } }', { id: ids[0], after });
        latencies.push(performance.now() - started);
        const page = data.post.descendants;
        after = page.pageInfo.hasNextPage ? page.pageInfo.endCursor : null;
      } while (after);
    }
    return { pages: latencies.length, p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99) };
  } finally {
    await app.database.db.dropDatabase().catch(() => {});
    await app.stop();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ args: process.argv.slice(2), strict: true, options: { followers: { type: 'string' }, replies: { type: 'string' }, strategies: { type: 'string' }, help: { type: 'boolean', short: 'h' } } });
  if (values.help) return void console.error(usage);
  const followers = int('followers', values.followers, 10_000, 1);
  const replies = int('replies', values.replies, 2000, 31);
  const strategies = list('strategies', values.strategies, ['time-buckets', 'sized-buckets', 'cache'] as FeedStrategyName[]);
  const standIn = process.env.MONGODB_URI ? null : await startStandIn({ log: () => {} });
  const serverUri = process.env.MONGODB_URI ?? standIn!.uri;
  try {
    console.log(`| strategy (embed) | edit answered | edit in all ${followers.toLocaleString('en')} timelines | timeline update commands | update statements in them |`);
    console.log('|---|--:|--:|--:|--:|');
    // The embedded database's JIT warms up on the first edit it carries: a first round is not counted.
    await editPropagation(serverUri, strategies[0]!, followers);
    for (const strategy of strategies) {
      const result = await editPropagation(serverUri, strategy, followers);
      console.log(`| ${strategy} | ${result.answered.toFixed(1)} ms | ${result.everywhere.toFixed(0)} ms | ${result.updateCommands} | ${result.documentUpdates} |`);
    }
    const thread = await threadPages(serverUri, replies);
    console.log(`\nthread of ${replies} replies, 30 levels deep: ${thread.pages} pages of 50 descendants, p50 ${thread.p50.toFixed(1)} ms, p99 ${thread.p99.toFixed(1)} ms`);
  } finally {
    await standIn?.stop();
  }
}

await main();
