import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, liveClient, subscribePostAdded, subscriptionsOpen } from '../live/liveClient.js';
import { startTestApp, testDatabaseUri, type TestApp } from '../support/testApp.js';

/** Prometheus's text format as samples: `name{labels}` → value. */
function samples(text: string): Map<string, number> {
  const found = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    found.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return found;
}

const sum = (found: Map<string, number>, prefix: string, ...labels: string[]) =>
  [...found].filter(([series]) => series.startsWith(prefix) && labels.every((label) => series.includes(label))).reduce((total, [, value]) => total + value, 0);

/** What dashboards rely on: the names and labels of docs/operations.md, "Running it", and that they move with traffic. */
describe('/metrics', () => {
  let app: TestApp;
  const scrape = async () => {
    const response = await fetch(app.url.replace('/graphql', '/metrics'));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return response.text();
  };

  beforeAll(async () => {
    app = await startTestApp({ FEED_STRATEGY: 'time-buckets' });
  });
  afterAll(() => app?.stop());

  it('carries every documented metric, and they move when traffic moves', async () => {
    const author = await app.signUp('metrics_author');
    const reader = await app.signUp('metrics_reader');
    await app.gql('mutation { follow(handle: "metrics_author") { handle } }', {}, reader);
    const client = liveClient(app, reader);
    const live = subscribePostAdded(client);
    await subscriptionsOpen(app, 1);
    const before = samples(await scrape());

    await app.gql('mutation { createPost(text: "counted") { id } }', {}, author);
    await live.waitFor(1);
    await app.settled();
    const timeline = '{ timeline(first: 5) { edges { node { text author { handle } } } } }';
    for (let i = 0; i < 3; i++) expect((await app.gql(timeline, {}, reader)).data.timeline.edges).toHaveLength(1);
    const text = await scrape();
    const after = samples(text);

    for (const name of [
      'http_server_request_duration_seconds',
      'graphql_operation_duration_seconds',
      'feed_queue_tasks',
      'feed_queue_oldest_ready_seconds',
      'feed_fanout_recipients_total',
      'feed_delivery_lag_seconds',
      'feed_live_subscriptions',
      'feed_change_stream_lag_seconds',
      'feed_cache_requests_total',
      'process_cpu_user_seconds_total',
      'nodejs_eventloop_lag_seconds',
      'mongodb_driver_pool_connections_in_use',
      'mongodb_driver_pool_waiting_operations',
    ]) {
      expect(text, name).toContain(`# TYPE ${name} `);
    }

    const moved = (prefix: string, ...labels: string[]) => sum(after, prefix, ...labels) - sum(before, prefix, ...labels);
    expect(moved('http_server_request_duration_seconds_count', 'method="POST"', 'route="/graphql"', 'status_code="200"')).toBeGreaterThanOrEqual(4);
    expect(moved('graphql_operation_duration_seconds_count', 'operation_type="mutation"', 'operation_name="createPost"', 'outcome="success"')).toBe(1);
    // The third read of the same query is answered by the direct compiled path, which Apollo's plugins never see.
    expect(moved('graphql_operation_duration_seconds_count', 'operation_type="query"', 'operation_name="timeline"', 'outcome="success"')).toBe(3);
    expect(moved('feed_fanout_recipients_total', 'strategy="time-buckets"')).toBe(1);
    expect(moved('feed_delivery_lag_seconds_count')).toBe(1);
    expect(moved('feed_cache_requests_total', 'result="hit"')).toBeGreaterThan(0);
    expect(after.get('feed_live_subscriptions{kind="timeline"}')).toBe(1);
    expect(after.get('feed_queue_oldest_ready_seconds')).toBe(0);
    live.stop();
    await client.dispose();
    await eventually(() => app.services.live.stats().subscriptions === 0, 'the subscription closed');
    expect(samples(await scrape()).get('feed_live_subscriptions{kind="timeline"}')).toBe(0);
  });

  it('counts queued tasks by kind and state, and the age of the oldest', async () => {
    await app.services.work.stop(); // nobody takes them
    await app.services.fanout.queue.enqueue([
      { _id: 'metrics-a', kind: 'deliver', payload: {} },
      { _id: 'metrics-b', kind: 'deliver', payload: {} },
      { _id: 'metrics-c', kind: 'fill-gap', payload: {} },
    ]);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const found = samples(await scrape());
    expect(found.get('feed_queue_tasks{kind="deliver",state="waiting"}')).toBe(2);
    expect(found.get('feed_queue_tasks{kind="fill-gap",state="waiting"}')).toBe(1);
    expect(found.get('feed_queue_oldest_ready_seconds')).toBeGreaterThanOrEqual(1);
    await app.services.fanout.queue.tasks.deleteMany({ _id: { $in: ['metrics-a', 'metrics-b', 'metrics-c'] } });
  });

  it('has as many series after 10,000 made-up operation names as after 10', async () => {
    const series = async () => [...samples(await scrape()).keys()].filter((name) => /^(graphql|http)_/.test(name));
    const madeUp = async (from: number, to: number) => {
      const names = Array.from({ length: to - from }, (_, i) => `MadeUp${from + i}`);
      // Sixteen at a time, as a flooding client would send them.
      for (let i = 0; i < names.length; i += 16) {
        await Promise.all(names.slice(i, i + 16).map((name) => app.gql(`query ${name} { __typename }`)));
      }
    };
    await madeUp(0, 10);
    const afterTen = await series();
    await madeUp(10, 10_000);
    const afterTenThousand = await series();
    expect(afterTenThousand).toEqual(afterTen);
    expect(afterTenThousand.join('\n')).not.toMatch(/MadeUp/);
    expect(afterTenThousand).toContain('graphql_operation_duration_seconds_count{operation_type="query",operation_name="__typename",outcome="success"}');
  }, 120_000);

  it('is not on the API port in production, but on METRICS_PORT, with /livez and /readyz', async () => {
    const production = await startTestApp({ NODE_ENV: 'production', MONGODB_URI: testDatabaseUri(), METRICS_PORT: '0' });
    try {
      expect((await fetch(production.url.replace('/graphql', '/metrics'))).status).not.toBe(200);
      expect(production.endpointsPort).toBeGreaterThan(0);
      const endpoint = (path: string) => fetch(`http://127.0.0.1:${production.endpointsPort}${path}`);
      expect(await (await endpoint('/metrics')).text()).toContain('# TYPE feed_queue_tasks gauge');
      expect((await endpoint('/livez')).status).toBe(200);
      expect((await endpoint('/readyz')).status).toBe(200);
      expect((await endpoint('/graphql')).status).toBe(404);
    } finally {
      await production.database.db.dropDatabase();
      await production.stop();
    }
  });
});
