/**
 * The plain page and the page people load, side by side, on a server process of their own (as
 * `npm start` runs it), warm: pages per second and p50 / p99 at one connection and at many, the
 * server's CPU per page (from /proc, so the load generator's is not counted).
 */
import type { FeedStrategyName, TimelineContentMode } from '../src/config.js';
import { load, type LatencySummary, type Payload } from './measure.js';
import { fullTimelinePage, plainTimelinePage } from './pages.js';
import { processTreeCpuSeconds, startServerProcess } from './serverProcess.js';

export type PageKind = 'plain' | 'full';

export interface PageCost {
  page: PageKind;
  connections: number;
  pagesPerSecond: number;
  latency: LatencySummary;
  /** Server CPU per page served, milliseconds. */
  serverMs: number;
  failures: number;
}

export interface PageCosts {
  strategy: FeedStrategyName;
  mode: TimelineContentMode;
  rows: PageCost[];
  /** Database commands per warm page (counted by the in-process run of the same strategy). */
  commandsPerPage: Record<PageKind, number>;
}

export const pageQueries: Record<PageKind, string> = { plain: plainTimelinePage, full: fullTimelinePage };

/** Tokens of the readers, as the server that measures them signs them. */
export interface PageCostRun {
  uri: string;
  strategy: FeedStrategyName;
  mode: TimelineContentMode;
  jwtSecret: string;
  /** Authorization headers of the readers whose first pages are asked for. */
  authorizations: readonly string[];
  duration: number;
  connections: readonly number[];
  /** Directory for the server process's CPU profile, or null. */
  profileDirectory: string | null;
}

export async function measurePageCosts(run: PageCostRun, commandsPerPage: Record<PageKind, number>): Promise<PageCosts> {
  const server = await startServerProcess({
    MONGODB_URI: run.uri,
    FEED_STRATEGY: run.strategy,
    TIMELINE_CONTENT: run.mode,
    JWT_SECRET: run.jwtSecret,
    // One server: live events in process. No workers: nothing is posted while pages are measured.
    LIVE_EVENTS: 'local',
    FANOUT_WORKERS: '0',
  }, run.profileDirectory ? ['--cpu-prof', '--cpu-prof-dir', run.profileDirectory] : []);
  try {
    const payloads = (page: PageKind): Payload[] =>
      run.authorizations.map((authorization) => ({ authorization, body: JSON.stringify({ query: pageQueries[page], variables: { first: 20 } }) }));
    const rows: PageCost[] = [];
    for (const page of ['plain', 'full'] as const) {
      // Warm: every reader's page twice (the in-process tiers, compiled execution).
      await load(server.url, payloads(page), { connections: 4, duration: 0, amount: run.authorizations.length * 2 });
      for (const connections of run.connections) {
        const before = processTreeCpuSeconds(server.pid);
        const stats = await load(server.url, payloads(page), { connections, duration: run.duration, amount: null });
        const cpu = processTreeCpuSeconds(server.pid) - before;
        const served = stats.requestsPerSecond * stats.seconds;
        rows.push({ page, connections, pagesPerSecond: stats.requestsPerSecond, latency: stats.latency, serverMs: (cpu * 1000) / Math.max(1, served), failures: stats.failures });
        console.error(
          `${run.strategy}/${run.mode} ${page} page, ${connections} connection(s): ${stats.requestsPerSecond.toFixed(0)} pages/s, ` +
            `p50 ${stats.latency.p50.toFixed(1)} ms, p99 ${stats.latency.p99.toFixed(1)} ms, server ${((cpu * 1000) / Math.max(1, served)).toFixed(2)} ms/page`,
        );
      }
    }
    return { strategy: run.strategy, mode: run.mode, rows, commandsPerPage };
  } finally {
    await server.stop();
  }
}

/** The report's table of page costs. */
export function pageCostTable(costs: readonly PageCosts[]): string {
  const lines = [
    '| strategy | content | page | connections | pages/s | p50 / p99 ms | server ms / page | commands / page |',
    '|---|---|---|--:|--:|--:|--:|--:|',
  ];
  for (const cost of costs) {
    for (const row of cost.rows) {
      lines.push(
        `| ${cost.strategy} | ${cost.mode} | ${row.page} | ${row.connections} | ${row.pagesPerSecond.toFixed(0)} | ${row.latency.p50.toFixed(1)} / ${row.latency.p99.toFixed(1)} | ${row.serverMs.toFixed(2)} | ${Number.isNaN(cost.commandsPerPage[row.page]) ? '-' : cost.commandsPerPage[row.page].toFixed(1)} |`,
      );
    }
  }
  return lines.join('\n');
}
