/**
 * `npm run bench:fanout`: what publishing costs and how fast fanout delivers, per fanout-on-write
 * strategy: createPost latency by audience size (10 … 100,000 followers), the time until the last
 * follower's timeline holds a post with 1 and 2 `npm run worker` processes, the database's raw rate
 * for the same bulk writes, and a timeline page for a reader of pulled authors. Progress on stderr,
 * markdown on stdout, JSON in bench/results/.
 */
import { parseArgs } from 'node:util';
import cliProgress from 'cli-progress';
import { ObjectId, type Db } from 'mongodb';
import { startApp, type RunningApp } from '../src/app.js';
import { loadConfig, type FeedStrategyName } from '../src/config.js';
import { withDatabaseName } from '../src/db/connect.js';
import { startStandIn, type StandIn } from '../src/db/standIn.js';
import { quietLogger } from '../src/logger.js';
import { newBody, newPostId } from '../src/records/posts.js';
import { countCommands, createPostMutation, graphql, summarize, type LatencySummary } from './measure.js';
import { startWorkerProcess as startWorker } from '../test/support/workerProcess.js';
import { prepareFreshDatabase } from './prepare.js';
import { describeEnvironment, writeResults } from './report.js';
import { storedPostId } from './ids.js';

const jwtSecret = 'bench-secret-that-is-at-least-32-characters';
const rawBatch = 1000;

const usage = `Usage: npm run bench:fanout -- [options]
  --strategies a,b   fanout-on-write strategies (default time-buckets,sized-buckets,cache)
  --audiences n,m    follower counts to deliver to (default 1000,10000,100000)
  --post-audiences   follower counts for the createPost latency (default 10,1000,10000,100000)
  --processes n,m    worker processes (default 1,2), each with FANOUT_WORKERS=2
  --samples n        createPost calls per audience for the latency (default 20)
  --page-samples n   timeline pages per reader for the pulled-read comparison (default 200)`;

interface Options {
  strategies: FeedStrategyName[];
  audiences: number[];
  postAudiences: number[];
  processes: number[];
  samples: number;
  pageSamples: number;
}

interface DeliveryRow {
  strategy: string;
  processes: number;
  followers: number;
  requestMs: number;
  lastTimelineMs: number;
  recipientsPerSecond: number;
  rawPerSecond: number;
}

interface StrategyResult {
  strategy: string;
  createPost: Record<number, LatencySummary>;
  deliveries: DeliveryRow[];
  pulledRead: { pulledAuthors: LatencySummary; pushedAuthors: LatencySummary; commands: Record<string, Record<string, number>> };
}

function parseOptions(): Options | 'help' {
  const { values } = parseArgs({
    options: {
      strategies: { type: 'string', default: 'time-buckets,sized-buckets,cache' },
      audiences: { type: 'string', default: '1000,10000,100000' },
      'post-audiences': { type: 'string', default: '10,1000,10000,100000' },
      processes: { type: 'string', default: '1,2' },
      samples: { type: 'string', default: '20' },
      'page-samples': { type: 'string', default: '200' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) return 'help';
  const numbers = (list: string) => list.split(',').map((item) => Number(item.trim()));
  return {
    strategies: values.strategies.split(',').map((name) => name.trim() as FeedStrategyName),
    audiences: numbers(values.audiences),
    postAudiences: numbers(values['post-audiences']),
    processes: numbers(values.processes),
    samples: Number(values.samples),
    pageSamples: Number(values['page-samples']),
  };
}

async function main(): Promise<void> {
  const options = parseOptions();
  if (options === 'help') {
    console.log(usage);
    return;
  }
  const environment = loadConfig();
  let standIn: StandIn | undefined;
  const serverUri = environment.mongodbUri ?? (standIn = await startStandIn({ log: (line) => process.stderr.write(`${line}\n`) })).uri;
  const started = performance.now();
  const results: StrategyResult[] = [];
  try {
    for (const strategy of options.strategies) results.push(await runStrategy(serverUri, strategy, options));
  } finally {
    await standIn?.stop();
  }
  const report = {
    environment: describeEnvironment(environment.mongodbUri ? 'MongoDB at MONGODB_URI' : 'embedded stand-in (mongo-java-server, in-memory)'),
    options,
    results,
    minutes: (performance.now() - started) / 60_000,
  };
  const file = await writeResults('fanout', report);
  console.log(markdown(report));
  process.stderr.write(`results written to ${file}\n`);
}

async function runStrategy(serverUri: string, strategy: FeedStrategyName, options: Options): Promise<StrategyResult> {
  const mongodbUri = withDatabaseName(serverUri, `bench_fanout_${strategy.replace('-', '_')}`);
  const settings = {
    FEED_STRATEGY: strategy,
    JWT_SECRET: jwtSecret,
    PORT: '0',
    FANOUT_PULL_THRESHOLD: '1000000000', // every audience here is pushed
    LIVE_EVENTS: 'local',
    RATE_LIMIT_POSTS_PER_MINUTE: '1000000',
  };
  // This process serves the API only; the fanout runs in `npm run worker` child processes.
  const config = loadConfig({ ...settings, FANOUT_WORKERS: '0' });
  const app = await startApp(config, { mongodbUri, logger: quietLogger, mongoClientOptions: { monitorCommands: true } });
  const db = app.database.db;
  try {
    await db.dropDatabase();
    await prepareFreshDatabase(app);
    const sizes = [...new Set([...options.postAudiences, ...options.audiences])].sort((a, b) => a - b);
    const authors = await loadAudiences(db, strategy, sizes, Math.max(...sizes));
    const tokens = new Map<number, string>();
    for (const [size, handle] of authors) tokens.set(size, `Bearer ${await app.services.accounts.tokenFor(handle)}`);

    const createPost: Record<number, LatencySummary> = {};
    const bar = progressBar(`${strategy} createPost`, options.postAudiences.length * options.samples);
    for (const size of options.postAudiences) {
      const latencies: number[] = [];
      for (let i = 0; i < options.samples; i++) {
        latencies.push((await graphql(app.url, tokens.get(size)!, JSON.stringify({ query: createPostMutation, variables: { text: `sample ${i}` } }))).ms);
        bar.increment();
      }
      createPost[size] = summarize(latencies);
    }
    bar.stop();
    // Those posts were only measured: their fanout never runs.
    await db.collection('fanout_tasks').deleteMany({});

    const deliveries: DeliveryRow[] = [];
    for (const processes of options.processes) {
      const workers = await Promise.all(Array.from({ length: processes }, () => startWorker({ ...settings, MONGODB_URI: mongodbUri })));
      try {
        const deliveryBar = progressBar(`${strategy} fanout, ${processes} worker process${processes > 1 ? 'es' : ''}`, options.audiences.reduce((a, b) => a + b, 0));
        for (const followers of options.audiences) {
          const row = await deliver(app, strategy, tokens.get(followers)!, followers);
          const rawPerSecond = await rawRate(app, authors.get(followers)!, followers, processes * 2);
          deliveries.push({ strategy, processes, followers, ...row, rawPerSecond });
          deliveryBar.increment(followers);
        }
        deliveryBar.stop();
      } finally {
        for (const worker of workers) worker.kill('SIGTERM');
      }
    }
    const pulledRead = await comparePulledRead(app, strategy, options.pageSamples);
    return { strategy, createPost, deliveries, pulledRead };
  } finally {
    await app.services.live.stop();
    await db.dropDatabase();
    await app.stop();
  }
}

/**
 * `largest` active readers (with a cache each under the cache strategy), and one author per
 * audience size followed by the first that many of them. Written in the documented layout.
 */
async function loadAudiences(db: Db, strategy: FeedStrategyName, sizes: number[], largest: number): Promise<Map<number, string>> {
  const now = new Date();
  const readers = Array.from({ length: largest }, (_, i) => `reader_${String(i).padStart(6, '0')}`);
  const authors = new Map(sizes.map((size) => [size, `author_${size}`]));
  const bar = progressBar(`${strategy} loading`, readers.length * (strategy === 'cache' ? 2 : 1) + sizes.reduce((a, b) => a + 2 * b, 0));
  const insert = async (collection: string, docs: object[]) => {
    for (let start = 0; start < docs.length; start += 10_000) {
      const chunk = docs.slice(start, start + 10_000);
      await db.collection(collection).insertMany(chunk as never[], { ordered: false });
      bar.increment(chunk.length);
    }
  };
  const user = (handle: string, followerCount: number) => ({
    _id: handle, accountId: `bench-${handle}`, displayName: null, nameLower: '', passwordHash: '-', createdAt: now, readAt: now, followerCount, followingCount: 0,
  });
  await db.collection('users').insertMany([...authors].map(([size, handle]) => user(handle, size)) as never[]);
  await insert('users', readers.map((handle) => user(handle, 0)));
  for (const [size, handle] of authors) {
    await insert('followers', readers.slice(0, size).map((reader) => ({ _f: handle, _t: reader })));
    await insert('following', readers.slice(0, size).map((reader) => ({ _f: reader, _t: handle })));
  }
  // As an empty first read leaves them, marked as holding everything, so deliveries land in them.
  if (strategy === 'cache') await insert('timeline_cache', readers.map((handle) => ({ _id: handle, _c: [], _e: '' })));
  bar.stop();
  return authors;
}

/** One post, from the request until the queue is drained; then checks every follower really has it. */
async function deliver(app: RunningApp, strategy: FeedStrategyName, authorization: string, followers: number) {
  const started = performance.now();
  const { ms: requestMs, data } = await graphql<{ createPost: { id: string } }>(
    app.url,
    authorization,
    JSON.stringify({ query: createPostMutation, variables: { text: `to ${followers}` } }),
  );
  while (!(await app.services.fanout.queue.isDrained())) await new Promise((resolve) => setTimeout(resolve, 5));
  const lastTimelineMs = performance.now() - started;
  const holders = await app.database.db.collection(timelineCollection(strategy)).countDocuments({ '_c._id': storedPostId(data.createPost.id) });
  // The author's own timeline too, except under the cache strategy, where the author never read.
  const expected = strategy === 'cache' ? followers : followers + 1;
  if (holders !== expected) throw new Error(`${strategy}: ${holders} timelines hold the post, expected ${expected}`);
  return { requestMs, lastTimelineMs, recipientsPerSecond: followers / (lastTimelineMs / 1000) };
}

/**
 * The same deliveries straight through the strategy's own bulk writes, `concurrency` batches of
 * 1,000 at a time, with no queue in between: the database's ceiling for this fanout.
 */
async function rawRate(app: RunningApp, authorId: string, followers: number, concurrency: number): Promise<number> {
  const recipients = Array.from({ length: followers }, (_, i) => `reader_${String(i).padStart(6, '0')}`);
  const post = { id: newPostId(authorId), authorId, createdAt: new Date(), pulled: false, replyTo: null, repostOf: null, counts: null, body: newBody(`raw to ${followers}`) };
  const batches: string[][] = [];
  for (let start = 0; start < recipients.length; start += rawBatch) batches.push(recipients.slice(start, start + rawBatch));
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let batch = batches.shift(); batch; batch = batches.shift()) await app.services.feed.backend.deliverTo(batch, [post]);
    }),
  );
  return followers / ((performance.now() - started) / 1000);
}

/**
 * A reader following 5 authors whose posts are pulled, against one following 5 whose posts were
 * pushed: timeline(first: 20) latency and database commands per page.
 */
async function comparePulledRead(app: RunningApp, strategy: FeedStrategyName, samples: number) {
  const db = app.database.db;
  const { services } = app;
  const now = Date.now();
  const authorsOf = (kind: string) => Array.from({ length: 5 }, (_, i) => `${kind}_star_${i}`);
  const readers = { pulledAuthors: 'reads_pulled', pushedAuthors: 'reads_pushed' } as const;
  for (const [kind, reader] of [['pulled', readers.pulledAuthors], ['pushed', readers.pushedAuthors]] as const) {
    const authors = authorsOf(kind);
    await db.collection('users').insertMany([reader, ...authors].map((handle) => ({
      _id: handle, accountId: `bench-${handle}`, displayName: null, nameLower: '', passwordHash: '-', createdAt: new Date(), readAt: new Date(), followerCount: 0, followingCount: 0,
    })) as never[]);
    await db.collection('following').insertMany(authors.map((author) => ({ _f: reader, _t: author })));
    await db.collection('followers').insertMany(authors.map((author) => ({ _f: author, _t: reader })));
    const posts = authors.flatMap((author) =>
      Array.from({ length: 40 }, (_, i) => ({ id: newPostId(author), authorId: author, createdAt: new Date(now - i * 60_000 - authors.indexOf(author) * 1000), pulled: kind === 'pulled', replyTo: null, repostOf: null, counts: null, body: newBody(`${kind} post ${i}`) })),
    );
    for (const post of posts) await services.content.storePost(post);
    if (kind === 'pushed') for (const post of posts) await services.feed.backend.deliverTo([reader], [post]);
  }
  const result = { commands: {} as Record<string, Record<string, number>> } as StrategyResult['pulledRead'];
  for (const [name, reader] of Object.entries(readers) as [keyof typeof readers, string][]) {
    const authorization = `Bearer ${await services.accounts.tokenFor(reader)}`;
    const body = JSON.stringify({ query: '{ timeline(first: 20) { edges { cursor node { id text author { handle } } } } }' });
    await graphql(app.url, authorization, body); // builds the cache under the cache strategy
    result.commands[name] = await countCommands(app.database.client, async () => void (await graphql(app.url, authorization, body)));
    const latencies: number[] = [];
    for (let i = 0; i < samples; i++) latencies.push((await graphql(app.url, authorization, body)).ms);
    result[name] = summarize(latencies);
  }
  void strategy;
  return result;
}

const timelineCollection = (strategy: FeedStrategyName) =>
  ({ 'time-buckets': 'timed_buckets', 'sized-buckets': 'sized_buckets', cache: 'timeline_cache', 'fanout-on-read': 'content' })[strategy];

function progressBar(label: string, total: number): cliProgress.SingleBar {
  const bar = new cliProgress.SingleBar(
    { format: `${label.padEnd(42)} {bar} {value}/{total}`, stream: process.stderr, hideCursor: true },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0);
  return bar;
}

const format = (value: number, digits = 0) => value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const ms = (value: number) => (value < 10 ? format(value, 1) : format(value));

function markdown(report: { environment: ReturnType<typeof describeEnvironment>; options: Options; results: StrategyResult[]; minutes: number }): string {
  const { environment: env, results } = report;
  const sizes = Object.keys(results[0]?.createPost ?? {}).map(Number);
  const lines = [
    `- Machine: ${env.cpu}, ${env.cores} cores, ${env.memoryGiB} GiB RAM, ${env.os}; Node ${env.node}; load average ${env.loadAverageAtStart.join(' / ')} at start`,
    `- Database: ${env.database}; API in one process with FANOUT_WORKERS=0, fanout in \`npm run worker\` processes of 2 workers each; FANOUT_BATCH=1000`,
    '',
    `createPost through HTTP, p50 / p99 ms over ${report.options.samples} posts, by the author's followers:`,
    '',
    `| strategy | ${sizes.map((size) => `${format(size)} followers`).join(' | ')} |`,
    `|---|${sizes.map(() => '--:').join('|')}|`,
    ...results.map((result) => `| ${result.strategy} | ${sizes.map((size) => `${ms(result.createPost[size]!.p50)} / ${ms(result.createPost[size]!.p99)}`).join(' | ')} |`),
    '',
    'One post delivered to every follower (all active readers):',
    '',
    '| strategy | worker processes | followers | createPost ms | last timeline has it, ms | recipients/s | raw bulk rate, recipients/s | fanout / raw |',
    '|---|--:|--:|--:|--:|--:|--:|--:|',
    ...results.flatMap((result) =>
      result.deliveries.map(
        (row) =>
          `| ${row.strategy} | ${row.processes} | ${format(row.followers)} | ${ms(row.requestMs)} | ${format(row.lastTimelineMs)} | ${format(row.recipientsPerSecond)} | ${format(row.rawPerSecond)} | ${format(row.recipientsPerSecond / row.rawPerSecond, 2)} |`,
      ),
    ),
    '',
    `timeline(first: 20), p50 / p99 ms over ${report.options.pageSamples} pages, and database commands per page:`,
    '',
    '| strategy | reader of 5 pulled authors | reader of 5 pushed authors | commands, pulled | commands, pushed |',
    '|---|--:|--:|---|---|',
    ...results.map((result) => {
      const { pulledAuthors, pushedAuthors, commands } = result.pulledRead;
      const list = (counts: Record<string, number> | undefined) => Object.entries(counts ?? {}).map(([name, count]) => `${name} ${count}`).join(', ');
      return `| ${result.strategy} | ${ms(pulledAuthors.p50)} / ${ms(pulledAuthors.p99)} | ${ms(pushedAuthors.p50)} / ${ms(pushedAuthors.p99)} | ${list(commands.pulledAuthors)} | ${list(commands.pushedAuthors)} |`;
    }),
    '',
    `Total run time: ${format(report.minutes, 1)} min`,
  ];
  return lines.join('\n');
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
