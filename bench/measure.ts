import autocannon from 'autocannon';
import type { CommandStartedEvent, Db, MongoClient } from 'mongodb';

/** The page a client shows: what a real timeline screen asks for. */
export const timelineQuery = `query Timeline($after: String) {
  timeline(first: 20, after: $after) {
    edges { cursor node { id text createdAt author { handle displayName } } }
    pageInfo { hasNextPage endCursor }
  }
}`;

/**
 * The fields of a page of Socialite's timeline (`GET /users/{id}/timeline`: each post's id,
 * message, date and author id), and what scrolling needs. The Socialite comparison reads this by
 * default, so both sides serve the same information; `timelineQuery` adds a cursor per post and
 * the author's display name (about twice the bytes).
 */
export const socialiteFieldsTimelineQuery = `query Timeline($after: String) {
  timeline(first: 20, after: $after) {
    edges { node { id text createdAt author { handle } } }
    pageInfo { hasNextPage endCursor }
  }
}`;

export const createPostMutation = 'mutation Post($text: String!) { createPost(text: $text) { id createdAt } }';

/** The generated data every strategy shares; anything else belongs to one run and is dropped after it. */
export const baseCollections = new Set(['users', 'followers', 'following', 'content']);

/** Not timeline data either: `feed_meta` records which strategy built the timelines. */
export const sharedCollections = new Set([...baseCollections, 'feed_meta']);

export interface LatencySummary {
  count: number;
  p50: number;
  p99: number;
  mean: number;
  max: number;
}

export interface LoadStats {
  latency: LatencySummary;
  requestsPerSecond: number;
  seconds: number;
  /** Non-200 responses, GraphQL errors and connection errors: any of them spoils the run. */
  failures: number;
}

/** One prepared request: who asks, and the exact JSON body. */
export interface Payload {
  authorization: string;
  body: string;
}

export function summarize(samples: readonly number[]): LatencySummary {
  if (samples.length === 0) return { count: 0, p50: NaN, p99: NaN, mean: NaN, max: NaN };
  const sorted = [...samples].sort((a, b) => a - b);
  // Nearest-rank percentiles: an observed value, never an interpolation.
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;
  return {
    count: sorted.length,
    p50: at(0.5),
    p99: at(0.99),
    mean: sorted.reduce((sum, x) => sum + x, 0) / sorted.length,
    max: sorted[sorted.length - 1]!,
  };
}

export const timelineBody = (after: string | null): string =>
  JSON.stringify({ query: timelineQuery, variables: { after } });

/** A single POST /graphql, timed; throws on transport or GraphQL errors so a broken run is loud. */
export async function graphql<T>(url: string, authorization: string, body: string): Promise<{ ms: number; data: T }> {
  const started = performance.now();
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization },
    body,
  });
  const json = (await response.json()) as { data?: T; errors?: unknown };
  const ms = performance.now() - started;
  if (!response.ok || json.errors || !json.data) {
    throw new Error(`GraphQL request failed (${response.status}): ${JSON.stringify(json.errors ?? json)}`);
  }
  return { ms, data: json.data };
}

/**
 * `connections` clients send `payloads` round-robin for `duration` seconds (or `amount`
 * requests). Latencies come from autocannon's per-response event, which has sub-millisecond
 * resolution (its own histogram rounds to whole milliseconds).
 */
export function load(
  url: string,
  payloads: readonly Payload[],
  options: { connections: number; duration: number; amount: number | null },
): Promise<LoadStats> {
  if (payloads.length === 0) throw new Error('load: nothing to send');
  let next = 0;
  let graphqlFailures = 0;
  const latencies: number[] = [];
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url,
        connections: options.connections,
        ...(options.amount === null ? { duration: options.duration } : { amount: options.amount }),
        requests: [
          {
            method: 'POST',
            setupRequest: (request) => {
              const payload = payloads[next++ % payloads.length]!;
              return {
                ...request,
                headers: { 'content-type': 'application/json', authorization: payload.authorization },
                body: payload.body,
              };
            },
            // A string check, not JSON.parse: the client shares this process (and its CPU) with the server.
            onResponse: (status, body) => {
              if (status !== 200 || body.includes('"errors"')) graphqlFailures++;
            },
          },
        ],
      },
      (error, result) => {
        if (error) return reject(error);
        resolve({
          latency: summarize(latencies),
          requestsPerSecond: result['2xx'] / result.duration,
          seconds: result.duration,
          failures: graphqlFailures + result.errors + result.non2xx,
        });
      },
    );
    instance.on('response', (_client, _status, _bytes, responseTime) => latencies.push(responseTime));
  });
}

/** Which collection a command works on, for the per-page breakdown. */
function collectionOf(event: CommandStartedEvent): string {
  const command = event.command as Record<string, unknown>;
  const target = event.commandName === 'getMore' ? command.collection : command[event.commandName];
  return typeof target === 'string' ? target : `(${event.commandName})`;
}

/**
 * Counts the database commands `client` sends while `action` runs, by collection. The live-update
 * change stream's getMores on `live_events` poll on a timer, not per request, so they are left out.
 */
export async function countCommands(client: MongoClient, action: () => Promise<void>): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  const listener = (event: CommandStartedEvent) => {
    const name = collectionOf(event);
    if (event.commandName === 'getMore' && name === 'live_events') return;
    counts[name] = (counts[name] ?? 0) + 1;
  };
  client.on('commandStarted', listener);
  try {
    await action();
  } finally {
    client.off('commandStarted', listener);
  }
  return counts;
}

export interface CollectionSize {
  documents: number;
  bytes: number;
}

/**
 * `collStats` count and size (uncompressed BSON): the stand-in supports these but not
 * `storageSize` or `$collStats`, and they are comparable across strategies anyway.
 */
export async function collectionSizes(db: Db): Promise<Record<string, CollectionSize>> {
  const names = (await db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name).sort();
  const sizes: Record<string, CollectionSize> = {};
  for (const name of names) {
    const stats = await db.command({ collStats: name });
    sizes[name] = { documents: Number(stats.count ?? 0), bytes: Number(stats.size ?? 0) };
  }
  return sizes;
}

/**
 * The reference page without the API: each reader's cache document, then the newest 20 entries'
 * authors in one `$in`, as fast as `concurrency` loops can go for `seconds`.
 */
export async function referencePageRate(db: Db, readers: readonly string[], concurrency: number, seconds: number): Promise<number> {
  const caches = db.collection<{ _id: string; _c: { _a: string }[] }>('timeline_cache');
  const users = db.collection<{ _id: string }>('users');
  const pages = readers.map((reader) => ({ reader, authors: [] as string[] }));
  for (const page of pages) {
    const cache = await caches.findOne({ _id: page.reader });
    page.authors = [...new Set((cache?._c ?? []).slice(-20).map((entry) => entry._a))];
  }
  const end = performance.now() + seconds * 1000;
  let served = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, loop) => {
      for (let i = loop; performance.now() < end; i += concurrency) {
        const page = pages[i % pages.length]!;
        await caches.findOne({ _id: page.reader });
        await users.find({ _id: { $in: page.authors } }).toArray();
        served++;
      }
    }),
  );
  return served / seconds;
}
