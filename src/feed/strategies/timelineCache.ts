import type { Db, Document, Filter } from 'mongodb';
import { ReadThroughCache } from '../../cache/readThrough.js';
import { RecentRemovals } from '../../cache/recentRemovals.js';
import type { TimelineEdits } from '../../changes/events.js';
import type { TimelineCacheOptions } from '../../config.js';
import type { ContentService } from '../../content/contentService.js';
import type { PostRecord } from '../../records/posts.js';
import { compareNewestFirst, type Page, type PageRequest, type PostPosition } from '../../content/position.js';
import { isDuplicateKeyError } from '../../errors.js';
import { fromEntryDocument, toEntryDocument, type EntryDocument } from '../../records/posts.js';
import { nearestBeyond, pageFromNearest } from '../entries.js';
import {
  aboveOldestOrWhole,
  entryOrder,
  fingerprintOf,
  holding,
  isWhole,
  pushedOnly,
  wholeMark,
  type CacheDocument,
  type HeldCache,
} from './cacheDocument.js';
import { CacheReads } from './cacheReads.js';
import { FanoutOnWrite } from './fanoutOnWrite.js';
import type { Announced, Delivery, FeedBackend, TimelinesChanged } from '../feedBackend.js';
import type { TimelineEntry } from '../timelineEntry.js';

export { authorsFingerprint, type CacheDocument } from './cacheDocument.js';

/**
 * Fanout on write into a capped per-user cache (Socialite's FanoutOnWriteToCache). A cache exists
 * only for users who read: it is built from fanout on read at the first read, and deliveries
 * update it without upsert, so users who never read cost nothing. The cache always holds a
 * gap-free newest stretch of the timeline; anything older is read by fanout on read from the
 * cache's oldest entry, so pages and cursors continue across the edge.
 */
export class TimelineCache extends FanoutOnWrite<CacheDocument, TimelineCacheOptions> implements FeedBackend {
  readonly strategy = 'cache' as const;
  readonly rebuild = 'lazy' as const;

  private readonly cacheReads: CacheReads;

  /**
   * The caches this process read, held in front of MongoDB (the in-process L1 tier of a multi-tier
   * feed cache, as Weibo's feed architecture layers it), so a warm page makes no round trip.
   * Every write to a cache below changes it here at once and announces it to every other instance
   * (`timelinesChanged`, a `changed` live event) once it is stored; a fanout sub-task whose process
   * dies in between is retried by the queue, which announces again. A delivery's announcement
   * carries its posts, and held copies take them in place (`withDelivered`) instead of being read
   * again; every other write makes them go. Entries are trusted for 10 s at most: the backstop for
   * a request that died between its write and the announcement, or an announcement lost in a
   * database outage.
   */
  private readonly held = new ReadThroughCache<string, HeldCache>('timeline caches', {
    max: 100_000,
    ttlMs: heldCacheTtlMs,
    // Entries of embedded posts are the largest: at most about 100 MB at the longest texts.
    sized: { maxSize: 200_000, sizeOf: (held) => held.entries.length + 1 },
  });
  /**
   * Posts taken out of timelines lately: a delivery of one announced after its removal (the two
   * announcements raced) makes the copies go instead of bringing the post back.
   */
  private readonly removedLately = new RecentRemovals(heldCacheTtlMs);

  constructor(
    db: Db,
    content: ContentService,
    options: TimelineCacheOptions,
    private readonly timelinesChanged: TimelinesChanged,
  ) {
    super(db, 'timeline_cache', content, options);
    this.cacheReads = new CacheReads(this.timelines);
  }

  override forgetHeld(userIds: readonly string[], edits?: TimelineEdits): void {
    for (const postId of edits?.removed ?? []) this.removedLately.remember(postId);
    const delivered = edits?.delivered ?? [];
    const inPlace = new Set<string>();
    for (const { recipients, posts } of delivered) {
      if (posts.some((post) => this.removedLately.includes(post))) continue;
      const entries = posts.map((post) => toEntryDocument(post, this.options.content));
      for (const userId of recipients) {
        this.held.update(userId, (held) => withDelivered(held, entries, this.options.cacheSize));
        inPlace.add(userId);
      }
    }
    this.held.invalidate(inPlace.size === 0 ? userIds : userIds.filter((userId) => !inPlace.has(userId)));
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
   * Every write to caches goes through here: what this process holds of them changes at once (in
   * place when `edits` say how and the write went through), and every instance is told once the
   * write is over, failed ones included (an unordered bulk write may have done part of its work).
   */
  private async writing(
    userIds: readonly string[],
    write: () => Promise<unknown>,
    { announced }: Announced = { announced: false },
    edits?: TimelineEdits,
  ): Promise<void> {
    let done = false;
    try {
      await write();
      done = true;
    } finally {
      // A failed write may have done part of its work: copies go. A removal is remembered either way.
      const known = done ? edits : edits?.removed && { removed: edits.removed };
      this.forgetHeld(userIds, known);
      if (!announced) await this.timelinesChanged(userIds, known);
    }
  }

  async ensureIndexes(): Promise<void> {}

  /**
   * The cache no longer vouches for whom the reader follows: its fingerprint goes, and the next read
   * rebuilds it from `content`, the followee's posts included. Merging them in here instead would
   * have to agree with every delivery, refill and rebuild in flight about where the stretch ends; a
   * rebuild agrees with all. The fingerprint alone would not do: following someone again brings
   * back a fingerprint that a cache built before, or by a read that had not yet learnt of the
   * unfollow, still carries, without the posts made in between.
   */
  /**
   * Nothing to write, for a follow or an unfollow (no `removeUnfollowed`): the reader's following
   * version changed, so the fingerprint no longer matches and the next read rebuilds the cache;
   * until then pages leave an unfollowed author's entries out. A follow back comes with another
   * following version, so no fingerprint seen before can vouch for the cache again.
   */
  async followed(): Promise<void> {}

  /** Deliveries skipped this reader while away: the cache is stale, so it goes and the read rebuilds it. */
  protected ownedBy(userId: string): Filter<CacheDocument> {
    return { _id: userId } as Filter<CacheDocument>;
  }

  async readerReturned(userId: string): Promise<void> {
    await this.writing([userId], () => this.timelines.deleteOne({ _id: userId }));
  }

  async timeline(userId: string, request: PageRequest, authorIds: readonly string[], followingVersion = 0): Promise<Page<TimelineEntry>> {
    const fanoutOnRead: FanoutReader = (page) => this.content.pageByAuthors(authorIds, page);
    const authors = fingerprintOf(authorIds, followingVersion);
    // A first page needs only the newest `limit + 1` entries: the rest of the cache would be
    // decoded for nothing on the busiest read. When the cache holds no more than that, the slice
    // is the whole cache, so the edge and refill logic below sees the same document either way.
    const newest = request.direction === 'older' && request.from === null ? request.limit + 1 : null;
    // A cache built for other authors, or none, is rebuilt inside the load, so the next page is
    // answered by the copy this one built (kept unless the cache changed meanwhile).
    const { cache, entries: cached } = (await this.held.get(
      userId,
      async () => {
        const found = await this.cacheReads.load(userId, newest);
        return found?._h === authors ? holding(found, newest) : holding(await this.build(userId, fanoutOnRead, authors, found), null);
      },
      (held) => held.cache._h === authors && (held.whole || (newest !== null && held.entries.length >= newest)),
    ))!;
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
    if (continuesCache && isWhole(cache)) return { items: fromCache, hasMore: false };
    const below = continuesCache ? (oldest ?? null) : request.from;
    const rest = await fanoutOnRead({ direction: 'older', from: below, limit: request.limit - fromCache.length });
    if (continuesCache) await this.refill(cache, rest);
    return { items: [...fromCache, ...rest.items], hasMore: rest.hasMore };
  }

  /**
   * Deletes shrink a cache. Entries read just below it are the stretch's continuation, so they go
   * back in, and the next read is served from the cache again; when the continuation was the end
   * of the timeline and all of it went in, the cache records that nothing is below it. One write,
   * made only while the cache is the one this read continued (same fingerprint, same oldest entry):
   * otherwise a follow, a rebuild or a trim came between, and the continuation may not be this
   * cache's. It must also have room for all of it, as the write has no `$slice`.
   */
  private async refill(cache: CacheDocument, continuation: Page<PostRecord>): Promise<void> {
    const pushed = pushedOnly(continuation.items);
    const added = pushed.slice(0, Math.max(this.options.cacheSize - cache._c.length, 0));
    const reachedEnd = !continuation.hasMore && added.length === pushed.length;
    if (added.length === 0 && !reachedEnd) return;
    const oldestId = cache._c[0]?._id;
    const unchanged: Filter<CacheDocument> = {
      _id: cache._id,
      _h: cache._h,
      ...(oldestId ? { '_c.0._id': oldestId } : { _c: { $size: 0 } }),
      [`_c.${this.options.cacheSize - added.length}`]: { $exists: false },
    };
    const entries = added.map((post) => toEntryDocument(post, this.options.content));
    const write = () =>
      this.timelines.updateOne(unchanged, {
        ...(added.length > 0 ? { $push: { _c: { $each: entries, $sort: entryOrder } } } : {}),
        ...(reachedEnd ? { $set: { _e: wholeMark(added.at(-1)?.id ?? oldestId) } } : {}),
      });
    if (added.length > 0) return this.writing([cache._id], write);
    // Only the mark: an instance holding a copy without it looks below once more, so no announcement.
    await write();
    this.held.invalidate([cache._id]);
  }

  /**
   * A first read, or a read whose authors the cache was not built for: the newest entries by
   * fanout on read become the cache. Posts stored after the snapshot whose delivery found no cache
   * (or the one replaced) are fetched again and added. When another read stored its cache first,
   * this snapshot answers this read and is not stored.
   */
  private async build(userId: string, fanoutOnRead: FanoutReader, authors: string, replaced: CacheDocument | null): Promise<CacheDocument> {
    const limit = this.options.cacheSize;
    const snapshot = await fanoutOnRead({ direction: 'older', from: null, limit });
    const cache: CacheDocument = {
      _id: userId,
      _c: pushedOnly(snapshot.items).map((post) => toEntryDocument(post, this.options.content)).reverse(),
      _h: authors,
    };
    if (!snapshot.hasMore) cache._e = wholeMark(cache._c[0]?._id);
    const stored = replaced ? await this.replace(replaced, cache) : await this.insert(cache);
    if (!stored) {
      // Another read stored its cache first: this snapshot answers this read, and is not held.
      this.held.invalidate([userId]);
      return cache;
    }
    const newest = snapshot.items[0];
    const missed = await fanoutOnRead(newest ? { direction: 'newer', from: newest, limit } : { direction: 'older', from: null, limit });
    if (missed.items.length === 0) return cache;
    await this.deliverTo([userId], pushedOnly(missed.items));
    return (await this.timelines.findOne({ _id: userId })) ?? cache;
  }

  private async insert(cache: CacheDocument): Promise<boolean> {
    try {
      await this.timelines.insertOne(cache);
      return true;
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
      return false;
    }
  }

  /**
   * Replaces the cache this read found, unless another read replaced it first. The read's load
   * holds what it stored in place of the copy held before (see timeline).
   */
  private async replace(found: CacheDocument, cache: CacheDocument): Promise<boolean> {
    const { matchedCount } = await this.timelines.replaceOne({ _id: cache._id, _h: found._h ?? { $exists: false } }, cache);
    return matchedCount === 1;
  }

  protected holders(recipients: readonly string[], post: PostRecord): Filter<CacheDocument> {
    return { _id: { $in: [...recipients] }, '_c._id': post.id } as Filter<CacheDocument>;
  }

  /** Held copies go and every instance is told, as for every write to caches. */
  protected override async rewriteWhere(filter: Filter<CacheDocument>, update: Document, arrayFilters: Document[], recipients: readonly string[]): Promise<void> {
    await this.writing(recipients, () => this.timelines.updateMany(filter, update, { arrayFilters }));
  }

  /**
   * A mark of a whole cache stays true through deletions, except in a full cache: one trimmed since
   * it was marked still carries the mark, harmless while full (a delivery older than its oldest
   * entry is trimmed at once) but not once a deletion makes room. So a full cache loses its mark
   * with the entry; the others keep it. One round trip, in that order.
   */
  async removeFrom(recipients: readonly string[], post: PostPosition, options?: Announced): Promise<void> {
    const holders = { _id: { $in: [...recipients] }, '_c._id': post.id };
    const pull = { $pull: { _c: { _id: post.id } } };
    await this.writing(
      recipients,
      () =>
        this.timelines.bulkWrite([
          { updateMany: { filter: { ...holders, [`_c.${this.options.cacheSize - 1}`]: { $exists: true } }, update: { ...pull, $unset: { _e: '' } } } },
          { updateMany: { filter: holders, update: pull } },
        ]),
      options,
      { removed: [post.id] },
    );
  }

  /**
   * The reference's capped `$push` without upsert, plus `$sort`: concurrent deliveries can arrive
   * out of order, and sorting keeps `$slice` trimming the oldest. The `$ne` guard makes a second
   * delivery of an entry (a replayed sub-task, a rebuild or refill that came first) a no-op; the
   * cache is one document, so that guard is atomic. A post older than the oldest entry lands only in
   * a cache marked whole: elsewhere the stretch below the oldest entry was never merged, and reads
   * find the post there through fanout on read.
   */
  async deliverEach(deliveries: readonly Delivery[]): Promise<void> {
    const operations = deliveries.flatMap(({ recipients, posts }) =>
      recipients.flatMap((userId) =>
        posts.map((post) => ({
          updateOne: {
            filter: { _id: userId, '_c._id': { $ne: post.id }, $or: aboveOldestOrWhole(post) },
            update: {
              $push: {
                _c: {
                  $each: [toEntryDocument(post, this.options.content)],
                  $sort: entryOrder,
                  $slice: -this.options.cacheSize,
                },
              },
            },
          },
        })),
      ),
    );
    if (operations.length === 0) return;
    const recipients = [...new Set(deliveries.flatMap((delivery) => delivery.recipients))];
    await this.writing(recipients, () => this.timelines.bulkWrite(operations, { ordered: false }), undefined, { delivered: deliveries });
  }
}

/**
 * A held copy with delivered entries in it, as the capped push leaves the document: an entry
 * already there or below the oldest (unless the whole timeline is held and marked so) changes
 * nothing; otherwise it goes in its place and the oldest beyond the cap go. A copy of only the
 * newest entries keeps as many; an entry below them is not among them, wherever the document put it.
 */
export function withDelivered(held: HeldCache, delivered: readonly EntryDocument[], cacheSize: number): HeldCache {
  let entries = held.cache._c;
  for (const entry of delivered) {
    if (entries.some((present) => present._id.equals(entry._id))) continue;
    const oldest = entries[0];
    const above = oldest !== undefined && compareNewestFirst(entryPosition(entry), entryPosition(oldest)) < 0;
    if (!above && !(held.whole && held.cache._e !== undefined)) continue;
    const kept = held.whole ? cacheSize : entries.length;
    entries = [...entries, entry].sort((a, b) => compareNewestFirst(entryPosition(b), entryPosition(a))).slice(-kept);
  }
  if (entries === held.cache._c) return held;
  return { cache: { ...held.cache, _c: entries }, entries: entries.map(fromEntryDocument), whole: held.whole };
}

const entryPosition = (entry: EntryDocument): PostPosition => ({ createdAt: entry._d, id: entry._id });

/** How long a held cache is trusted without an announcement. */
const heldCacheTtlMs = 10_000;

type FanoutReader = (request: PageRequest) => Promise<Page<PostRecord>>;
