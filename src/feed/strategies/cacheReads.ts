import DataLoader from 'dataloader';
import type { Collection, FindOptions } from 'mongodb';
import type { CacheDocument } from './cacheDocument.js';

/**
 * Readers' caches read from MongoDB. A page whose cache this process does not hold reads it, and
 * under load many requests are at that step in the same turn of the event loop: they share one
 * `$in` query, so the driver's and the database's cost per command is paid once per turn rather
 * than once per page. A request alone still makes its one command, sent one turn later
 * (`setImmediate`, after the I/O the loop has in hand). Nothing is kept here: the strategy holds
 * what it read (TimelineCache's `held`).
 */
export class CacheReads {
  private readonly loader = new DataLoader<CacheRead, CacheDocument | null>((reads) => this.readCaches(reads), {
    cache: false,
    batchScheduleFn: (send) => setImmediate(send),
    maxBatchSize: maxCoalescedReads,
  });

  constructor(private readonly timelines: Collection<CacheDocument>) {}

  /** The reader's whole cache, or with `newest` only its newest entries (a first page's `$slice`). */
  load(userId: string, newest: number | null): Promise<CacheDocument | null> {
    return this.loader.load({ userId, newest });
  }

  /**
   * One query for the whole caches asked for, one for the newest entries of the others (as many as
   * the largest ask, each answer cut to its own: the same entries a `$slice` of its size gives).
   */
  private async readCaches(reads: readonly CacheRead[]): Promise<(CacheDocument | null)[]> {
    const whole = reads.filter((read) => read.newest === null);
    const newest = reads.filter((read) => read.newest !== null);
    const largest = Math.max(0, ...newest.map((read) => read.newest!));
    const [wholeCaches, newestCaches] = await Promise.all([
      this.cachesOf(whole, {}),
      this.cachesOf(newest, { projection: { _c: { $slice: -largest }, _e: 1, _h: 1 } }),
    ]);
    return reads.map((read) => {
      if (read.newest === null) return wholeCaches.get(read.userId) ?? null;
      const cache = newestCaches.get(read.userId);
      return cache ? { ...cache, _c: cache._c.slice(-read.newest) } : null;
    });
  }

  private async cachesOf(reads: readonly CacheRead[], options: FindOptions): Promise<Map<string, CacheDocument>> {
    if (reads.length === 0) return new Map();
    const userIds = [...new Set(reads.map((read) => read.userId))];
    const found = await this.timelines.find({ _id: { $in: userIds } }, options).toArray();
    return new Map(found.map((cache) => [cache._id, cache]));
  }
}

/** A page's read of its reader's cache: the whole of it, or only the newest entries. */
interface CacheRead {
  userId: string;
  newest: number | null;
}

/**
 * Bounds one shared answer, which holds whole caches for later pages: at the default cache size 32
 * fit in one reply; with large caches the cursor fetches the rest (`getMore`), as for any find.
 */
const maxCoalescedReads = 32;
