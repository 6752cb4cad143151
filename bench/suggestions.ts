/**
 * `npm run bench:suggestions`: Socialite's two ways of finding friends of friends, measured where
 * the bound matters: a graph of 100,000 users in which viewers follow 50, 500 and 5,000 accounts,
 * each of which follows 10 more (popularity skewed, so a few accounts are followed by many). Each
 * way answers `suggestBy(viewer, 10)` `--answers` times per viewer, one at a time, in this process.
 * Markdown to stdout. See docs/lists.md.
 */
import { parseArgs } from 'node:util';
import { startApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { connectDatabase, withDatabaseName } from '../src/db/connect.js';
import { quietLogger } from '../src/logger.js';
import { seededRandom } from './generate.js';
import { measureSuggestions, suggestionsTable } from './lists.js';
import { benchDatabaseServer } from './prepare.js';

const { values } = parseArgs({
  options: { users: { type: 'string' }, answers: { type: 'string' }, follows: { type: 'string' } },
});
const userCount = Number(values.users ?? 100_000);
const answers = Number(values.answers ?? 20);
const followCounts = (values.follows ?? '50,500,5000').split(',').map(Number);
const edgesPerFollowee = 10;

const server = await benchDatabaseServer();
const uri = withDatabaseName(server.uri, `feed_bench_suggestions_${Date.now().toString(36)}`);
const database = await connectDatabase(uri);
try {
  const db = database.db;
  const random = seededRandom(42);
  const handles = Array.from({ length: userCount }, (_, i) => `user_${i}`);
  const viewers = followCounts.map((count) => ({ handle: `viewer_${count}`, follows: handles.slice(0, count) }));
  const edges: { _f: string; _t: string }[] = [];
  const maxFollowees = Math.max(...followCounts);
  for (const viewer of viewers) for (const followee of viewer.follows) edges.push({ _f: viewer.handle, _t: followee });
  for (const followee of handles.slice(0, maxFollowees)) {
    const targets = new Set<string>();
    while (targets.size < edgesPerFollowee) targets.add(handles[maxFollowees + Math.floor(random() ** 3 * (userCount - maxFollowees))]!);
    for (const target of targets) edges.push({ _f: followee, _t: target });
  }
  const followerCounts = new Map<string, number>();
  for (const edge of edges) followerCounts.set(edge._t, (followerCounts.get(edge._t) ?? 0) + 1);
  const now = new Date();
  const userDocs = [...handles, ...viewers.map((viewer) => viewer.handle)].map((handle) => ({
    _id: handle as never, accountId: handle, displayName: null, passwordHash: '-', createdAt: now, followerCount: followerCounts.get(handle) ?? 0, followingCount: 0,
  }));
  console.error(`loading ${userDocs.length} users and ${edges.length} follows…`);
  for (let start = 0; start < userDocs.length; start += 20_000) await db.collection('users').insertMany(userDocs.slice(start, start + 20_000));
  for (let start = 0; start < edges.length; start += 20_000) {
    const batch = edges.slice(start, start + 20_000);
    await db.collection('following').insertMany(batch.map(({ _f, _t }) => ({ _f, _t })));
    await db.collection('followers').insertMany(batch.map(({ _f, _t }) => ({ _f: _t, _t: _f })));
  }

  // No fanout workers: nothing is posted, and their queue polls and repair sweeps would be counted as the answers' commands.
  const config = loadConfig({ PORT: '0', JWT_SECRET: 'bench-secret-that-is-at-least-32-characters', LIVE_EVENTS: 'local', FANOUT_WORKERS: '0' });
  const app = await startApp(config, { mongodbUri: uri, logger: quietLogger, mongoClientOptions: { monitorCommands: true } });
  try {
    console.log(`## Suggestions, ${now.toISOString().slice(0, 10)}: ${userCount.toLocaleString('en-US')} users, ${edges.length.toLocaleString('en-US')} follows\n`);
    for (const viewer of viewers) {
      const results = await measureSuggestions(app, [viewer.handle], answers);
      console.log(suggestionsTable(results, `follows ${viewer.follows.length.toLocaleString('en-US')}`).join('\n'), '\n');
    }
  } finally {
    await app.stop();
  }
} finally {
  await database.db.dropDatabase().catch(() => {});
  await database.close();
  await server.stop();
}
