/**
 * Delivery lag of the fanout-on-write strategies under the workload: from the moment a post's
 * createPost answer reaches the load generator until the post is in the timeline of every active
 * follower, read straight from the strategy's timeline collection (so the measurement adds no API
 * traffic). A few posts a second are sampled; each is polled until delivered, excused or timed out.
 */
import { ObjectId, type Db, type Filter } from 'mongodb';
import type { FeedStrategyName } from '../src/config.js';
import { storedPostId } from './ids.js';

/** p-th percentile (0..100) by nearest rank over unsorted values; NaN when there are none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

/**
 * Lets through at most `perSecond` posts a second, evenly: a post is sampled when at least
 * 1/perSecond s passed since the last sampled one. 0 samples nothing.
 */
export function sampler(perSecond: number): (now: number) => boolean {
  const gap = perSecond > 0 ? 1000 / perSecond : Infinity;
  let last = -Infinity;
  return (now) => {
    if (perSecond <= 0 || now - last < gap) return false;
    last = now;
    return true;
  };
}

export interface LagSummary {
  /** Posts sampled in the measured window. */
  samples: number;
  /** Of those, posts with no active follower to deliver to: not in the percentiles. */
  noAudience: number;
  /** Of those, delivered to every follower expected; the percentiles are over these. */
  delivered: number;
  /** Not in every expected timeline within the timeout. */
  timedOut: number;
  p50: number;
  p99: number;
  max: number;
  /** Followers waited for per sampled post that had any, on average. */
  meanRecipients: number;
}

export function summarizeLags(lagsMs: readonly number[], counts: { samples: number; noAudience: number; timedOut: number; recipients: number }): LagSummary {
  const { samples, noAudience, timedOut, recipients } = counts;
  const measured = samples - noAudience;
  return {
    samples,
    noAudience,
    delivered: lagsMs.length,
    timedOut,
    p50: percentile(lagsMs, 50),
    p99: percentile(lagsMs, 99),
    max: lagsMs.length > 0 ? Math.max(...lagsMs) : NaN,
    meanRecipients: measured > 0 ? recipients / measured : NaN,
  };
}

/** Where each fanout-on-write strategy keeps timelines, and which field names the reader. */
const timelineStores: Partial<Record<FeedStrategyName, { collection: string; userField: string }>> = {
  'time-buckets': { collection: 'timed_buckets', userField: '_id._u' },
  'sized-buckets': { collection: 'sized_buckets', userField: '_u' },
  cache: { collection: 'timeline_cache', userField: '_id' },
};

export const measuresLag = (strategy: FeedStrategyName): boolean => strategy in timelineStores;

export interface LagProbeOptions {
  /** Between two looks at one post's pending followers. */
  pollMs: number;
  /** A post not everywhere by then counts as timed out. */
  timeoutMs: number;
  /** Followers whose last read is older than this get no delivery (ACTIVE_READER_DAYS). */
  activeReaderMs: number;
}

/**
 * Tracks the sampled posts. `track` is called as the createPost answer arrives; `finish` waits for
 * the posts still pending (up to the timeout) and summarizes.
 *
 * Who must have the post: the author's followers (the `followers` collection, read right after the
 * answer) who are active readers; under the cache strategy, only those holding a cache, since
 * deliveries never create one. A follower who unfollows the author, or whose cache is dropped,
 * while the post is pending is no longer waited for (checked every 10 polls).
 */
export class LagProbe {
  private readonly lags: number[] = [];
  private readonly pending = new Set<Promise<void>>();
  private samples = 0;
  private timedOut = 0;
  private noAudience = 0;
  private recipients = 0;
  private readonly store: { collection: string; userField: string };

  constructor(
    private readonly db: Db,
    strategy: FeedStrategyName,
    private readonly options: LagProbeOptions,
  ) {
    const store = timelineStores[strategy];
    if (!store) throw new Error(`${strategy} delivers no timelines to measure`);
    this.store = store;
  }

  track(author: string, postId: string, answeredAt: number): void {
    this.samples++;
    const probe = this.follow(author, storedPostId(postId), answeredAt).catch((error: unknown) => {
      console.error(`delivery lag probe failed: ${String(error)}`);
      this.timedOut++;
    });
    this.pending.add(probe);
    void probe.finally(() => this.pending.delete(probe));
  }

  async finish(): Promise<LagSummary> {
    await Promise.all(this.pending);
    return summarizeLags(this.lags, { samples: this.samples, noAudience: this.noAudience, timedOut: this.timedOut, recipients: this.recipients });
  }

  private async expected(author: string, among?: readonly string[]): Promise<Set<string>> {
    const followers = (
      await this.db
        .collection<{ _f: string; _t: string }>('followers')
        .find({ _f: author, ...(among ? { _t: { $in: [...among] } } : {}) }, { projection: { _t: 1 } })
        .toArray()
    ).map((edge) => edge._t);
    if (followers.length === 0) return new Set();
    const activeSince = new Date(Date.now() - this.options.activeReaderMs);
    const active = await this.db
      .collection<{ _id: string; readAt?: Date }>('users')
      .find({ _id: { $in: followers }, readAt: { $gte: activeSince } }, { projection: { _id: 1 } })
      .toArray();
    let users = active.map((user) => user._id);
    if (this.store.collection === 'timeline_cache' && users.length > 0) {
      const caches = await this.db.collection<{ _id: string }>('timeline_cache').find({ _id: { $in: users } }, { projection: { _id: 1 } }).toArray();
      users = caches.map((cache) => cache._id);
    }
    return new Set(users);
  }

  private async follow(author: string, postId: ObjectId, answeredAt: number): Promise<void> {
    const waiting = await this.expected(author);
    if (waiting.size === 0) {
      this.noAudience++;
      return;
    }
    this.recipients += waiting.size;
    const timelines = this.db.collection(this.store.collection);
    const userOf = (doc: Record<string, unknown>): string =>
      this.store.userField === '_id._u' ? (doc._id as { _u: string })._u : (doc[this.store.userField] as string);
    for (let poll = 1; waiting.size > 0; poll++) {
      const holders = await timelines
        .find({ [this.store.userField]: { $in: [...waiting] }, '_c._id': postId } as Filter<Record<string, unknown>>, { projection: { [this.store.userField]: 1 } })
        .toArray();
      for (const holder of holders) waiting.delete(userOf(holder));
      if (waiting.size === 0) break;
      if (performance.now() - answeredAt > this.options.timeoutMs) {
        this.timedOut++;
        return;
      }
      if (poll % 10 === 0) {
        // Unfollowed the author, or lost the cache, meanwhile: not waited for any more.
        const still = await this.expected(author, [...waiting]);
        for (const user of waiting) if (!still.has(user)) waiting.delete(user);
        if (waiting.size === 0) break;
      }
      await new Promise((resolve) => setTimeout(resolve, this.options.pollMs));
    }
    this.lags.push(performance.now() - answeredAt);
  }
}

/** Fanout sub-tasks (and first tasks) still waiting to run or running: `fanout_tasks` with state ready. */
export function readyFanoutTasks(db: Db): Promise<number> {
  return db.collection('fanout_tasks').countDocuments({ state: 'ready' });
}
