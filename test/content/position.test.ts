import { ObjectId, type Collection } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newBody } from '../../src/records/posts.js';
import { beyondFilter, compareNewestFirst, decodeCursor, encodeCursor, sortFor, type PageDirection, type PostPosition } from '../../src/content/position.js';
import { connectDatabase, type Database } from '../../src/db/connect.js';
import { nearestBeyond } from '../../src/feed/entries.js';
import type { TimelineEntry } from '../../src/feed/timelineEntry.js';
import { testDatabaseUri } from '../support/testApp.js';

const at = new Date('2026-11-25T10:00:00.000Z');
const entry = (hex: string, text: string, createdAt = at): TimelineEntry => ({
  id: new ObjectId(hex),
  authorId: 'alice',
  createdAt,
  replyTo: null,
  repostOf: null,
  body: newBody(text),
});

describe('the order of posts in every timeline', () => {
  it('orders posts of the same millisecond by id, newest id first, as their hex ids sort', () => {
    const hexes = ['0000000000000000000000ff', 'a00000000000000000000000', '9fffffffffffffffffffffff', '0000000000000000000000f0', 'ff0000000000000000000001'];
    const sorted = hexes.map((hex) => entry(hex, hex)).sort(compareNewestFirst).map((post) => post.id.toHexString());
    expect(sorted).toEqual([...hexes].sort().reverse());
  });

  it('keeps one copy of a post that two sources return, the later source’s, in order around the boundary', () => {
    const older = entry('0000000000000000000000a1', 'older', new Date(at.getTime() - 1000));
    const fromCache = entry('0000000000000000000000b2', 'from the cache');
    const fromContent = entry('0000000000000000000000b2', 'from content');
    const newer = entry('0000000000000000000000c3', 'newer', new Date(at.getTime() + 1000));
    const page = nearestBeyond([newer, fromCache, older, fromContent], { direction: 'older', from: null, limit: 10 });
    expect(page.map((post) => post.body?.text)).toEqual(['newer', 'from content', 'older']);
    const refresh = nearestBeyond([newer, fromCache, older, fromContent], { direction: 'newer', from: older, limit: 10 });
    expect(refresh.map((post) => post.body?.text)).toEqual(['from content', 'newer']);
  });

  it('gives cursors that decode to the position they were made from', () => {
    const post = entry('65a1b2c3d4e5f60718293a4b', 'x');
    const decoded = decodeCursor(encodeCursor(post));
    expect(decoded.createdAt.getTime()).toBe(at.getTime());
    expect(decoded.id.toHexString()).toBe('65a1b2c3d4e5f60718293a4b');
    expect(encodeCursor(post)).toBe(Buffer.from(`${at.getTime()}:65a1b2c3d4e5f60718293a4b`).toString('base64url'));
  });
});

/**
 * The same order as a query: pages read from MongoDB by `beyondFilter` and `sortFor` must list
 * every post once, in the order above, even when many share a millisecond (a burst of posts, a
 * bulk import): scrolling must neither skip nor repeat one at a page boundary.
 */
describe('pages read by query around posts of the same millisecond', () => {
  let database: Database;
  let posts: Collection<{ _id: ObjectId; _d: Date }>;
  const burst = new Date('2026-11-25T10:00:00.000Z');
  // Three posts a millisecond before the burst, seven in it, three after; ids not in time order.
  const stored = [
    ...['0000000000000000000000a1', '0000000000000000000000a2', 'f000000000000000000000a3'].map((hex) => ({ _id: new ObjectId(hex), _d: new Date(burst.getTime() - 1) })),
    ...['0000000000000000000000b1', '9fffffffffffffffffffffff', 'a00000000000000000000000', '0000000000000000000000ff', 'ff0000000000000000000001', '1000000000000000000000b2', '0000000000000000000000f0'].map(
      (hex) => ({ _id: new ObjectId(hex), _d: burst }),
    ),
    ...['0000000000000000000000c1', 'e000000000000000000000c2', '5000000000000000000000c3'].map((hex) => ({ _id: new ObjectId(hex), _d: new Date(burst.getTime() + 1) })),
  ];
  const newestFirst = [...stored].sort((a, b) => compareNewestFirst({ createdAt: a._d, id: a._id }, { createdAt: b._d, id: b._id })).map((doc) => doc._id.toHexString());
  /** Every post, page by page of `size`, from one end to the other, each page starting beyond the last one's far end. */
  const pageThrough = async (direction: PageDirection, size: number): Promise<string[]> => {
    const seen: string[] = [];
    for (let from: PostPosition | null = null; ; ) {
      const page: { _id: ObjectId; _d: Date }[] = await posts.find(beyondFilter(direction, from, '_d', '_id')).sort(sortFor(direction, '_d', '_id')).limit(size).toArray();
      seen.push(...page.map((doc) => doc._id.toHexString()));
      if (page.length < size) return seen;
      const last: { _id: ObjectId; _d: Date } = page.at(-1)!;
      from = { createdAt: last._d, id: last._id };
    }
  };

  beforeAll(async () => {
    database = await connectDatabase(testDatabaseUri());
    posts = database.db.collection('positions');
    await posts.insertMany(stored);
  });
  afterAll(async () => {
    await database?.db.dropDatabase();
    await database?.close();
  });

  it.each([1, 2, 3, 5])('scrolls back through every post once, newest first, %i at a time', async (size) => {
    expect(await pageThrough('older', size)).toEqual(newestFirst);
  });

  it.each([1, 2, 3, 5])('refreshes forward through every post once, oldest first, %i at a time', async (size) => {
    expect(await pageThrough('newer', size)).toEqual([...newestFirst].reverse());
  });
});
