import { mkdir, writeFile } from 'node:fs/promises';
import { cpus, loadavg, platform, release, totalmem } from 'node:os';
import { pageCostTable, type PageCosts } from './pageCost.js';
import type { FeedStrategyName, TimelineContentMode } from '../src/config.js';
import type { CollectionSize, LatencySummary, LoadStats } from './measure.js';
import { listPageTable, suggestionsTable, type ListPageResult, type SuggestionsResult } from './lists.js';
import type { BenchOptions } from './options.js';

export interface AuthorPosts {
  handle: string;
  followers: number;
  latency: LatencySummary;
}

export interface CommandsPerPage {
  total: number;
  /** Mean commands per page, per collection. */
  byCollection: Record<string, number>;
}

export interface RunResult {
  strategy: FeedStrategyName;
  mode: TimelineContentMode;
  /** The plain page and the page people load, from a server process of their own (see pageCost.ts). */
  pageCosts?: PageCosts;
  /** Readers measured; scrolling leaves out those whose whole timeline fits on one page. */
  readers: { firstPage: number; scroll: number };
  rebuildSeconds: number;
  /** Sequential first reads right after the rebuild; for `cache` these build the caches. */
  coldFirstPage: LatencySummary;
  firstPage: LoadStats;
  scroll: LoadStats;
  commands: { firstPage: CommandsPerPage; scroll: CommandsPerPage };
  posting: { median: AuthorPosts; top1Percent: AuthorPosts; top: AuthorPosts };
  storage: { timelineDocuments: number; timelineBytes: number; collections: Record<string, CollectionSize> };
  /**
   * Cache strategy only: the reference page issued straight through the driver (the reader's
   * `timeline_cache` findOne, then one `users` `$in` for the page's authors) at the same
   * concurrency: the database's own ceiling for a page, against which the API's rate is judged.
   */
  databaseCeiling: { pagesPerSecond: number } | null;
  /** First run only: `notifications(first: 20)` of the same readers, with actors, posts and the unread count. */
  notifications?: { page: LoadStats; commands: CommandsPerPage } | null;
  /**
   * The timeline read marker beside a page, each reader in turn: their first page, marking it
   * read up to its last post, then reading the marker with its unread count (the posts above it).
   * Latencies sequential and warm; commands per call.
   */
  readMarker?: {
    page: LatencySummary;
    mark: LatencySummary;
    read: LatencySummary;
    commands: { page: number; mark: number; read: number };
  };
}

export interface Environment {
  cpu: string;
  cores: number;
  memoryGiB: number;
  os: string;
  node: string;
  database: string;
  /** Other work on the machine skews latencies; this says how busy it was when the run began. */
  loadAverageAtStart: number[];
}

export interface DataSummary {
  users: number;
  follows: number;
  maxFollowers: number;
  readersWhoFollow: number;
  posts: number;
  contentBytes: number;
  from: string;
  to: string;
}

export interface BenchReport {
  startedAt: string;
  totalSeconds: number;
  environment: Environment;
  options: BenchOptions;
  data: DataSummary;
  runs: RunResult[];
  /** Measured once: lists and suggestions do not depend on the timeline strategy. */
  lists: { listPage: ListPageResult; suggestions: SuggestionsResult[]; viewers: number } | null;
}

/** Writes a benchmark's JSON results to bench/results/<kind>-<time>.json and returns the path. */
export async function writeResults(kind: string, report: object): Promise<string> {
  await mkdir('bench/results', { recursive: true });
  const file = `bench/results/${kind}-${new Date().toISOString().replace(/[:.]/g, '-')}.json`;
  await writeFile(file, JSON.stringify(report, null, 2));
  return file;
}

export function describeEnvironment(database: string): Environment {
  const cpuList = cpus();
  return {
    cpu: cpuList[0]?.model.trim() ?? 'unknown CPU',
    cores: cpuList.length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    os: `${platform()} ${release()}`,
    node: process.version,
    database,
    loadAverageAtStart: loadavg().map((x) => Math.round(x * 100) / 100),
  };
}

const int = (x: number) => Math.round(x).toLocaleString('en-US');
const ms = (x: number) => (Number.isNaN(x) ? '–' : x < 10 ? x.toFixed(1) : x.toFixed(0));
const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(1);
const per = (x: number) => (x < 10 ? x.toFixed(1) : x.toFixed(0));

export function markdownReport(report: BenchReport): string {
  const { environment: env, options: o, data } = report;
  const first = report.runs[0];
  const lines = [
    `## Feed benchmark, ${report.startedAt.slice(0, 10)}`,
    '',
    `- Machine: ${env.cpu}, ${env.cores} cores, ${env.memoryGiB} GiB RAM, ${env.os}; Node ${env.node}; ` +
      `load average ${env.loadAverageAtStart.join(' / ')} (1/5/15 min) at start`,
    `- Database: ${env.database}`,
    `- Data: ${int(data.users)} users, ${int(data.follows)} follows (mean ${o.followsPerUser} per user, ` +
      `Zipf s=${o.zipf}, most-followed account ${int(data.maxFollowers)} followers), ` +
      `${int(data.posts)} posts over ${o.days} days (content ${mb(data.contentBytes)} MB), seed ${o.seed}`,
    `- Load: ${o.concurrency} concurrent connections, ` +
      (o.requests === null ? `${o.duration} s` : `${o.requests} requests`) +
      ` per measurement, over ${Math.min(o.readers, data.readersWhoFollow)} readers sampled from the ` +
      `${int(data.readersWhoFollow)} users who follow someone; timeline(first: 20) with author fields`,
    first
      ? `- Posting: ${o.postSamples} createPost calls each (p50 shown) by a median author ` +
        `(${first.posting.median.followers} followers), a top-1% author (${first.posting.top1Percent.followers} ` +
        `followers) and the most-followed one`
      : '',
    '',
    ...(report.runs.some((run) => run.pageCosts)
      ? [
          'The plain page and the page people load (the reference web client\'s `Timeline` query: counts, the viewer\'s likes, ' +
            'reposts and bookmarks, display names, mentions, replies\' parents, who reposted), warm, from a server process ' +
            'of its own (as `npm start` runs it), at one connection and at the load\'s concurrency:',
          '',
          pageCostTable(report.runs.flatMap((run) => (run.pageCosts ? [run.pageCosts] : []))),
          '',
          'The in-process runs (the server shares this process with the load generator):',
          '',
        ]
      : []),
    '| strategy | content | first page p50 / p99 ms | first page req/s | scroll p50 / p99 ms | scroll req/s ' +
      '| post, median author ms | post, top-1% author ms | timeline docs | timeline MB | commands / page (first, scroll) |',
    '|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
    ...report.runs.map((run) =>
      [
        run.strategy,
        run.mode,
        `${ms(run.firstPage.latency.p50)} / ${ms(run.firstPage.latency.p99)}`,
        int(run.firstPage.requestsPerSecond),
        `${ms(run.scroll.latency.p50)} / ${ms(run.scroll.latency.p99)}`,
        int(run.scroll.requestsPerSecond),
        ms(run.posting.median.latency.p50),
        ms(run.posting.top1Percent.latency.p50),
        int(run.storage.timelineDocuments),
        mb(run.storage.timelineBytes),
        `${per(run.commands.firstPage.total)}, ${per(run.commands.scroll.total)}`,
      ].join(' | ').replace(/^/, '| ').concat(' |'),
    ),
    '',
    'Also measured (same runs):',
    '',
    '| strategy | content | rebuild s | cold first read p50 / p99 ms | post, most-followed author ms | first-page commands by collection |',
    '|---|---|--:|--:|--:|---|',
    ...report.runs.map((run) =>
      [
        run.strategy,
        run.mode,
        run.rebuildSeconds.toFixed(1),
        `${ms(run.coldFirstPage.p50)} / ${ms(run.coldFirstPage.p99)}`,
        `${ms(run.posting.top.latency.p50)} (${int(run.posting.top.followers)} followers)`,
        Object.entries(run.commands.firstPage.byCollection)
          .map(([name, count]) => `${name} ${per(count)}`)
          .join(', '),
      ].join(' | ').replace(/^/, '| ').concat(' |'),
    ),
  ];
  const markerRuns = report.runs.filter((run) => run.readMarker);
  if (markerRuns.length > 0) {
    lines.push(
      '',
      'The timeline read marker beside a page (each reader in turn, warm: `timeline(first: 20)`, then `markTimelineRead` ' +
        'at its last post, then `timelineMarker { cursor unreadCount }`, which pages the ~19 posts above the marker):',
      '',
      '| strategy | content | page p50 / p99 ms | markTimelineRead p50 / p99 ms | marker with unreadCount p50 / p99 ms | commands (page, mark, marker) |',
      '|---|---|--:|--:|--:|--:|',
      ...markerRuns.map((run) => {
        const marker = run.readMarker!;
        return [
          run.strategy,
          run.mode,
          `${ms(marker.page.p50)} / ${ms(marker.page.p99)}`,
          `${ms(marker.mark.p50)} / ${ms(marker.mark.p99)}`,
          `${ms(marker.read.p50)} / ${ms(marker.read.p99)}`,
          `${per(marker.commands.page)}, ${per(marker.commands.mark)}, ${per(marker.commands.read)}`,
        ].join(' | ').replace(/^/, '| ').concat(' |');
      }),
    );
  }
  for (const run of report.runs) {
    if (!run.databaseCeiling) continue;
    const ratio = run.firstPage.requestsPerSecond / run.databaseCeiling.pagesPerSecond;
    lines.push(
      '',
      `Database ceiling (${run.strategy}/${run.mode}): the reference page straight through the driver, ` +
        `${int(run.databaseCeiling.pagesPerSecond)} pages/s at ${o.concurrency} concurrent; the API served ` +
        `${int(run.firstPage.requestsPerSecond)} first pages/s, ${ratio.toFixed(2)}× the ceiling.`,
    );
  }
  const withNotifications = report.runs.find((run) => run.notifications);
  if (withNotifications?.notifications) {
    const { page, commands } = withNotifications.notifications;
    const row = (name: string, stats: LoadStats, perPage: CommandsPerPage) =>
      `| ${name} | ${ms(stats.latency.p50)} / ${ms(stats.latency.p99)} | ${int(stats.requestsPerSecond)} | ${per(perPage.total)} | ` +
      `${Object.entries(perPage.byCollection).map(([name, count]) => `${name} ${per(count)}`).join(', ')} |`;
    lines.push(
      '',
      `Notifications beside the timeline (${withNotifications.strategy}/${withNotifications.mode}, the same readers, ` +
        'notifications(first: 20) with kinds, actors, posts, unread and unreadCount):',
      '',
      '| page | p50 / p99 ms | req/s | commands / page | by collection |',
      '|---|--:|--:|--:|---|',
      row('timeline, first page', withNotifications.firstPage, withNotifications.commands.firstPage),
      row('notifications', page, commands),
    );
  }
  const failures = report.runs.filter((run) => run.firstPage.failures + run.scroll.failures + (run.notifications?.page.failures ?? 0) > 0);
  if (failures.length > 0) {
    lines.push('', '**Failed requests during load:** ' +
      failures.map((run) => `${run.strategy}/${run.mode}: ${run.firstPage.failures + run.scroll.failures + (run.notifications?.page.failures ?? 0)}`).join(', '));
  }
  if (report.lists) {
    lines.push(
      '',
      'Lists and suggestions, measured once (neither depends on the strategy):',
      '',
      ...listPageTable(report.lists.listPage),
      '',
      ...suggestionsTable(report.lists.suggestions, `${report.lists.viewers} sampled readers`),
    );
  }
  lines.push('', `Total run time: ${(report.totalSeconds / 60).toFixed(1)} min`);
  return lines.filter((line, i, all) => !(line === '' && all[i - 1] === '')).join('\n');
}
