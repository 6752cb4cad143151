/**
 * Socialite's traffic model (docs/workload-generator.md of mongodb-labs/socialite), driven over
 * HTTP: `activeUsers` sessions run at once, each a user doing operations one after another, chosen
 * by the mix, for a random number of operations averaging `sessionLength`; then another user takes
 * the place. `concurrency` requests are in flight at most. With a target rate the operations are
 * scheduled open-loop and latency is counted from the scheduled moment, so a slow server cannot
 * hide its queue (no coordinated omission); rate 0 runs closed-loop, as fast as it goes.
 */
import { Agent, request } from 'node:http';
import * as hdr from 'hdr-histogram-js';

export const operations = ['read', 'scroll', 'readOwn', 'post', 'like', 'follow', 'unfollow'] as const;
export type Operation = (typeof operations)[number];

export type Mix = Record<Operation, number>;

/** One user's state during a session: what the next operation can build on. */
export interface Session {
  user: string;
  /** Where "scroll" continues: the end of the last page read, if it had more. */
  cursor: string | null;
  /** Posts seen on the last page, for "like". */
  seenPostIds: string[];
  remaining: number;
}

export interface HttpReply {
  status: number;
  body: string;
}

export type Send = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, headers: Record<string, string>, body?: string) => Promise<HttpReply>;

/**
 * What each operation sends, for one API. Returns false when the reply was an error. An operation
 * may fall back to another (scroll without a cursor reads the first page) and says which ran.
 */
export type Operations = Partial<Record<Operation, (session: Session, send: Send) => Promise<{ ran: Operation; ok: boolean }>>>;

export interface TrafficOptions {
  users: readonly string[];
  activeUsers: number;
  concurrency: number;
  /** Operations per second over all sessions; 0 = as fast as `concurrency` allows. */
  targetRate: number;
  mix: Mix;
  sessionLength: number;
  seconds: number;
  /** Not recorded: lets caches and the JIT settle. */
  warmupSeconds: number;
  random: () => number;
}

export interface OperationStats {
  count: number;
  errors: number;
  perSecond: number;
  p50: number;
  p95: number;
  p99: number;
  p999: number;
}

export interface TrafficResult {
  targetRate: number;
  seconds: number;
  /** Completed operations per second, all kinds together. */
  perSecond: number;
  errors: number;
  byOperation: Partial<Record<Operation, OperationStats>>;
}

/**
 * A keep-alive HTTP client with at most `connections` sockets, lean enough to share the machine.
 * A request unanswered after `timeoutMs` fails, so a server that hangs cannot hang the benchmark.
 */
export function httpClient(baseUrl: string, connections: number, timeoutMs = 10_000): { send: Send; close: () => void } {
  const url = new URL(baseUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: connections, maxFreeSockets: connections });
  const send: Send = (method, path, headers, body) =>
    new Promise((resolve, reject) => {
      const outgoing = request(
        { host: url.hostname, port: url.port, method, path, agent, headers: body === undefined ? headers : { ...headers, 'content-length': Buffer.byteLength(body) } },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
          response.on('error', reject);
        },
      );
      outgoing.on('error', reject);
      outgoing.setTimeout(timeoutMs, () => outgoing.destroy(new Error(`no answer within ${timeoutMs} ms`)));
      outgoing.end(body);
    });
  return { send, close: () => agent.destroy() };
}

/** Picks an operation by the mix's weights. */
function chooser(mix: Mix, random: () => number): () => Operation {
  const entries = operations.filter((op) => mix[op] > 0).map((op) => [op, mix[op]] as const);
  const total = entries.reduce((sum, [, weight]) => sum + weight, 0);
  return () => {
    let point = random() * total;
    for (const [op, weight] of entries) if ((point -= weight) < 0) return op;
    return entries.at(-1)![0];
  };
}

export async function runTraffic(options: TrafficOptions, api: Operations, send: Send, onProgress: (elapsedSeconds: number) => void): Promise<TrafficResult> {
  const { random } = options;
  const choose = chooser(options.mix, random);
  const newSession = (): Session => ({
    user: options.users[Math.floor(random() * options.users.length)]!,
    cursor: null,
    seenPostIds: [],
    // Geometric around the mean, as Socialite re-uses each user for a random number of operations.
    remaining: Math.max(1, Math.round(-Math.log(1 - random()) * options.sessionLength)),
  });
  const idle: Session[] = Array.from({ length: options.activeUsers }, newSession);
  const histograms = new Map<Operation, hdr.Histogram>();
  const errors = new Map<Operation, number>();
  const histogramOf = (op: Operation) => {
    let histogram = histograms.get(op);
    if (!histogram) {
      // Microseconds, up to a minute, 3 significant digits.
      histogram = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: 3 });
      histograms.set(op, histogram);
    }
    return histogram;
  };

  const started = performance.now();
  const recordFrom = started + options.warmupSeconds * 1000;
  const end = recordFrom + options.seconds * 1000;
  let inFlight = 0;

  /** Runs one operation for an idle session; `scheduledAt` is when it should have started. */
  async function runOne(scheduledAt: number): Promise<void> {
    const session = idle.shift()!;
    inFlight++;
    let ran: Operation = choose();
    let ok = false;
    try {
      const operation = api[ran];
      if (!operation) throw new Error(`this API does not offer "${ran}"`);
      ({ ran, ok } = await operation(session, send));
    } catch {
      ok = false;
    }
    const finished = performance.now();
    inFlight--;
    if (scheduledAt >= recordFrom && finished <= end) {
      histogramOf(ran).recordValue(Math.max(1, Math.round((finished - scheduledAt) * 1000)));
      if (!ok) errors.set(ran, (errors.get(ran) ?? 0) + 1);
    }
    idle.push(--session.remaining > 0 ? session : newSession());
  }

  const progress = setInterval(() => onProgress((performance.now() - started) / 1000), 250);
  try {
    if (options.targetRate <= 0) {
      await Promise.all(
        Array.from({ length: Math.min(options.concurrency, options.activeUsers) }, async () => {
          while (performance.now() < end) await runOne(performance.now());
        }),
      );
    } else {
      await openLoop();
    }
  } finally {
    clearInterval(progress);
  }

  /** Operations start on schedule; those that find no free connection or idle user wait, and their wait counts. */
  async function openLoop(): Promise<void> {
    const interval = 1000 / options.targetRate;
    const waiting: number[] = [];
    const running = new Set<Promise<void>>();
    let next = started;
    for (;;) {
      const now = performance.now();
      for (; next <= now && next < end; next += interval) waiting.push(next);
      while (waiting.length > 0 && inFlight < options.concurrency && idle.length > 0) {
        const operation = runOne(waiting.shift()!).finally(() => running.delete(operation));
        running.add(operation);
      }
      if (now >= end) break;
      // Wake for the next scheduled start or a finished operation, whichever comes first.
      await Promise.race([new Promise((resolve) => setTimeout(resolve, Math.max(0, Math.min(next - now, 5)))), ...running]);
    }
    await Promise.all(running);
  }

  const byOperation: TrafficResult['byOperation'] = {};
  let total = 0;
  let totalErrors = 0;
  for (const [op, histogram] of histograms) {
    const ms = (p: number) => histogram.getValueAtPercentile(p) / 1000;
    const count = histogram.totalCount;
    total += count;
    totalErrors += errors.get(op) ?? 0;
    byOperation[op] = { count, errors: errors.get(op) ?? 0, perSecond: count / options.seconds, p50: ms(50), p95: ms(95), p99: ms(99), p999: ms(99.9) };
    histogram.destroy();
  }
  return { targetRate: options.targetRate, seconds: options.seconds, perSecond: total / options.seconds, errors: totalErrors, byOperation };
}

/**
 * Parses `--<op>-pct` style weights: those given run at their share, the rest of 1 is split evenly
 * over the operations not given (Socialite's rule); all absent means equal shares.
 */
export function mixFrom(given: Partial<Record<Operation, number>>, offered: readonly Operation[] = operations): Mix {
  const mix = Object.fromEntries(operations.map((op) => [op, 0])) as Mix;
  const unspecified = offered.filter((op) => given[op] === undefined);
  const specified = offered.filter((op) => given[op] !== undefined).reduce((sum, op) => sum + given[op]!, 0);
  if (specified > 1 + 1e-9) throw new Error(`the operation shares add up to ${specified}, more than 1`);
  for (const op of offered) mix[op] = given[op] ?? (unspecified.length ? (1 - specified) / unspecified.length : 0);
  return mix;
}

/**
 * Mixes by name, for `--mix`: `reads` is timeline reads only; `socialite` is the traffic model of
 * Socialite's own benchmark runs as this project measures it against Socialite: 80 % timeline reads,
 * 10 % posts, 5 % follows, 5 % unfollows.
 */
export const namedMixes = {
  reads: { read: 1 },
  socialite: { read: 0.8, post: 0.1, follow: 0.05, unfollow: 0.05 },
} as const satisfies Record<string, Partial<Record<Operation, number>>>;
export type MixName = keyof typeof namedMixes;

/** `--mix <name>`: the named mix, with every operation it does not name at 0. */
export function namedMix(raw: string): { name: MixName; mix: Mix } {
  const name = raw.trim();
  if (!Object.hasOwn(namedMixes, name)) throw new Error(`--mix: one of ${Object.keys(namedMixes).join(', ')}, got "${raw}"`);
  const given: Partial<Record<Operation, number>> = namedMixes[name as MixName];
  return { name: name as MixName, mix: mixFrom(given, Object.keys(given) as Operation[]) };
}

/**
 * Who each user follows, as the load generator believes it, kept current as follows and unfollows
 * run, so a follow picks an account not followed and an unfollow one followed. A pick changes the
 * state at once (before the request goes out) and `undo` puts it back if the request failed: two
 * sessions of the same user in flight at once then never pick the same account twice.
 */
export class FollowTracker {
  private readonly followees = new Map<string, Set<string>>();

  constructor(
    private readonly users: readonly string[],
    edges: Iterable<readonly [follower: string, followee: string]> = [],
  ) {
    for (const [follower, followee] of edges) this.setOf(follower).add(followee);
  }

  private setOf(user: string): Set<string> {
    let set = this.followees.get(user);
    if (!set) this.followees.set(user, (set = new Set()));
    return set;
  }

  follows(user: string, target: string): boolean {
    return this.followees.get(user)?.has(target) ?? false;
  }

  count(user: string): number {
    return this.followees.get(user)?.size ?? 0;
  }

  /** An account `user` neither is nor follows, now marked followed; null when there is none. */
  pickToFollow(user: string, random: () => number): string | null {
    const followed = this.setOf(user);
    // Rejection sampling first: most users follow a small part of the population.
    for (let attempt = 0; attempt < 32; attempt++) {
      const candidate = this.users[Math.floor(random() * this.users.length)]!;
      if (candidate !== user && !followed.has(candidate)) {
        followed.add(candidate);
        return candidate;
      }
    }
    const candidates = this.users.filter((candidate) => candidate !== user && !followed.has(candidate));
    const target = candidates[Math.floor(random() * candidates.length)];
    if (target === undefined) return null;
    followed.add(target);
    return target;
  }

  /** An account `user` follows, now marked unfollowed; null when there is none. */
  pickToUnfollow(user: string, random: () => number): string | null {
    const followed = this.followees.get(user);
    if (!followed || followed.size === 0) return null;
    const target = [...followed][Math.floor(random() * followed.size)]!;
    followed.delete(target);
    return target;
  }

  /** Takes back a pick whose request failed. */
  undo(kind: 'follow' | 'unfollow', user: string, target: string): void {
    if (kind === 'follow') this.setOf(user).delete(target);
    else this.setOf(user).add(target);
  }
}
