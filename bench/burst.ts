/**
 * `npm run bench:burst`: a burst of posts by many authors with small audiences, per fanout-on-write
 * strategy. 2,000 users, each followed by 10 active readers, post 5 times each (10,000 posts)
 * through HTTP as fast as 16 connections go:
 *
 * - **live**: to a server as `npm start` runs it (its own fanout workers): from the first post until
 *   every follower's timeline holds every post;
 * - **queued**: the same number of posts queued by an API-only server (`FANOUT_WORKERS=0`), then
 *   delivered by one `npm run worker` process: recipients per second of the fanout alone, against
 *   the database's raw rate for the same entries written straight through the strategy's bulk
 *   write, measured beside it.
 *
 * Progress on stderr, markdown on stdout, JSON in bench/results/.
 */
import { parseArgs } from 'node:util';
import { ObjectId, type Db } from 'mongodb';
import { startApp, type RunningApp } from '../src/app.js';
import { feedStrategies, loadConfig, type FeedStrategyName } from '../src/config.js';
import { withDatabaseName } from '../src/db/connect.js';
import { quietLogger } from '../src/logger.js';
import { newBody, newPostId, type PostRecord } from '../src/records/posts.js';
import { startWorkerProcess } from '../test/support/workerProcess.js';
import { createPostMutation } from './measure.js';
import { int, list } from './options.js';
import { benchDatabaseServer, prepareFreshDatabase } from './prepare.js';
import { describeEnvironment, writeResults } from './report.js';
import { startServerProcess } from './serverProcess.js';
import { httpClient } from './traffic.js';

const jwtSecret = 'bench-secret-that-is-at-least-32-characters';

const usage = `Usage: npm run bench:burst -- [options]
  --strategies a,b   fanout-on-write strategies (default time-buckets,sized-buckets,cache)
  --users n          authors, each followed by --followers of the others (default 2000)
  --followers n      active readers following each author (default 10)
  --posts n          posts per author in the burst (default 5)
  --concurrency n    connections posting at once (default 16)`;

interface Options {
  strategies: FeedStrategyName[];
  users: number;
  followers: number;
  posts: number;
  concurrency: number;
}

interface BurstResult {
  strategy: FeedStrategyName;
  posts: number;
  recipients: number;
  live: { postingSeconds: number; deliveredSeconds: number };
  queued: { postingSeconds: number; drainSeconds: number; recipientsPerSecond: number; rawPerSecond: number };
}

/** The strategies that store timelines, which a burst fills. */
const fanoutOnWrite = feedStrategies.filter((name) => name !== 'fanout-on-read');

function parseOptions(): Options | 'help' {
  const { values } = parseArgs({
    options: {
      strategies: { type: 'string' },
      users: { type: 'string' },
      followers: { type: 'string' },
      posts: { type: 'string' },
      concurrency: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) return 'help';
  return {
    strategies: list('strategies', values.strategies, fanoutOnWrite),
    users: int('users', values.users, 2000, 2),
    followers: int('followers', values.followers, 10, 1),
    posts: int('posts', values.posts, 5, 1),
    concurrency: int('concurrency', values.concurrency, 16, 1),
  };
}

const handleOf = (i: number) => `burst_${String(i).padStart(5, '0')}`;
/** Author i is followed by the next `followers` users, round the ring: every user reads `followers` authors. */
const followersOf = (i: number, options: Options) => Array.from({ length: options.followers }, (_, k) => handleOf((i + 1 + k) % options.users));

async function main(): Promise<void> {
  const options = parseOptions();
  if (options === 'help') {
    console.log(usage);
    return;
  }
  const server = await benchDatabaseServer();
  const results: BurstResult[] = [];
  try {
    for (const strategy of options.strategies) results.push(await runStrategy(server.uri, strategy, options));
  } finally {
    await server.stop();
  }
  const report = { environment: describeEnvironment(server.description), options, results };
  const file = await writeResults('burst', report);
  console.log(markdown(report));
  process.stderr.write(`results written to ${file}\n`);
}

async function runStrategy(serverUri: string, strategy: FeedStrategyName, options: Options): Promise<BurstResult> {
  const mongodbUri = withDatabaseName(serverUri, `bench_burst_${strategy.replace('-', '_')}`);
  const settings = {
    FEED_STRATEGY: strategy,
    JWT_SECRET: jwtSecret,
    MONGODB_URI: mongodbUri,
    LIVE_EVENTS: 'local',
    RATE_LIMIT_POSTS_PER_MINUTE: '1000000',
  };
  // This process loads the data, signs tokens, checks the timelines and measures the raw rate; it serves nothing.
  const app = await startApp(loadConfig({ ...settings, PORT: '0', FANOUT_WORKERS: '0' }), { mongodbUri, logger: quietLogger });
  const db = app.database.db;
  try {
    await db.dropDatabase();
    await prepareFreshDatabase(app);
    await load(db, strategy, options);
    const authorizations = await Promise.all(Array.from({ length: options.users }, async (_, i) => `Bearer ${await app.services.accounts.tokenFor(handleOf(i))}`));
    const recipients = options.users * options.posts * options.followers;

    // Live: a server with its own workers, as `npm start` runs it.
    const server = await startServerProcess({ ...settings });
    let live: BurstResult['live'];
    try {
      const started = performance.now();
      const postingSeconds = await postBurst(server.url, authorizations, 'live', options);
      await drained(app);
      live = { postingSeconds, deliveredSeconds: (performance.now() - started) / 1000 };
    } finally {
      await server.stop();
    }
    await checkDelivered(db, strategy, options, 'live');

    // Queued: an API that only queues, then one worker process delivering what waits.
    const apiOnly = await startServerProcess({ ...settings, FANOUT_WORKERS: '0' });
    let postingSeconds: number;
    try {
      postingSeconds = await postBurst(apiOnly.url, authorizations, 'queued', options);
    } finally {
      await apiOnly.stop();
    }
    const worker = await startWorkerProcess({ ...settings });
    let drainSeconds: number;
    try {
      const started = performance.now();
      await drained(app);
      drainSeconds = (performance.now() - started) / 1000;
    } finally {
      worker.kill('SIGTERM');
    }
    await checkDelivered(db, strategy, options, 'queued');
    const rawPerSecond = await rawRate(app, options);
    return {
      strategy,
      posts: options.users * options.posts,
      recipients,
      live,
      queued: { postingSeconds, drainSeconds, recipientsPerSecond: recipients / drainSeconds, rawPerSecond },
    };
  } finally {
    await db.dropDatabase();
    await app.stop();
  }
}

/** The users and the ring of follows, in the documented layout; every user an active reader (with an empty cache under the cache strategy). */
async function load(db: Db, strategy: FeedStrategyName, options: Options): Promise<void> {
  const now = new Date();
  const handles = Array.from({ length: options.users }, (_, i) => handleOf(i));
  await db.collection('users').insertMany(
    handles.map((handle) => ({ _id: handle, accountId: `bench-${handle}`, displayName: null, nameLower: '', passwordHash: '-', createdAt: now, readAt: now, followerCount: options.followers, followingCount: options.followers })) as never[],
  );
  const edges = handles.flatMap((author, i) => followersOf(i, options).map((reader) => ({ author, reader })));
  await db.collection('followers').insertMany(edges.map(({ author, reader }) => ({ _f: author, _t: reader })) as never[]);
  await db.collection('following').insertMany(edges.map(({ author, reader }) => ({ _f: reader, _t: author })) as never[]);
  if (strategy === 'cache') await db.collection('timeline_cache').insertMany(handles.map((handle) => ({ _id: handle, _c: [], _e: '' })) as never[]);
}

/** Every author's posts, `concurrency` requests at a time, authors interleaved; returns the seconds it took. */
async function postBurst(url: string, authorizations: string[], label: string, options: Options): Promise<number> {
  const client = httpClient(url, options.concurrency);
  const path = new URL(url).pathname;
  const jobs: { authorization: string; text: string }[] = [];
  for (let round = 0; round < options.posts; round++) {
    authorizations.forEach((authorization, i) => jobs.push({ authorization, text: `${label} ${round} by ${handleOf(i)}` }));
  }
  const started = performance.now();
  let next = 0;
  try {
    await Promise.all(
      Array.from({ length: options.concurrency }, async () => {
        for (let job = jobs[next++]; job; job = jobs[next++]) {
          const body = JSON.stringify({ query: createPostMutation, variables: { text: job.text } });
          const response = await client.send('POST', path, { 'content-type': 'application/json', authorization: job.authorization }, body);
          if (response.status !== 200 || response.body.includes('"errors"')) throw new Error(`createPost failed (${response.status}): ${response.body}`);
        }
      }),
    );
  } finally {
    client.close();
  }
  return (performance.now() - started) / 1000;
}

async function drained(app: RunningApp): Promise<void> {
  const deadline = Date.now() + 600_000;
  while (!(await app.services.fanout.queue.isDrained())) {
    if (Date.now() > deadline) throw new Error('the fanout queue did not drain within 10 minutes');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Every reader holds what the burst gave it: each post of the authors it follows and its own (a
 * capped cache, its newest `TIMELINE_CACHE_SIZE`), sampled over a hundred readers.
 */
async function checkDelivered(db: Db, strategy: FeedStrategyName, options: Options, label: string): Promise<void> {
  const { timeline } = loadConfig({ FEED_STRATEGY: strategy });
  const collection = { 'time-buckets': 'timed_buckets', 'sized-buckets': 'sized_buckets', cache: 'timeline_cache' }[strategy as 'cache'];
  for (let i = 0; i < options.users; i += Math.max(1, Math.floor(options.users / 100))) {
    const reader = handleOf(i);
    const owner = { cache: { _id: reader }, 'time-buckets': { '_id._u': reader }, 'sized-buckets': { _u: reader } }[strategy as 'cache'];
    const docs = await db.collection<{ _c: { _m?: string }[] }>(collection).find(owner as never).toArray();
    const held = docs.flatMap((doc) => doc._c).filter((entry) => entry._m?.startsWith(`${label} `)).length;
    const expected = options.posts * (options.followers + 1);
    const want = strategy === 'cache' ? Math.min(expected, timeline.cacheSize) : expected;
    if (held < want) throw new Error(`${strategy} ${label}: ${reader}'s timeline holds ${held} of the burst's posts, expected ${want}`);
  }
}

/**
 * The same entries written straight through the strategy's bulk write, as the workers batch them
 * (50 posts with their audiences a write), two writers at a time: the database's ceiling.
 */
async function rawRate(app: RunningApp, options: Options): Promise<number> {
  const deliveries: { recipients: string[]; posts: PostRecord[] }[] = [];
  const createdAt = new Date();
  for (let round = 0; round < options.posts; round++) {
    for (let i = 0; i < options.users; i++) {
      const post: PostRecord = { id: newPostId(handleOf(i)), authorId: handleOf(i), createdAt, pulled: false, replyTo: null, repostOf: null, counts: null, body: newBody(`raw ${round}`) };
      deliveries.push({ recipients: followersOf(i, options), posts: [post] });
    }
  }
  const batches: (typeof deliveries)[] = [];
  for (let start = 0; start < deliveries.length; start += 50) batches.push(deliveries.slice(start, start + 50));
  const started = performance.now();
  await Promise.all(
    Array.from({ length: 2 }, async () => {
      for (let batch = batches.shift(); batch; batch = batches.shift()) await app.services.feed.backend.deliverEach(batch);
    }),
  );
  return (options.users * options.posts * options.followers) / ((performance.now() - started) / 1000);
}

function markdown(report: { environment: ReturnType<typeof describeEnvironment>; options: Options; results: BurstResult[] }): string {
  const { options } = report;
  const lines = [
    `- Machine: ${report.environment.cpu}, ${report.environment.cores} cores; Node ${report.environment.node}; database: ${report.environment.database}`,
    `- Burst: ${options.users.toLocaleString('en')} authors × ${options.posts} posts, each author followed by ${options.followers} active readers, posted through HTTP on ${options.concurrency} connections`,
    '',
    '| strategy | posts | recipients | live: posting s | live: all delivered s | queued: posting s | queued: drain s | fanout recipients/s | raw bulk rate recipients/s | fanout ÷ raw |',
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
    ...report.results.map(
      ({ strategy, posts, recipients, live, queued }) =>
        `| ${strategy} | ${posts.toLocaleString('en')} | ${recipients.toLocaleString('en')} | ${live.postingSeconds.toFixed(1)} | ${live.deliveredSeconds.toFixed(1)} | ${queued.postingSeconds.toFixed(1)} | ${queued.drainSeconds.toFixed(1)} | ${Math.round(queued.recipientsPerSecond).toLocaleString('en')} | ${Math.round(queued.rawPerSecond).toLocaleString('en')} | ${(queued.recipientsPerSecond / queued.rawPerSecond).toFixed(2)} |`,
    ),
  ];
  return lines.join('\n');
}

await main();
