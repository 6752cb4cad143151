import { ObjectId } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../bench/generate.js';
import { compareNewestFirst, isBeyond, type Page, type PageDirection, type PageRequest, type PostPosition } from '../../src/content/position.js';
import { mergeFiltered, type EntrySource } from '../../src/feed/pageMerge.js';
import type { TimelineEntry } from '../../src/feed/timelineEntry.js';
import { newBody } from '../../src/records/posts.js';

let made = 0;
const entry = (time: number, authorId: string): TimelineEntry => ({
  id: ObjectId.createFromHexString((made++).toString(16).padStart(24, '0')),
  authorId,
  createdAt: new Date(Date.UTC(2026, 10, 25) + time),
  body: newBody(`${authorId} at ${time}`),
  replyTo: null,
  repostOf: null,
});

/** A source as a timeline, an outbox or the inbox is one: its entries beyond the boundary, nearest first, newest first in the page. */
const sourceOf =
  (entries: readonly TimelineEntry[]): EntrySource =>
  async (request: PageRequest) => {
    const beyond = entries
      .filter((item) => isBeyond(item, request.direction, request.from))
      .sort((a, b) => (request.direction === 'older' ? compareNewestFirst(a, b) : compareNewestFirst(b, a)));
    const items = beyond.slice(0, request.limit);
    return { items: request.direction === 'older' ? items : items.reverse(), hasMore: beyond.length > request.limit };
  };

/**
 * A timeline page merged from several sources and filtered (mutes, blocks, posts gone), as every
 * reader's home timeline, list and profile is: whatever the filter drops, a page is full while more
 * would pass, lists each post once, skips none, and says exactly whether more lie beyond it.
 */
describe('a page merged from several sources', () => {
  /** Every entry that passes, page after page from one end, each page from the last one's far end. */
  const scroll = async (sources: EntrySource[], keep: (item: TimelineEntry) => boolean, direction: PageDirection, size: number) => {
    const shown: TimelineEntry[][] = [];
    for (let from: PostPosition | null = null; ; ) {
      const page: Page<TimelineEntry> = await mergeFiltered(sources, { direction, from, limit: size }, async (candidates) => candidates.filter(keep));
      shown.push(page.items);
      const far: TimelineEntry | undefined = direction === 'older' ? page.items.at(-1) : page.items[0];
      if (!page.hasMore || !far) return shown;
      from = far;
    }
  };

  it('shows the posts a filter keeps from far down one source, not those of another source beyond them', async () => {
    // A busy source the filter mostly drops, and a sparse one: the page must look further into the
    // busy one before it may use the sparse one's far entries.
    const busy = Array.from({ length: 50 }, (_, i) => entry(100 - 2 * i, i % 10 === 5 ? 'friend' : 'muted'));
    const sparse = [99, 50, 10, 5, 1].map((time) => entry(time, 'other'));
    const page = await mergeFiltered([sourceOf(busy), sourceOf(sparse)], { direction: 'older', from: null, limit: 3 }, async (candidates) =>
      candidates.filter((item) => item.authorId !== 'muted'),
    );
    expect(page.items.map((item) => item.body?.text)).toEqual(['other at 99', 'friend at 90', 'friend at 70']);
    expect(page.hasMore).toBe(true);
  });

  it('pages through random sources and filters both ways, each kept post once, in order, with hasMore exact', async () => {
    const random = seededRandom(34);
    for (let trial = 0; trial < 300; trial++) {
      const sources = Array.from({ length: 1 + Math.floor(random() * 3) }, (_, s) =>
        Array.from({ length: Math.floor(random() * 30) }, () => entry(Math.floor(random() * (5 + random() * 200)), `author${s}${Math.floor(random() * 3)}`)),
      );
      // A post that two sources both hold (a pulled author's post in a stale timeline) shows once.
      if (sources.length > 1 && sources[0]!.length > 0) sources[1]!.push(sources[0]![0]!);
      const keepRate = random();
      const dropped = new Set(sources.flat().filter(() => random() > keepRate).map((item) => item.id.toHexString()));
      const keep = (item: TimelineEntry) => !dropped.has(item.id.toHexString());
      const expected = [...new Map(sources.flat().map((item) => [item.id.toHexString(), item])).values()].filter(keep).sort(compareNewestFirst).map((item) => item.body?.text);
      const size = 1 + Math.floor(random() * 5);
      const asSources = sources.map(sourceOf);

      const back = await scroll(asSources, keep, 'older', size);
      expect(back.flat().map((item) => item.body?.text), `trial ${trial}`).toEqual(expected);
      // Full pages while more remain: only the last page may be short, and only an empty timeline has an empty page.
      expect(back.slice(0, -1).every((page) => page.length === size), `trial ${trial}`).toBe(true);
      const forward = await scroll(asSources, keep, 'newer', size);
      // Refreshing pages come oldest page first, each newest first.
      expect(forward.flatMap((page) => [...page].reverse()).map((item) => item.body?.text).reverse(), `trial ${trial}`).toEqual(expected);
      expect(forward.slice(0, -1).every((page) => page.length === size), `trial ${trial}`).toBe(true);
    }
  });
});
