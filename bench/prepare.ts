import cliProgress from 'cli-progress';
import type { Db } from 'mongodb';
import type { RunningApp } from '../src/app.js';
import { loadConfig, type Config } from '../src/config.js';
import { startStandIn, type StandIn } from '../src/db/standIn.js';
import { rebuildTimelines } from '../src/feed/rebuild.js';
import { createServices } from '../src/services.js';
import { generateGraph, type GeneratedGraph, type GraphSizes } from './generate.js';

/** The database server a benchmark uses: MONGODB_URI's, or the embedded stand-in started for the run. */
export interface BenchServer {
  /** Server address without a database; benchmarks add a database of their own, which they drop. */
  uri: string;
  standIn: StandIn | undefined;
  description: string;
  stop(): Promise<void>;
}

export async function benchDatabaseServer(): Promise<BenchServer> {
  const serverUri = loadConfig().mongodbUri;
  if (serverUri) return { uri: serverUri, standIn: undefined, description: 'MongoDB at MONGODB_URI', stop: async () => {} };
  console.error('starting the in-memory MongoDB stand-in…');
  const standIn = await startStandIn({ log: (line) => console.error(line) });
  return {
    uri: standIn.uri,
    standIn,
    description: 'embedded stand-in (mongo-java-server, in-memory; indexes serve only equality and $in lookups, see mongo-standin/README.md)',
    stop: () => standIn.stop(),
  };
}

/** Indexes and the strategy record, in a database a benchmark has just dropped. */
export async function prepareFreshDatabase(app: RunningApp): Promise<void> {
  const { services } = app;
  await Promise.all([services.graph.ensureIndexes(), services.feedState.ensureIndexes(), services.userAccounts.ensureIndexes(), services.content.ensureIndexes(), services.feed.backend.ensureIndexes(), services.fanout.ensureIndexes()]);
  await services.timelineState.record();
}

/** Generates the benchmark's users, follows and posts into `db`, with a progress bar. */
export async function loadGraph(db: Db, sizes: GraphSizes): Promise<GeneratedGraph> {
  const bar = progressBar('loading graph');
  bar.start(1, 0);
  const startedAt = performance.now();
  const graph = await generateGraph(db, sizes, (done, total) => {
    bar.setTotal(total);
    bar.update(done);
  });
  bar.stop();
  console.error(
    `loaded ${graph.handles.length} users, ${graph.edges} follows, ${graph.posts} posts ` +
      `in ${((performance.now() - startedAt) / 1000).toFixed(1)} s`,
  );
  return graph;
}

export function progressBar(label: string): cliProgress.SingleBar {
  return new cliProgress.SingleBar(
    {
      format: `${label.padEnd(32)} [{bar}] {percentage}% | {value}/{total} | {duration_formatted}`,
      hideCursor: true,
      // When stderr is a file or pipe, a line every 10 s instead of nothing.
      noTTYOutput: true,
      notTTYSchedule: 10_000,
    },
    cliProgress.Presets.shades_classic,
  );
}

/**
 * Builds `config`'s timelines from the loaded posts, before any server starts: at start the app
 * refuses fanout-on-write timelines that were not built for its strategy, so this does what the
 * rebuild command would, on our connection. Returns the seconds it took.
 */
export async function buildTimelines(db: Db, config: Config, label: string, posts: number): Promise<number> {
  const services = createServices(db, config);
  await Promise.all([services.graph.ensureIndexes(), services.feedState.ensureIndexes(), services.userAccounts.ensureIndexes(), services.content.ensureIndexes(), services.feed.backend.ensureIndexes()]);
  const bar = progressBar(`${label} rebuild`);
  bar.start(posts, 0);
  const started = performance.now();
  await rebuildTimelines(services, (done, total) => {
    bar.setTotal(total);
    bar.update(done);
  });
  bar.stop();
  return (performance.now() - started) / 1000;
}
