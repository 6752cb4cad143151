/**
 * `npm run bench`: loads one generated graph, then measures every timeline strategy × content mode
 * on it through the GraphQL endpoint. Progress goes to stderr, the markdown report to stdout, and
 * everything to a JSON file. See docs/benchmark.md.
 */
import { storedPostId } from './ids.js';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ObjectId, type Db } from 'mongodb';
import { startApp } from '../src/app.js';
import { loadConfig, type FeedStrategyName, type TimelineContentMode } from '../src/config.js';
import { connectDatabase, withDatabaseName } from '../src/db/connect.js';
import { quietLogger } from '../src/logger.js';
import { seededRandom, type GeneratedGraph } from './generate.js';
import {
  baseCollections,
  collectionSizes,
  sharedCollections,
  countCommands,
  createPostMutation,
  graphql,
  load,
  referencePageRate,
  summarize,
  timelineBody,
  type Payload,
} from './measure.js';
import { insertListOwner, measureListPage, measureSuggestions } from './lists.js';
import { measurePageCosts, pageQueries, type PageKind } from './pageCost.js';
import { notificationsBody, seedNotifications } from './notifications.js';
import { commandLine, parseOptions, usage, type BenchOptions } from './options.js';
import { benchDatabaseServer, buildTimelines, loadGraph } from './prepare.js';
import {
  describeEnvironment,
  markdownReport,
  type AuthorPosts,
  type BenchReport,
  type CommandsPerPage,
  type RunResult,
} from './report.js';

const jwtSecret = 'bench-secret-that-is-at-least-32-characters';
/** Sequential requests whose database commands are counted; enough to average out per-reader differences. */
const commandSampleSize = 50;

interface TimelineData {
  timeline: { edges: unknown[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } };
}

/** Everything the runs share: the loaded data and who plays which part. */
interface Shared {
  options: BenchOptions;
  uri: string;
  db: Db;
  graph: GeneratedGraph;
  readers: string[];
  authors: { median: string; top1Percent: string; top: string };
}

async function main(): Promise<void> {
  const options = commandLine(parseOptions, usage);
  if (!options) return;

  const started = Date.now();
  const server = await benchDatabaseServer();
  // A database of our own, so a real server's data is never touched; dropped at the end.
  const databaseName = `feed_bench_${started.toString(36)}`;
  const uri = withDatabaseName(server.uri, databaseName);
  const database = await connectDatabase(uri);
  try {
    const graph = await loadGraph(database.db, options);
    const shared: Shared = { options, uri, db: database.db, graph, ...chooseParticipants(graph, options) };
    const contentBytes = (await collectionSizes(database.db)).content?.bytes ?? 0;

    const runs: RunResult[] = [];
    for (const strategy of options.strategies) {
      for (const mode of options.modes) {
        // Notifications do not depend on the strategy: their page is measured once, in the first run.
        runs.push(await measureStrategy(strategy, mode, shared, runs.length === 0));
      }
    }

    const lists = options.lists ? await measureLists(shared) : null;
    const report: BenchReport = {
      startedAt: new Date(started).toISOString(),
      totalSeconds: (Date.now() - started) / 1000,
      environment: describeEnvironment(
        server.standIn ? server.description : `MongoDB at ${hostOf(uri)}, database ${databaseName} (dropped afterwards)`,
      ),
      options,
      data: {
        users: graph.handles.length,
        follows: graph.edges,
        maxFollowers: Math.max(...graph.followerCounts),
        readersWhoFollow: graph.followingCounts.filter((count) => count > 0).length,
        posts: graph.posts,
        contentBytes,
        from: graph.from.toISOString(),
        to: graph.to.toISOString(),
      },
      runs,
      lists,
    };
    await mkdir(dirname(options.out), { recursive: true });
    await writeFile(options.out, `${JSON.stringify(report, null, 2)}\n`);
    console.log(markdownReport(report));
    console.error(`\nJSON written to ${options.out}`);
  } finally {
    await database.db.dropDatabase().catch(() => {});
    await database.close();
    await server.stop();
  }
}

/**
 * Readers: uniform over users who follow someone (the ones with a timeline worth reading).
 * Authors by follower count: the median user, the one at the top 1%, and the most followed.
 */
function chooseParticipants(graph: GeneratedGraph, options: BenchOptions): Pick<Shared, 'readers' | 'authors'> {
  const random = seededRandom(options.seed + 1);
  const candidates = graph.handles.filter((_, i) => graph.followingCounts[i]! > 0);
  for (let i = candidates.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [candidates[i], candidates[j]] = [candidates[j]!, candidates[i]!];
  }
  const byFollowers = [...graph.handles.keys()].sort((a, b) => graph.followerCounts[b]! - graph.followerCounts[a]!);
  const handleAt = (rank: number) => graph.handles[byFollowers[rank]!]!;
  return {
    readers: candidates.slice(0, options.readers),
    authors: {
      top: handleAt(0),
      top1Percent: handleAt(Math.ceil(graph.handles.length / 100) - 1),
      median: handleAt(Math.floor(graph.handles.length / 2)),
    },
  };
}

async function measureStrategy(strategy: FeedStrategyName, mode: TimelineContentMode, shared: Shared, withNotifications: boolean): Promise<RunResult> {
  const { options } = shared;
  const label = `${strategy}/${mode}`;
  const config = loadConfig({
    PORT: '0',
    JWT_SECRET: jwtSecret,
    FEED_STRATEGY: strategy,
    TIMELINE_CONTENT: mode,
    // One server instance: in-process live events. The change-stream transport would add a
    // live_events write per post and need a replica set when MONGODB_URI is a standalone server.
    LIVE_EVENTS: 'local',
  });

  const rebuildSeconds = await buildTimelines(shared.db, config, label, shared.graph.posts);

  const app = await startApp(config, {
    mongodbUri: shared.uri,
    logger: quietLogger,
    mongoClientOptions: { monitorCommands: true },
  });
  let stopped = false;
  try {
    const authorization = async (handle: string) => `Bearer ${await app.services.accounts.tokenFor(handle)}`;
    const firstPages: Payload[] = await Promise.all(
      shared.readers.map(async (handle) => ({ authorization: await authorization(handle), body: timelineBody(null) })),
    );

    // One sequential first read per reader: warms caches (cache strategy: builds them, so this
    // is its cold latency) and collects each reader's cursor for scrolling back.
    const cold: number[] = [];
    const scrolls: Payload[] = [];
    const pageEnds: { authorization: string; cursor: string }[] = [];
    for (const page of firstPages) {
      const { ms, data } = await graphql<TimelineData>(app.url, page.authorization, page.body);
      cold.push(ms);
      const { hasNextPage, endCursor } = data.timeline.pageInfo;
      if (hasNextPage && endCursor) scrolls.push({ authorization: page.authorization, body: timelineBody(endCursor) });
      if (endCursor) pageEnds.push({ authorization: page.authorization, cursor: endCursor });
    }

    const commands = {
      firstPage: await commandsPerPage(app.database.client, app.url, firstPages.slice(0, commandSampleSize)),
      scroll: await commandsPerPage(app.database.client, app.url, scrolls.slice(0, commandSampleSize)),
    };
    // The page people load beside the plain one, warm: each sampled reader's twice, then counted.
    const pagesOf = (kind: PageKind) => firstPages.slice(0, commandSampleSize).map((page) => ({ authorization: page.authorization, body: JSON.stringify({ query: pageQueries[kind], variables: { first: 20 } }) }));
    const warmCommands: Record<PageKind, number> = { plain: NaN, full: NaN };
    for (const kind of ['plain', 'full'] as const) {
      await commandsPerPage(app.database.client, app.url, pagesOf(kind));
      warmCommands[kind] = (await commandsPerPage(app.database.client, app.url, pagesOf(kind))).total;
    }

    const loadOptions = { connections: options.concurrency, duration: options.duration, amount: options.requests };
    const firstPage = await load(app.url, firstPages, loadOptions);
    const databaseCeiling =
      strategy === 'cache' ? { pagesPerSecond: await referencePageRate(shared.db, shared.readers, options.concurrency, options.duration) } : null;
    const scroll = await load(app.url, scrolls, loadOptions);
    const notifications = withNotifications ? await measureNotifications(app, shared, firstPages, loadOptions) : null;

    const readMarker = await measureReadMarker(app.database.client, app.url, pageEnds.slice(0, commandSampleSize));
    // The next run marks the same posts: it must start without markers, as this one did.
    await shared.db.collection<{ _id: string }>('users').updateMany({ _id: { $in: shared.readers } }, { $unset: { timelineMarker: '' } });

    // Before posting, so every run measures the same data.
    const collections = await collectionSizes(app.database.db);
    const timelines = Object.entries(collections).filter(([name]) => !sharedCollections.has(name));

    const postAsAuthor = async (handle: string) => postAs(handle, app.url, await authorization(handle), shared);
    const posting = {
      median: await postAsAuthor(shared.authors.median),
      top1Percent: await postAsAuthor(shared.authors.top1Percent),
      top: await postAsAuthor(shared.authors.top),
    };

    // The same pages from a server process of their own, so its CPU per page is its own.
    await app.stop();
    stopped = true;
    const pageCosts = await measurePageCosts(
      {
        uri: shared.uri,
        strategy,
        mode,
        jwtSecret,
        authorizations: firstPages.map((page) => page.authorization),
        duration: options.duration,
        connections: [1, options.concurrency],
        profileDirectory: options.profilePages,
      },
      warmCommands,
    );

    const result: RunResult = {
      strategy,
      mode,
      pageCosts,
      readers: { firstPage: firstPages.length, scroll: scrolls.length },
      rebuildSeconds,
      coldFirstPage: summarize(cold),
      firstPage,
      scroll,
      commands,
      posting,
      databaseCeiling,
      notifications,
      readMarker,
      storage: {
        timelineDocuments: timelines.reduce((sum, [, size]) => sum + size.documents, 0),
        timelineBytes: timelines.reduce((sum, [, size]) => sum + size.bytes, 0),
        collections,
      },
    };
    console.error(
      `${label}: first page p50 ${firstPage.latency.p50.toFixed(1)} ms, ${firstPage.requestsPerSecond.toFixed(0)} req/s; ` +
        `scroll p50 ${scroll.latency.p50.toFixed(1)} ms; commands/page ${commands.firstPage.total.toFixed(1)}; ` +
        `post top-1% p50 ${posting.top1Percent.latency.p50.toFixed(1)} ms`,
    );
    return result;
  } finally {
    if (!stopped) await app.stop();
    // Leave only the shared data for the next strategy: its timelines start empty, and the
    // in-memory stand-in does not hold every strategy's copy at once.
    for (const { name } of await shared.db.listCollections({}, { nameOnly: true }).toArray()) {
      if (!baseCollections.has(name)) await shared.db.dropCollection(name);
    }
  }
}

/** Readers whose suggestions are measured, and how many times each. */
const suggestionViewers = 50;
const suggestionPasses = 3;
/** The list page's owner follows this many of the generated users, all in one list. */
const maxListMembers = 5000;

/** The list page and suggestions rows: one server, fanout on read (lists read `content` whatever the strategy). */
async function measureLists(shared: Shared): Promise<NonNullable<BenchReport['lists']>> {
  // No fanout workers: nothing is posted, and their queue polls and repair sweeps would be counted as the pages' commands.
  const config = loadConfig({ PORT: '0', JWT_SECRET: jwtSecret, FEED_STRATEGY: 'fanout-on-read', LIVE_EVENTS: 'local', FANOUT_WORKERS: '0' });
  const app = await startApp(config, { mongodbUri: shared.uri, logger: quietLogger, mongoClientOptions: { monitorCommands: true } });
  try {
    const members = shared.graph.handles.slice(0, maxListMembers);
    const listId = await insertListOwner(app, shared.db, 'bench_list_owner', members);
    const { options } = shared;
    const loadOptions = { connections: options.concurrency, duration: options.duration, amount: options.requests };
    const listPage = await measureListPage(app, 'bench_list_owner', listId, members.length, loadOptions);
    const viewers = shared.readers.slice(0, suggestionViewers);
    const suggestions = await measureSuggestions(app, viewers, suggestionPasses);
    for (const result of [...suggestions]) {
      console.error(`suggestions by ${result.method}: p50 ${result.latency.p50.toFixed(1)} ms, p99 ${result.latency.p99.toFixed(1)} ms`);
    }
    console.error(`list page (${members.length} members): p50 ${listPage.firstPage.latency.p50.toFixed(1)} ms, commands/page ${listPage.commandsPerPage.firstPage.toFixed(1)}`);
    return { listPage, suggestions, viewers: viewers.length };
  } finally {
    await app.stop();
  }
}

/** A page of 20 notifications per sampled reader, seeded first: latency, rate and commands per page. */
async function measureNotifications(
  app: Awaited<ReturnType<typeof startApp>>,
  shared: Shared,
  timelinePages: readonly Payload[],
  loadOptions: Parameters<typeof load>[2],
): Promise<NonNullable<RunResult['notifications']>> {
  await seedNotifications(shared.db, shared.graph, shared.readers, shared.options.seed);
  const pages = timelinePages.map((page) => ({ authorization: page.authorization, body: notificationsBody }));
  const commands = await commandsPerPage(app.database.client, app.url, pages.slice(0, commandSampleSize));
  const page = await load(app.url, pages, loadOptions);
  console.error(`notifications page p50 ${page.latency.p50.toFixed(1)} ms, ${page.requestsPerSecond.toFixed(0)} req/s; commands/page ${commands.total.toFixed(1)}`);
  return { page, commands };
}

async function commandsPerPage(
  client: Parameters<typeof countCommands>[0],
  url: string,
  pages: readonly Payload[],
): Promise<CommandsPerPage> {
  const counts = await countCommands(client, async () => {
    for (const page of pages) await graphql(url, page.authorization, page.body);
  });
  const byCollection = Object.fromEntries(
    Object.entries(counts).map(([name, count]) => [name, pages.length ? count / pages.length : NaN]),
  );
  return { total: Object.values(byCollection).reduce((sum, x) => sum + x, 0), byCollection };
}

const markMutation = 'mutation Mark($upTo: String!) { markTimelineRead(upTo: $upTo) { cursor } }';
const markerQuery = '{ timelineMarker { cursor unreadCount } }';

/** Per reader in turn: a first page, marking it read at its last post, and the marker's unread count. */
async function measureReadMarker(
  client: Parameters<typeof countCommands>[0],
  url: string,
  pageEnds: readonly { authorization: string; cursor: string }[],
): Promise<RunResult['readMarker']> {
  const latencies = { page: [] as number[], mark: [] as number[], read: [] as number[] };
  const commands = { page: 0, mark: 0, read: 0 };
  for (const { authorization, cursor } of pageEnds) {
    const timed = async (kind: keyof typeof latencies, body: string) => {
      const counts = await countCommands(client, async () => void latencies[kind].push((await graphql(url, authorization, body)).ms));
      commands[kind] += Object.values(counts).reduce((sum, count) => sum + count, 0);
    };
    await timed('page', timelineBody(null));
    await timed('mark', JSON.stringify({ query: markMutation, variables: { upTo: cursor } }));
    await timed('read', JSON.stringify({ query: markerQuery }));
  }
  const per = (total: number) => (pageEnds.length ? total / pageEnds.length : NaN);
  return {
    page: summarize(latencies.page),
    mark: summarize(latencies.mark),
    read: summarize(latencies.read),
    commands: { page: per(commands.page), mark: per(commands.mark), read: per(commands.read) },
  };
}

/** A few sequential posts through the API; removed from `content` afterwards so every run sees the same data. */
async function postAs(handle: string, url: string, authorization: string, shared: Shared): Promise<AuthorPosts> {
  const latencies: number[] = [];
  const ids: ObjectId[] = [];
  // The first post of a run also pays for warming up the code path, so it is not counted.
  for (let i = -1; i < shared.options.postSamples; i++) {
    const body = JSON.stringify({ query: createPostMutation, variables: { text: `bench post ${i} by ${handle}` } });
    const { ms, data } = await graphql<{ createPost: { id: string } }>(url, authorization, body);
    if (i >= 0) latencies.push(ms);
    ids.push(storedPostId(data.createPost.id));
  }
  await shared.db.collection('content').deleteMany({ _id: { $in: ids } });
  const index = shared.graph.handles.indexOf(handle);
  return { handle, followers: shared.graph.followerCounts[index]!, latency: summarize(latencies) };
}



/** Host part only: the report must never print credentials. */
function hostOf(uri: string): string {
  return /^mongodb(?:\+srv)?:\/\/(?:[^@/]*@)?([^/?]+)/.exec(uri)?.[1] ?? 'the configured server';
}

await main();
