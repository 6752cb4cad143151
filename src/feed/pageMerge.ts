import { isBeyond, type Page, type PageRequest } from '../content/position.js';
import { nearestBeyond } from './entries.js';
import type { TimelineEntry } from './timelineEntry.js';

/** A paged list of timeline entries: a materialized timeline, the pulled authors' outboxes, `content`. */
export type EntrySource = (request: PageRequest) => Promise<Page<TimelineEntry>>;

/**
 * Decides which candidates a page shows, in order; may drop some and replace linked entries by
 * hydrated ones. Gets the candidates nearest the boundary first.
 */
export type EntryFilter<T extends TimelineEntry> = (candidates: TimelineEntry[]) => Promise<T[]>;

/** Largest number of entries asked of one source in one round, however much was filtered. */
const maxFetch = 1000;

/**
 * One page merged from several sources and filtered, never short while more entries would pass.
 *
 * Each round asks every source for the entries nearest the boundary. Up to the nearest of the
 * "last entry returned" of every source that has more (the horizon), the merged list is complete;
 * the filter runs over that stretch, and the next round continues from the horizon with a larger
 * batch. The page ends as soon as one entry more than the page size has passed (so `hasMore` is
 * exact), or when every source is exhausted. A duplicate across sources counts once.
 */
export async function mergeFiltered<T extends TimelineEntry>(
  sources: readonly EntrySource[],
  request: PageRequest,
  filter: EntryFilter<T>,
): Promise<Page<T>> {
  const kept: T[] = [];
  const seen = new Set<string>();
  let from = request.from;
  let fetch = request.limit + 1;
  for (;;) {
    const round: PageRequest = { direction: request.direction, from, limit: fetch };
    const pages = await Promise.all(sources.map((source) => source(round)));
    let horizon: TimelineEntry | null = null;
    for (const page of pages) {
      if (!page.hasMore) continue;
      const farthest = request.direction === 'older' ? page.items.at(-1) : page.items[0];
      if (farthest && (!horizon || isBeyond(horizon, request.direction, farthest))) horizon = farthest;
    }
    const candidates = nearestBeyond(
      pages.flatMap((page) => page.items),
      round,
    ).filter((entry) => (seen.size === 0 || !seen.has(entry.id.toHexString())) && (!horizon || !isBeyond(entry, request.direction, horizon)));
    kept.push(...(await filter(candidates)));

    if (kept.length > request.limit || !horizon) {
      const items = kept.slice(0, request.limit);
      return { items: request.direction === 'older' ? items : items.reverse(), hasMore: kept.length > request.limit };
    }
    // Only a further round asks what was seen, and most pages end in their first.
    for (const entry of candidates) seen.add(entry.id.toHexString());
    from = horizon;
    fetch = Math.min(fetch * 2, maxFetch);
  }
}
