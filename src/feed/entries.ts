import { type AnyBulkWriteOperation, type Collection, type Document } from 'mongodb';
import { compareNewestFirst, isBeyond, type Page, type PageRequest } from '../content/position.js';
import { duplicateKeyFailures } from '../errors.js';
import type { UserGraphService } from '../graph/userGraphService.js';
import type { TimelineEntry } from '../records/posts.js';

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
