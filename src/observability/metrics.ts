/**
 * observability/ owns what an operator watches: metrics (this module, prom-client), traces
 * (tracing.ts, OpenTelemetry), request ids and the origin that queued tasks carry (requests.ts,
 * requestScope.ts), and the health and metrics endpoints (endpoints.ts). Every layer above may record
 * into it; it knows none of them: whatever it reports at scrape time is handed to it as a function.
 *
 * The metric names and labels are a contract with dashboards (docs/operations.md, "Running it";
 * docs/operations.md): rename nothing. Every label value comes from a fixed set (routes, methods,
 * task kinds, cache names, the schema's root fields), never from what a client sent.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** One process's metrics, on /metrics. */
export const registry = new Registry();
collectDefaultMetrics({ register: registry });

/** Request latencies: from a few milliseconds (a warm page) to the request timeout. */
const requestBuckets = [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export const httpRequestDuration = new Histogram({
  name: 'http_server_request_duration_seconds',
  help: 'HTTP requests by method, route and status code, from the first byte read to the last byte sent',
  labelNames: ['method', 'route', 'status_code'] as const,
  buckets: requestBuckets,
  registers: [registry],
});

export const graphqlOperationDuration = new Histogram({
  name: 'graphql_operation_duration_seconds',
  help: 'GraphQL operations over HTTP, by type, root field (operation_name) and outcome, however they were executed',
  labelNames: ['operation_type', 'operation_name', 'outcome'] as const,
  buckets: requestBuckets,
  registers: [registry],
});

export const fanoutRecipients = new Counter({
  name: 'feed_fanout_recipients_total',
  help: "Followers' timelines a post was written into by fanout, by timeline strategy",
  labelNames: ['strategy'] as const,
  registers: [registry],
});

export const deliveryLag = new Histogram({
  name: 'feed_delivery_lag_seconds',
  help: "Time from a post's creation to its delivery into followers' timelines (one observation per post and fanout write)",
  buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600],
  registers: [registry],
});

export const changeStreamLag = new Gauge({
  name: 'feed_change_stream_lag_seconds',
  help: 'Age of the last live event this process read from the change stream when it read it; 0 once it has caught up',
  registers: [registry],
});

const cacheRequests = new Counter({
  name: 'feed_cache_requests_total',
  help: 'Look-ups in the in-process caches, by cache and result (hit, miss)',
  labelNames: ['cache', 'result'] as const,
  registers: [registry],
});

/** A cache's two counters, bound once: counting a hit on a page's hot path is then one addition. */
export function cacheCounters(cache: string): { hit(count?: number): void; miss(count?: number): void } {
  const label = cache.replace(/\s+/g, '_');
  const hits = cacheRequests.labels({ cache: label, result: 'hit' });
  const misses = cacheRequests.labels({ cache: label, result: 'miss' });
  return { hit: (count = 1) => hits.inc(count), miss: (count = 1) => misses.inc(count) };
}

/** Queue tasks by kind and state, as a process reads them from the queue's collection. */
export interface QueueSnapshot {
  tasks: { kind: string; state: QueueTaskState; count: number }[];
  /** Creation time of the oldest task not yet done; null when there is none. */
  oldestReadyAt: Date | null;
}
export type QueueTaskState = 'waiting' | 'running' | 'scheduled' | 'dead';

/** Open live subscriptions by kind, in this process. */
export type LiveSnapshot = Record<'timeline' | 'notifications', number>;

/** Connections of a MongoDB client's pools: checked out, and requests waiting for one. */
export interface PoolSnapshot {
  inUse: number;
  waiting: number;
}

const queueReaders = new Set<() => Promise<QueueSnapshot>>();
const liveReaders = new Set<() => LiveSnapshot>();
const poolReaders = new Set<() => PoolSnapshot>();

/** Read at every scrape; several apps in one process (tests) add up. Returns the function that stops reading. */
function readWith<T>(readers: Set<T>, reader: T): () => void {
  readers.add(reader);
  return () => readers.delete(reader);
}
export const reportQueue = (reader: () => Promise<QueueSnapshot>) => readWith(queueReaders, reader);
export const reportLive = (reader: () => LiveSnapshot) => readWith(liveReaders, reader);
export const reportPool = (reader: () => PoolSnapshot) => readWith(poolReaders, reader);

/** Read once per scrape, for both queue gauges. */
let queueScrape: Promise<QueueSnapshot[]> | null = null;
function scrapeQueues(): Promise<QueueSnapshot[]> {
  queueScrape ??= Promise.all([...queueReaders].map((read) => read())).finally(() => {
    queueScrape = null;
  });
  return queueScrape;
}

new Gauge({
  name: 'feed_queue_tasks',
  help: 'Tasks in the durable queue by kind and state (waiting, running, dead): the queue is shared, so every process reports the same numbers',
  labelNames: ['kind', 'state'] as const,
  registers: [registry],
  async collect() {
    this.reset();
    for (const snapshot of await scrapeQueues()) {
      for (const { kind, state, count } of snapshot.tasks) this.inc({ kind, state }, count);
    }
  },
});

new Gauge({
  name: 'feed_queue_oldest_ready_seconds',
  help: 'Age of the oldest task waiting or running in the durable queue; 0 when it is empty',
  registers: [registry],
  async collect() {
    const oldest = Math.min(...(await scrapeQueues()).map((snapshot) => snapshot.oldestReadyAt?.getTime() ?? Infinity));
    this.set(Number.isFinite(oldest) ? Math.max(0, (Date.now() - oldest) / 1000) : 0);
  },
});

new Gauge({
  name: 'feed_live_subscriptions',
  help: 'Open live subscriptions in this process, by kind',
  labelNames: ['kind'] as const,
  registers: [registry],
  collect() {
    const totals: LiveSnapshot = { timeline: 0, notifications: 0 };
    for (const read of liveReaders) {
      const snapshot = read();
      totals.timeline += snapshot.timeline;
      totals.notifications += snapshot.notifications;
    }
    for (const [kind, count] of Object.entries(totals)) this.set({ kind }, count);
  },
});

const poolGauge = (name: string, help: string, value: (snapshot: PoolSnapshot) => number) =>
  new Gauge({
    name,
    help,
    registers: [registry],
    collect() {
      this.set([...poolReaders].reduce((sum, read) => sum + value(read()), 0));
    },
  });
poolGauge('mongodb_driver_pool_connections_in_use', "Connections of the MongoDB driver's pools checked out by an operation", (pool) => pool.inUse);
poolGauge('mongodb_driver_pool_waiting_operations', "Operations waiting for a connection of the MongoDB driver's pools", (pool) => pool.waiting);

/** Prometheus's text format. */
export function metricsText(): Promise<string> {
  return registry.metrics();
}
export const metricsContentType = registry.contentType;
