/**
 * `npm run bench:workload`: Socialite's traffic model (bench/traffic.ts) against the API served by
 * its own processes, for each strategy and target rate. Prints markdown, writes JSON and an SVG chart
 * of latency against throughput next to it. See docs/benchmark.md.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import type { Db } from 'mongodb';
import {
  feedStrategies,
  timelineContentModes,
  type FeedStrategyName,
  type TimelineContentMode,
} from '../src/config.js';
import { connectDatabase, withDatabaseName } from '../src/db/connect.js';
import type { StandIn } from '../src/db/standIn.js';
import { lineChartSvg, type ChartSeries } from './chart.js';
import { seededRandom, type GeneratedGraph, type GraphSizes } from './generate.js';
import { baseCollections, referencePageRate } from './measure.js';
import { commandLine, int, list, num } from './options.js';
import { graphqlOperations, readEveryTimelineOnce, serveStrategy } from './ourApi.js';
import { benchDatabaseServer, loadGraph, progressBar } from './prepare.js';
import { processTreeCpuSeconds } from './serverProcess.js';
import { describeEnvironment, type Environment } from './report.js';
import { LagProbe, measuresLag, readyFanoutTasks, sampler, type LagSummary } from './lag.js';
import { httpClient, mixFrom, namedMix, operations, runTraffic, type Mix, type Operation, type TrafficResult } from './traffic.js';

export interface WorkloadOptions extends GraphSizes {
  activeUsers: number;
  concurrency: number;
  targetRates: number[];
  mix: Mix;
  /** The `--mix` name, when the mix came from one. */
  mixName: string | null;
  sessionLength: number;
  duration: number;
  warmup: number;
  strategies: FeedStrategyName[];
  modes: TimelineContentMode[];
  processes: number;
  execution: 'compiled' | 'interpreted';
  /** Where the server processes write V8 CPU profiles, if anywhere. */
  profileDir: string | null;
  /** Posts a second whose delivery lag is measured (fanout-on-write strategies), and how long to wait for one. */
  lagSamplesPerSecond: number;
  lagTimeoutSeconds: number;
  /** Only redraw the chart of an earlier run's JSON. */
  chartFrom: string | null;
  out: string;
}

const pctFlags: Record<Operation, string> = {
  read: 'read-pct',
  scroll: 'scroll-pct',
  readOwn: 'read-own-pct',
  post: 'post-pct',
  like: 'like-pct',
  follow: 'follow-pct',
  unfollow: 'unfollow-pct',
};

export const usage = `Usage: npm run bench:workload -- [options]

Socialite's traffic model against the API, which runs in processes of its own (src/main.ts, as
npm start runs it): --active-users sessions at once, each a user doing a random sequence of
operations; at most --concurrency requests in flight; one measurement per --target-rate.
MONGODB_URI (if set) is used, in a fresh database dropped at the end; otherwise the embedded
in-memory stand-in is started.

Data
  --total-users <n>        users (default 2000)
  --follows-per-user <n>   mean accounts followed (default 10)
  --posts-per-user <n>     posts per user over --days (default 5)
  --zipf <s>, --days <n>, --seed <n>   as in npm run bench (defaults 1, 7, 42)
Traffic
  --active-users <n>       concurrently active users (default 200)
  --concurrency <n>        requests in flight at most, i.e. connections (default 16)
  --target-rate <list>     operations/s per measurement, comma list; 0 = as fast as possible (default 0)
  --session-length <n>     mean operations per session (default 20)
  --mix <name>             a named mix instead of the shares below: socialite (80 % read, 10 % post,
                           5 % follow, 5 % unfollow) or reads (timeline reads only)
  --read-pct, --scroll-pct, --read-own-pct, --post-pct, --like-pct, --follow-pct, --unfollow-pct <0..1>
                           the mix; shares not given split the rest evenly (Socialite's rule)
                           (default read 0.5, scroll 0.2, like 0.1, post 0.1, read-own 0.05, follow 0.025, unfollow 0.025)
  --duration <s>           measured seconds per target rate (default 10)
  --warmup <s>             unmeasured seconds before each (default 2)
  --lag-samples <n>        posts per second whose delivery lag to every active follower is measured,
                           fanout-on-write strategies only (default 2; 0 = none)
  --lag-timeout <s>        a sampled post not delivered everywhere by then counts as timed out (default 30)
Server
  --strategies <list>      of ${feedStrategies.join(', ')} (default cache,fanout-on-read)
  --modes <list>           of ${timelineContentModes.join(', ')} (default embed)
  --processes <n>          server processes, WEB_CONCURRENCY (default 1)
  --execution <kind>       compiled or interpreted GraphQL execution (default compiled)
  --profile-server <dir>   write the server processes' CPU profiles (.cpuprofile) there
  --chart-from <json>      only redraw the chart of an earlier run's JSON (written next to it)
  --out <path>             JSON results; the chart goes next to it as .svg (default bench/results/workload-<time>.json)
`;

const defaultMix: Partial<Record<Operation, number>> = { read: 0.5, scroll: 0.2, like: 0.1, post: 0.1, readOwn: 0.05, follow: 0.025, unfollow: 0.025 };

export function parseWorkloadOptions(argv: string[]): WorkloadOptions | 'help' {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      'total-users': { type: 'string' },
      'follows-per-user': { type: 'string' },
      'posts-per-user': { type: 'string' },
      zipf: { type: 'string' },
      days: { type: 'string' },
      seed: { type: 'string' },
      'active-users': { type: 'string' },
      concurrency: { type: 'string' },
      'target-rate': { type: 'string' },
      'session-length': { type: 'string' },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      mix: { type: 'string' },
      'lag-samples': { type: 'string' },
      'lag-timeout': { type: 'string' },
      strategies: { type: 'string' },
      modes: { type: 'string' },
      processes: { type: 'string' },
      execution: { type: 'string' },
      'profile-server': { type: 'string' },
      'chart-from': { type: 'string' },
      out: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
      ...Object.fromEntries(Object.values(pctFlags).map((flag) => [flag, { type: 'string' as const }])),
    },
  });
  if (values.help) return 'help';
  const given: Partial<Record<Operation, number>> = {};
  for (const op of operations) {
    const raw = (values as Record<string, string | boolean | undefined>)[pctFlags[op]];
    if (typeof raw === 'string') given[op] = num(pctFlags[op], raw, 0, 0);
  }
  if (values.mix !== undefined && Object.keys(given).length > 0) throw new Error('--mix and the --<operation>-pct shares exclude each other');
  const named = values.mix === undefined ? null : namedMix(values.mix);
  const execution = values.execution ?? 'compiled';
  if (execution !== 'compiled' && execution !== 'interpreted') throw new Error(`--execution must be compiled or interpreted, got "${execution}"`);
  const targetRates = (values['target-rate'] ?? '0').split(',').map((raw) => num('target-rate', raw.trim(), 0, 0));
  return {
    users: int('total-users', values['total-users'], 2000, 10),
    followsPerUser: num('follows-per-user', values['follows-per-user'], 10, 0),
    postsPerUser: int('posts-per-user', values['posts-per-user'], 5, 1),
    zipf: num('zipf', values.zipf, 1, 0),
    days: num('days', values.days, 7, 0.001),
    seed: int('seed', values.seed, 42, 0),
    activeUsers: int('active-users', values['active-users'], 200, 1),
    concurrency: int('concurrency', values.concurrency, 16, 1),
    targetRates,
    mix: named ? named.mix : mixFrom(Object.keys(given).length > 0 ? given : defaultMix),
    mixName: named ? named.name : null,
    sessionLength: num('session-length', values['session-length'], 20, 1),
    duration: num('duration', values.duration, 10, 0.5),
    warmup: num('warmup', values.warmup, 2, 0),
    lagSamplesPerSecond: num('lag-samples', values['lag-samples'], 2, 0),
    lagTimeoutSeconds: num('lag-timeout', values['lag-timeout'], 30, 1),
    strategies: list('strategies', values.strategies ?? 'cache,fanout-on-read', feedStrategies),
    modes: list('modes', values.modes ?? 'embed', timelineContentModes),
    processes: int('processes', values.processes, 1, 1),
    execution,
    profileDir: values['profile-server'] ?? null,
    chartFrom: values['chart-from'] ?? null,
    out: values.out ?? `bench/results/workload-${new Date().toISOString().replace(/[:.]/g, '-')}.json`,
  };
}

interface StepResult extends TrafficResult {
  /** Cores busy during the step: the API's processes, and the embedded database when it runs here. */
  serverCores: number;
  databaseCores: number | null;
  /** Fanout-on-write strategies: sampled posts' time from the createPost answer to every active follower's timeline. */
  deliveryLag: LagSummary | null;
  /** Fanout-on-write strategies: `fanout_tasks` still ready (waiting, backing off or held) as the measured window ended. */
  readyFanoutTasks: number | null;
}

interface WorkloadRun {
  strategy: FeedStrategyName;
  mode: TimelineContentMode;
  steps: StepResult[];
  /**
   * Cache strategy: the reference page straight through the driver at the same concurrency (see npm run
   * bench), measured before and after the traffic; the ceiling is the higher of the two, so a slow
   * moment of the machine never lowers the bar the API is held to.
   */
  databaseCeilingPagesPerSecond: number | null;
  databaseCeilingSamples: number[];
}

interface WorkloadReport {
  startedAt: string;
  totalSeconds: number;
  environment: Environment;
  options: WorkloadOptions;
  data: { users: number; follows: number; posts: number };
  runs: WorkloadRun[];
}

async function main(): Promise<void> {
  const options = commandLine(parseWorkloadOptions, usage);
  if (!options) return;

  if (options.chartFrom) {
    const report = JSON.parse(await readFile(options.chartFrom, 'utf8')) as WorkloadReport;
    const chartPath = options.chartFrom.replace(/\.json$/, '') + '.svg';
    await writeFile(chartPath, latencyChart(report));
    console.error(`chart written to ${chartPath}`);
    return;
  }

  const started = Date.now();
  const server = await benchDatabaseServer();
  const { standIn } = server;
  const databaseName = `feed_workload_${started.toString(36)}`;
  const uri = withDatabaseName(server.uri, databaseName);
  const database = await connectDatabase(uri);
  try {
    const graph = await loadGraph(database.db, options);
    const runs: WorkloadRun[] = [];
    for (const strategy of options.strategies) {
      for (const mode of options.modes) runs.push(await measure(strategy, mode, options, database.db, uri, graph, standIn));
    }
    const report: WorkloadReport = {
      startedAt: new Date(started).toISOString(),
      totalSeconds: (Date.now() - started) / 1000,
      environment: describeEnvironment(standIn ? server.description : `MongoDB, database ${databaseName} (dropped afterwards)`),
      options,
      data: { users: graph.handles.length, follows: graph.edges, posts: graph.posts },
      runs,
    };
    await mkdir(dirname(options.out), { recursive: true });
    await writeFile(options.out, `${JSON.stringify(report, null, 2)}\n`);
    const chartPath = options.out.replace(/\.json$/, '') + '.svg';
    await writeFile(chartPath, latencyChart(report));
    console.log(markdown(report));
    console.error(`\nJSON written to ${options.out}, chart to ${chartPath}`);
  } finally {
    await database.db.dropDatabase().catch(() => {});
    await database.close();
    await server.stop();
  }
}

async function measure(
  strategy: FeedStrategyName,
  mode: TimelineContentMode,
  options: WorkloadOptions,
  db: Db,
  uri: string,
  graph: GeneratedGraph,
  standIn: StandIn | undefined,
): Promise<WorkloadRun> {
  const label = `${strategy}/${mode}`;
  const { server, world } = await serveStrategy(db, uri, graph, { strategy, mode, processes: options.processes, execution: options.execution, profileDir: options.profileDir });
  const client = httpClient(server.url, options.concurrency);
  const random = seededRandom(options.seed + 7);
  try {
    const lagged = measuresLag(strategy) && options.lagSamplesPerSecond > 0;
    /** The step being measured: posts answered inside its window go to its probe, a few a second. */
    let window: { probe: LagProbe; from: number; to: number; take: (now: number) => boolean } | null = null;
    const api = graphqlOperations(world, random, undefined, (author, postId, answeredAt) => {
      if (window && answeredAt >= window.from && answeredAt <= window.to && window.take(answeredAt)) window.probe.track(author, postId, answeredAt);
    });
    await readEveryTimelineOnce(label, world.handles, api.read!, client.send, options.concurrency);
    const ceiling = () => referencePageRate(db, world.handles.slice(0, 200), options.concurrency, Math.min(options.duration, 5));
    const databaseCeilingSamples = strategy === 'cache' ? [await ceiling()] : [];

    const steps: StepResult[] = [];
    for (const targetRate of options.targetRates) {
      const stepBar = progressBar(`${label} at ${targetRate || 'max'} ops/s`);
      const total = options.warmup + options.duration;
      stepBar.start(Math.round(total), 0);
      const serverBefore = processTreeCpuSeconds(server.pid);
      const databaseBefore = standIn ? processTreeCpuSeconds(standIn.pid) : 0;
      const wallBefore = performance.now();
      const from = wallBefore + options.warmup * 1000;
      window = lagged
        ? {
            probe: new LagProbe(db, strategy, { pollMs: 10, timeoutMs: options.lagTimeoutSeconds * 1000, activeReaderMs: activeReaderMs() }),
            from,
            to: from + options.duration * 1000,
            take: sampler(options.lagSamplesPerSecond),
          }
        : null;
      const result = await runTraffic(
        { users: world.handles, activeUsers: options.activeUsers, concurrency: options.concurrency, targetRate, mix: options.mix, sessionLength: options.sessionLength, seconds: options.duration, warmupSeconds: options.warmup, random },
        api,
        client.send,
        (elapsed) => stepBar.update(Math.min(Math.round(total), Math.floor(elapsed))),
      );
      const wall = (performance.now() - wallBefore) / 1000;
      const serverCores = (processTreeCpuSeconds(server.pid) - serverBefore) / wall;
      const databaseCores = standIn ? (processTreeCpuSeconds(standIn.pid) - databaseBefore) / wall : null;
      // Counted as the window ends, before the probes' last polls give the workers time to catch up.
      const readyTasks = measuresLag(strategy) ? await readyFanoutTasks(db) : null;
      stepBar.update(Math.round(total));
      stepBar.stop();
      const deliveryLag = window ? await window.probe.finish() : null;
      window = null;
      steps.push({ ...result, serverCores, databaseCores, deliveryLag, readyFanoutTasks: readyTasks });
      const read = result.byOperation.read;
      const lag = deliveryLag ? `, delivery lag p50 ${fixed(deliveryLag.p50)} ms p99 ${fixed(deliveryLag.p99)} ms over ${deliveryLag.delivered} posts, ${readyTasks} fanout tasks ready at the end` : '';
      console.error(`${label} at ${targetRate || 'max'}: ${result.perSecond.toFixed(0)} ops/s, read p50 ${read?.p50.toFixed(1)} ms p99 ${read?.p99.toFixed(1)} ms, ${result.errors} errors${lag}`);
    }
    if (strategy === 'cache') databaseCeilingSamples.push(await ceiling());
    const databaseCeilingPagesPerSecond = databaseCeilingSamples.length > 0 ? Math.max(...databaseCeilingSamples) : null;
    return { strategy, mode, steps, databaseCeilingPagesPerSecond, databaseCeilingSamples };
  } finally {
    client.close();
    await server.stop();
    // The next strategy starts from the generated data: its own timelines, no workload posts or likes.
    for (const { name } of await db.listCollections({}, { nameOnly: true }).toArray()) {
      if (!baseCollections.has(name)) await db.dropCollection(name);
    }
    await db.collection('content').deleteMany({ _d: { $gt: graph.to } });
  }
}

/** ACTIVE_READER_DAYS as the server processes see it (they inherit this environment). */
const activeReaderMs = () => Number(process.env.ACTIVE_READER_DAYS ?? 7) * 24 * 3600 * 1000;

const fixed = (x: number | undefined) => (x === undefined || Number.isNaN(x) ? '–' : x < 10 ? x.toFixed(1) : x.toFixed(0));

function markdown(report: WorkloadReport): string {
  const { environment: env, options: o, data } = report;
  const mix = (o.mixName ? `${o.mixName}: ` : '') + operations.filter((op) => o.mix[op] > 0).map((op) => `${op} ${(o.mix[op] * 100).toFixed(1)}%`).join(', ');
  const lines = [
    `- Machine: ${env.cpu}, ${env.cores} cores, ${env.memoryGiB} GiB RAM; Node ${env.node}; load average ${env.loadAverageAtStart.join(' / ')} at start`,
    `- Database: ${env.database}`,
    `- Data: ${data.users.toLocaleString('en-US')} users, ${data.follows.toLocaleString('en-US')} follows, ${data.posts.toLocaleString('en-US')} posts (seed ${o.seed})`,
    `- Traffic: ${o.activeUsers} active users, ${o.concurrency} connections, sessions of ${o.sessionLength} operations on average; mix ${mix}`,
    `- Server: ${o.processes} process${o.processes > 1 ? 'es' : ''} (WEB_CONCURRENCY), ${o.execution} execution; ${o.warmup} s warm-up and ${o.duration} s measured per target rate`,
    '',
    `- Delivery lag (fanout-on-write strategies): up to ${o.lagSamplesPerSecond} posts a second of the measured window, from the createPost answer until every active follower's timeline holds the post (polled every 10 ms in the timeline collection; timeout ${o.lagTimeoutSeconds} s); fanout tasks ready = \`fanout_tasks\` with state ready as the window ended`,
    '',
    '| strategy | content | target ops/s | served ops/s | errors | server cores | db cores | delivery lag p50 / p99 ms (posts) | fanout tasks ready | operation | ops/s | p50 ms | p95 ms | p99 ms | p99.9 ms |',
    '|---|---|--:|--:|--:|--:|--:|--:|--:|---|--:|--:|--:|--:|--:|',
  ];
  for (const run of report.runs) {
    for (const step of run.steps) {
      let first = true;
      for (const op of operations) {
        const stats = step.byOperation[op];
        if (!stats) continue;
        const head = first
          ? `| ${run.strategy} | ${run.mode} | ${step.targetRate || 'max'} | ${step.perSecond.toFixed(0)} | ${step.errors} | ${step.serverCores.toFixed(2)} | ${step.databaseCores === null ? '–' : step.databaseCores.toFixed(2)} | ${lagCell(step.deliveryLag)} | ${step.readyFanoutTasks ?? '–'}`
          : '| | | | | | | | |';
        lines.push(`${head} | ${op} | ${fixed(stats.perSecond)} | ${fixed(stats.p50)} | ${fixed(stats.p95)} | ${fixed(stats.p99)} | ${fixed(stats.p999)} |`);
        first = false;
      }
    }
    if (run.databaseCeilingPagesPerSecond !== null) {
      const samples = run.databaseCeilingSamples.map((rate) => rate.toFixed(0)).join(' before, ') + ' after';
      lines.push(`| ${run.strategy} | ${run.mode} | database ceiling | ${run.databaseCeilingPagesPerSecond.toFixed(0)} pages/s (${samples}) | | | | | | reference page | | | | | |`);
    }
  }
  return lines.join('\n');
}

/** "p50 / p99 (delivered posts)", with the timed-out ones when there were any. */
function lagCell(lag: LagSummary | null | undefined): string {
  if (!lag) return '–';
  const timedOut = lag.timedOut > 0 ? `, ${lag.timedOut} timed out` : '';
  return `${fixed(lag.p50)} / ${fixed(lag.p99)} (${lag.delivered}${timedOut})`;
}

function latencyChart(report: WorkloadReport): string {
  const series: ChartSeries[] = report.runs.flatMap((run) => {
    const label = `${run.strategy}/${run.mode}`;
    // A curve is the open-loop steps; an as-fast-as-possible step (closed loop) bounds the queue by the connections, so it is not on it.
    const openLoop = run.steps.filter((step) => step.targetRate > 0);
    const steps = (openLoop.length > 0 ? openLoop : run.steps).filter((step) => step.byOperation.read);
    const at = (percentile: 'p50' | 'p99') => steps.map((step) => ({ x: step.perSecond, y: step.byOperation.read![percentile] }));
    return [
      { label: `${label} read p50`, points: at('p50') },
      { label: `${label} read p99`, points: at('p99'), dashed: true },
    ];
  });
  return lineChartSvg({
    title: `Timeline read latency against offered load (${report.options.processes} server process${report.options.processes > 1 ? 'es' : ''}, ${report.options.concurrency} connections)`,
    xLabel: 'served operations per second (all kinds)',
    yLabel: 'timeline read latency, ms',
    series,
  });
}

await main();
