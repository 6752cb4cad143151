import { createHash } from 'node:crypto';
import DataLoader from 'dataloader';
import type { Db, Filter, FindOptions, ObjectId } from 'mongodb';
import { ReadThroughCache } from '../cache/readThrough.js';
import type { TimelineOptions } from '../config.js';
import type { ContentService } from '../content/contentService.js';
import type { PostRecord } from '../records/posts.js';
import { compareNewestFirst, type Page, type PageRequest, type PostPosition } from '../content/position.js';
import { isDuplicateKeyError } from '../errors.js';
import { fromEntryDocument, nearestBeyond, pageFromNearest, toEntryDocument, type EntryDocument } from './entries.js';
import { FanoutOnWrite } from './fanoutOnWrite.js';
import type { FeedBackend, TimelinesChanged } from './feedBackend.js';
import type { TimelineEntry } from './timelineEntry.js';

/** The newest entries of one user's timeline, oldest first, at most `TIMELINE_CACHE_SIZE`. */
export interface CacheDocument {
  _id: string;
  _c: EntryDocument[];
  /** Nothing is below the oldest entry: see `bottomMark`. */
  _e?: string;
}

/**
 * What a cache records when a read found nothing below its oldest entry: that entry and whom the
 * reader followed. The record holds as long as both are unchanged, because no post is ever older
 * than the entries already delivered (a capped push that trims changes the oldest entry; a follow
 * or an unfollow changes the authors; a deletion of the oldest entry changes it). Without it, a
 * reader whose whole timeline is shorter than a page paid a second round trip on every page.
 * Pulled posts never enter the cache and are read apart, so "nothing below" concerns pushed posts.
 */
function bottomMark(oldestId: ObjectId | undefined, authorIds: readonly string[]): string {
  const authors = createHash('sha1');
  for (const authorId of [...authorIds].sort()) authors.update(authorId).update('\0');
  return `${oldestId?.toHexString() ?? ''} ${authors.digest('base64')}`;
}

/**
 * Fanout on write into a capped per-user cache (Socialite's FanoutOnWriteToCache). A cache exists
 * only for users who read: it is built from fanout on read at the first read, and deliveries
 * update it without upsert, so users who never read cost nothing. The cache always holds a
 * gap-free newest stretch of the timeline; anything older is read by fanout on read from the
 * cache's oldest entry, so pages and cursors continue across the edge.
 */
export class TimelineCache extends FanoutOnWrite<CacheDocument> implements FeedBackend {
  readonly strategy = 'cache' as const;
  readonly rebuild = 'lazy' as const;

  /**
   * A page whose cache this process does not hold reads it, and under load many requests are at
   * that step in the same turn of the event loop: they share one `$in` query, so the driver's and
   * the database's cost per command is paid once per turn rather than once per page. A request
   * alone still makes its one command, sent one turn later (`setImmediate`, after the I/O the loop
   * has in hand). The loader keeps nothing itself: what is kept is `held`, below.
   */
  private readonly cacheReads = new DataLoader<CacheRead, CacheDocument | null>((reads) => this.readCaches(reads), {
    cache: false,
    batchScheduleFn: (send) => setImmediate(send),
    maxBatchSize: maxCoalescedReads,
  });

  /**
   * The caches this process read, held in front of MongoDB (the L1 tier of
   * `../shared/reference/weibo-feed-cache-architecture.zh.md`), so a warm page makes no round trip.
   * Every write to a cache below forgets it here at once and announces it to every other instance
   * (`timelinesChanged`, a `changed` live event) once it is stored; a fanout sub-task whose process
   * dies in between is retried by the queue, which announces again. Entries are trusted for 10 s at
   * most: the backstop for a request that died between its write and the announcement, or an
   * announcement lost in a database outage.
   */
  private readonly held = new ReadThroughCache<string, HeldCache>('timeline caches', {
    max: 100_000,
    ttlMs: 10_000,
    // Entries of embedded posts are the largest: at most about 100 MB at the longest texts.
    sized: { maxSize: 200_000, sizeOf: (held) => held.entries.length + 1 },
  });

  constructor(
    db: Db,
    content: ContentService,
    options: TimelineOptions,
    private readonly timelinesChanged: TimelinesChanged,
  ) {
    super(db, 'timeline_cache', content, options);
  }

  override forgetHeld(userIds: readonly string[]): void {
    this.held.invalidate(userIds);
  }

  cacheStats() {
    return this.held.stats();
  }

  override async clear(): Promise<void> {
    await super.clear();
    this.held.clear();
  }

  override async dropTimeline(userId: string): Promise<void> {
    await this.writing([userId], () => super.dropTimeline(userId));
  }

  /**
   * Every write to caches goes through here: they are forgotten here at once and announced to every
   * instance once the write is over, failed ones included (an unordered bulk write may have done
   * part of its work).
   */
  private async writing(userIds: readonly string[], write: () => Promise<unknown>): Promise<void> {
    try {
      await write();
    } finally {
      this.held.invalidate(userIds);
      await this.timelinesChanged(userIds);
    }
  }

  async ensureIndexes(): Promise<void> {}

  /**
   * The followee's posts that fall inside the cached stretch must join it, or the stretch would
   * have holes; older ones are read through the fallback. So this takes every such post the
   * cache can hold, which may be more than FOLLOW_BACKFILL.
   */
  async followed(followerId: string, followeeId: string): Promise<void> {
    const cache = await this.timelines.findOne({ _id: followerId });
    const oldest = cache?._c[0];
    if (!cache || !oldest) return;
    const present = new Set(cache._c.map((entry) => entry._id.toHexString()));
    const recent = await this.recentPostsOf(followeeId, this.options.cacheSize);
    const inStretch = recent.filter(
      (post) => compareNewestFirst(post, positionOf(oldest)) <= 0 && !present.has(post.id.toHexString()),
    );
    await this.deliverTo([followerId], inStretch);
  }

  /** Deliveries skipped this reader while away: the cache is stale, so it goes and the read rebuilds it. */
  protected ownedBy(userId: string): Filter<CacheDocument> {
    return { _id: userId } as Filter<CacheDocument>;
  }

  async readerReturned(userId: string): Promise<void> {
    await this.writing([userId], () => this.timelines.deleteOne({ _id: userId }));
  }

  async unfollowed(followerId: string, followeeId: string): Promise<void> {
    await this.writing([followerId], () => this.timelines.updateOne({ _id: followerId }, { $pull: { _c: { _a: followeeId } } }));
  }

  async timeline(userId: string, request: PageRequest, authorIds: readonly string[]): Promise<Page<TimelineEntry>> {
    const fanoutOnRead: FanoutReader = (page) => this.content.pageByAuthors(authorIds, page);
    // A first page needs only the newest `limit + 1` entries: the rest of the cache would be
    // decoded for nothing on the busiest read. When the cache holds no more than that, the slice
    // is the whole cache, so the edge and refill logic below sees the same document either way.
    const newest = request.direction === 'older' && request.from === null ? request.limit + 1 : null;
    const stored = await this.held.get(
      userId,
      () => this.cacheReads.load({ userId, newest }).then((cache) => cache && holding(cache, newest)),
      (held) => held.whole || (newest !== null && held.entries.length >= newest),
    );
    const { cache, entries: cached } = stored ?? holding(await this.build(userId, fanoutOnRead, authorIds), null);
    const oldest = cached[0];

    if (request.direction === 'newer') {
      // The cache answers only when the whole stretch from the boundary onwards is inside it.
      const inside = oldest && request.from !== null && compareNewestFirst(request.from, oldest) <= 0;
      return inside ? pageFromNearest(nearestBeyond(cached, request), request) : fanoutOnRead(request);
    }

    const fromCache = nearestBeyond(cached, request);
    if (fromCache.length > request.limit) return pageFromNearest(fromCache, request);
    // Continue below the cache, from its oldest entry or from the cursor if that is older still.
    const continuesCache = !request.from || (oldest !== undefined && compareNewestFirst(request.from, oldest) <= 0);
    // Here the cache held the whole stretch from the cursor (a first page holds fewer than limit + 1
    // entries, so its slice is the whole cache and `oldest` is the cache's oldest entry).
    if (continuesCache && cache._e !== undefined && cache._e === bottomMark(cache._c[0]?._id, authorIds)) {
      return { items: fromCache, hasMore: false };
    }
    const below = continuesCache ? (oldest ?? null) : request.from;
    const rest = await fanoutOnRead({ direction: 'older', from: below, limit: request.limit - fromCache.length });
    if (continuesCache) await this.refill(userId, cache, rest, authorIds);
    return { items: [...fromCache, ...rest.items], hasMore: rest.hasMore };
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
      this.cachesOf(newest, { projection: { _c: { $slice: -largest }, _e: 1 } }),
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

  /**
   * Unfollows and deletes shrink a cache. Entries read just below it are the stretch's
   * continuation, so they go back in, and the next read is served from the cache again. When the
   * continuation was the end of the timeline and all of it went in, the cache records that nothing
   * is below it, provided its oldest entry is still the one this read saw (a delivery meanwhile
   * may have trimmed it).
   */
  private async refill(userId: string, cache: CacheDocument, continuation: Page<PostRecord>, authorIds: readonly string[]): Promise<void> {
    const room = this.options.cacheSize - cache._c.length;
    const pushed = pushedOnly(continuation.items);
    const added = pushed.slice(0, Math.max(room, 0));
    if (added.length > 0) await this.deliverTo([userId], added);
    if (continuation.hasMore || added.length < pushed.length) return;
    const oldestId = added.at(-1)?.id ?? cache._c[0]?._id;
    const stillOldest: Filter<CacheDocument> = oldestId ? { _id: userId, '_c.0._id': oldestId } : { _id: userId, _c: { $size: 0 } };
    await this.timelines.updateOne(stillOldest, { $set: { _e: bottomMark(oldestId, authorIds) } });
    // Not announced: a copy without the mark only makes that instance look below once more.
    this.held.invalidate([userId]);
  }

  /**
   * First read: the newest entries by fanout on read become the cache. Posts delivered while it
   * was being built found no document to update, so they are fetched again and added.
   */
  private async build(userId: string, fanoutOnRead: FanoutReader, authorIds: readonly string[]): Promise<CacheDocument> {
    const snapshot = await fanoutOnRead({ direction: 'older', from: null, limit: this.options.cacheSize });
    const cache: CacheDocument = {
      _id: userId,
      _c: pushedOnly(snapshot.items).map((post) => toEntryDocument(post, this.options.content)).reverse(),
    };
    if (!snapshot.hasMore) cache._e = bottomMark(cache._c[0]?._id, authorIds);
    try {
      await this.timelines.insertOne(cache);
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
      return (await this.timelines.findOne({ _id: userId })) ?? cache;
    }
    const newest = snapshot.items[0];
    if (newest) {
      const missed = await fanoutOnRead({ direction: 'newer', from: newest, limit: this.options.cacheSize });
      if (missed.items.length > 0) {
        await this.deliverTo([userId], pushedOnly(missed.items));
        return (await this.timelines.findOne({ _id: userId })) ?? cache;
      }
    }
    return cache;
  }

  async removeFrom(recipients: readonly string[], post: PostPosition): Promise<void> {
    await this.writing(recipients, () => this.timelines.updateMany({ _id: { $in: [...recipients] } }, { $pull: { _c: { _id: post.id } } }));
  }

  /**
   * The reference's capped `$push` without upsert, plus `$sort`: concurrent deliveries can arrive
   * out of order, and sorting keeps `$slice` trimming the oldest. The `$ne` guard makes a second
   * delivery of an entry (a replayed sub-task, a backfill or refill that came first) a no-op; the
   * cache is one document, so that guard is atomic.
   */
  async deliverTo(recipients: readonly string[], posts: readonly PostRecord[]): Promise<void> {
    if (posts.length === 0 || recipients.length === 0) return;
    await this.writing(recipients, () => this.timelines.bulkWrite(
      recipients.flatMap((userId) =>
        posts.map((post) => ({
          updateOne: {
            filter: { _id: userId, '_c._id': { $ne: post.id } },
            update: {
              $push: {
                _c: {
                  $each: [toEntryDocument(post, this.options.content)],
                  $sort: { _d: 1, _id: 1 },
                  $slice: -this.options.cacheSize,
                },
              },
            },
          },
        })),
      ),
      { ordered: false },
    ));
  }
}

/**
 * A cache as this process holds it: the document as read, its entries ready for pages, and
 * whether it is the whole cache or only its newest entries (a first page's `$slice`).
 */
interface HeldCache {
  cache: CacheDocument;
  entries: TimelineEntry[];
  whole: boolean;
}

/** A slice shorter than was asked for is the whole cache. */
function holding(cache: CacheDocument, newest: number | null): HeldCache {
  return { cache, entries: cache._c.map(fromEntryDocument), whole: newest === null || cache._c.length < newest };
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

type FanoutReader = (request: PageRequest) => Promise<Page<PostRecord>>;

/** Pulled posts stay out of the cache, as out of every timeline: reads merge them from `content`. */
const pushedOnly = (posts: readonly PostRecord[]) => posts.filter((post) => !post.pulled);

const positionOf = (entry: EntryDocument): PostPosition => ({ createdAt: entry._d, id: entry._id });
