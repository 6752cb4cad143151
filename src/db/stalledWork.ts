import type { Collection, Document, Filter, WithId } from 'mongodb';
import { sleep } from '../sleep.js';
import { sweepQuery } from './connect.js';

/**
 * The pieces every "record the intent, take it over, sweep what stalled" store shares: follow
 * pairs, likes and reposts in transition, uncounted replies, tombstones' uncount intents and
 * account deletions. Each records its intent in the document it changes, with a time; a request
 * that finds the work held by another waits with `Backoff`; and a sweep finds intents older than
 * any live request would leave them (`findStalled`) and finishes them one by one (`finishEach`).
 * How each store claims its work (a lease with an owner, a compare-and-set on the time) stays
 * with the store, since that is where they differ.
 */

/** The time before which a recorded intent has lost its request. */
export function stalledSince(stalledAfterMs: number): Date {
  return new Date(Date.now() - stalledAfterMs);
}

/** Up to `limit` stalled records, read with the sweep's query comment so logs tell them apart. */
export function findStalled<T extends Document>(
  collection: Collection<T>,
  filter: Filter<T>,
  options: { limit: number; projection?: Document },
): Promise<WithId<T>[]> {
  const projection = options.projection ? { projection: options.projection } : {};
  return collection.find(filter, { ...projection, ...sweepQuery }).limit(options.limit).toArray();
}

/**
 * Finishes stalled records one after another; returns how many it finished. `finish` answers
 * false when another caller took the record first, which does not count.
 */
export async function finishEach<T>(stalled: readonly T[], finish: (record: T) => Promise<unknown>): Promise<number> {
  let finished = 0;
  for (const record of stalled) if ((await finish(record)) !== false) finished++;
  return finished;
}

/** Waiting for another holder to finish: 2 ms, doubling up to 50 ms between looks. */
export class Backoff {
  private ms = 2;

  async wait(): Promise<void> {
    await sleep(this.ms);
    this.ms = Math.min(this.ms * 2, 50);
  }
}
