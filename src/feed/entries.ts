import { type AnyBulkWriteOperation, type Collection, type Document, type ObjectId } from 'mongodb';
import type { TimelineContentMode } from '../config.js';
import { toContentDocument, toRef, toRepostOf, type PostRecord, type PostRefDocument, type RepostOfDocument } from '../records/posts.js';
import { compareNewestFirst, isBeyond, type Page, type PageRequest } from '../content/position.js';
import { duplicateKeyFailures } from '../errors.js';
import type { UserGraphService } from '../graph/userGraphService.js';
import type { TimelineEntry } from './timelineEntry.js';

/**
 * One post inside a materialized timeline: the reference layout (`_id` post id, `_a` author,
 * `_m` message, the last only when embedding) plus `_d`, the creation time, because pages are cut
 * and cursors made by (time, id) without touching `content`.
 */
export interface EntryDocument {
  _id: ObjectId;
  _a: string;
  _d: Date;
  _m?: string;
  /** As in `content`: the post replied to, the post reposted. Small, so both modes keep them. */
  _r?: PostRefDocument;
  _o?: RepostOfDocument;
}

export function toEntryDocument(post: PostRecord, mode: TimelineContentMode): EntryDocument {
  const { _id, _a, _d, _m, _r, _o } = toContentDocument(post);
  const entry: EntryDocument = { _id, _a, _d };
  if (mode === 'embed') entry._m = _m;
  if (_r) entry._r = _r;
  if (_o) entry._o = _o;
  return entry;
}

export function fromEntryDocument(entry: EntryDocument): TimelineEntry {
  return {
    id: entry._id,
    authorId: entry._a,
    createdAt: entry._d,
    text: entry._m ?? null,
    replyTo: toRef(entry._r),
    repostOf: toRepostOf(entry._o),
  };
}

/** The author's own timeline, then every follower, in batches of at most `batchSize`. */
export async function* recipientBatches(graph: Pick<UserGraphService, 'followerIdBatches'>, authorId: string, batchSize: number): AsyncGenerator<string[]> {
  let batch = [authorId];
  for await (const followers of graph.followerIdBatches(authorId, batchSize)) {
    for (const follower of followers) {
      if (batch.length === batchSize) {
        yield batch;
        batch = [];
      }
      batch.push(follower);
    }
  }
  yield batch;
}

/**
 * Unordered bulk write of idempotent deliveries, where a duplicate-key failure means "already
 * delivered" (the `$ne` guard missed, so the upsert tried an insert). It can also mean that two
 * deliveries raced to create the same document and this one lost the insert: such operations are
 * sent once more, when the document exists, and only a second duplicate-key failure counts as there.
 */
export async function bulkWriteIgnoringDuplicates<T extends Document>(
  collection: Collection<T>,
  operations: AnyBulkWriteOperation<T>[],
): Promise<void> {
  let pending = operations;
  // Nothing to write is not an error (a bulk write of nothing is, to the driver).
  for (let attempt = 0; attempt < 2 && pending.length > 0; attempt++) {
    try {
      await collection.bulkWrite(pending, { ordered: false });
      return;
    } catch (error) {
      const failures = duplicateKeyFailures(error);
      if (!failures) throw error;
      pending = failures.map((failure) => pending[(failure as { index: number }).index]!);
    }
  }
}

/**
 * Entries beyond the request's boundary, without duplicates, nearest to the boundary first. Of
 * two copies of an entry (from two sources) the later one in `entries` is kept. Copies sort next
 * to each other, so they are found without keying every entry by its id's hex string.
 */
export function nearestBeyond(entries: Iterable<TimelineEntry>, request: PageRequest): TimelineEntry[] {
  const beyond: TimelineEntry[] = [];
  for (const entry of entries) {
    if (isBeyond(entry, request.direction, request.from)) beyond.push(entry);
  }
  // Stable: copies stay in their order in `entries`.
  beyond.sort((a, b) => (request.direction === 'older' ? compareNewestFirst(a, b) : compareNewestFirst(b, a)));
  const unique: TimelineEntry[] = [];
  for (const entry of beyond) {
    const previous = unique.at(-1);
    if (previous && previous.id.equals(entry.id)) unique[unique.length - 1] = entry;
    else unique.push(entry);
  }
  return unique;
}

/** A page from entries already ordered nearest first; one more than the limit means "more exist". */
export function pageFromNearest(nearest: TimelineEntry[], request: PageRequest): Page<TimelineEntry> {
  const items = nearest.slice(0, request.limit);
  return {
    items: request.direction === 'older' ? items : items.reverse(),
    hasMore: nearest.length > request.limit,
  };
}
