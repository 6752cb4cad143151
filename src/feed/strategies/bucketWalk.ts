import type { Page, PageRequest } from '../../content/position.js';
import { fromEntryDocument, type EntryDocument } from '../../records/posts.js';
import { nearestBeyond, pageFromNearest } from '../entries.js';
import type { TimelineEntry } from '../timelineEntry.js';

interface BucketFetcher<B> {
  /**
   * Up to `limit` buckets in walking order (nearest to the request's boundary first), starting
   * after `after` (exclusive), or at the boundary when `after` is null.
   */
  fetch(after: B | null, limit: number): Promise<B[]>;
}

/**
 * How near the boundary unread buckets can come. Where buckets partition time, that follows from
 * the last bucket read (`reachAfter`); where they may overlap, from one more bucket fetched ahead:
 * `reach` is the nearest time an entry in that bucket or any later one can have.
 */
export type BucketSource<B> = BucketFetcher<B> &
  ({ reachAfter(lastRead: B): Date } | { reach(lookAhead: B): Date });

/**
 * Reads a timeline kept in bucket documents, `readBatch` buckets per round trip, until the page
 * is certain. Where buckets may overlap in time (sized buckets after a backfill or concurrent
 * deliveries), each round trip also fetches one bucket more than it consumes: its `reach` says how
 * near the unread buckets can come, so reading stops as soon as the page cannot change.
 */
export async function walkBuckets<B extends { _c: EntryDocument[] }>(
  source: BucketSource<B>,
  request: PageRequest,
  readBatch: number,
): Promise<Page<TimelineEntry>> {
  const gathered: TimelineEntry[] = [];
  const lookAhead = 'reachAfter' in source ? 0 : 1;
  let after: B | null = null;
  for (;;) {
    const buckets = await source.fetch(after, readBatch + lookAhead);
    const consumed = buckets.slice(0, readBatch);
    for (const bucket of consumed) gathered.push(...bucket._c.map(fromEntryDocument));
    const nearest = nearestBeyond(gathered, request);
    const last = consumed.at(-1);
    if (buckets.length < readBatch + lookAhead || !last) return pageFromNearest(nearest, request);

    const unreadReach = 'reachAfter' in source ? source.reachAfter(last) : source.reach(buckets[readBatch]!);
    const edge = nearest[request.limit];
    if (edge && isCloserThan(edge.createdAt, unreadReach, request)) return pageFromNearest(nearest, request);
    after = last;
  }
}

/** Whether `time` is strictly nearer the boundary than `reach`, so nothing unread can precede it. */
function isCloserThan(time: Date, reach: Date, request: PageRequest): boolean {
  return request.direction === 'older' ? time.getTime() > reach.getTime() : time.getTime() < reach.getTime();
}
