import { createHash } from 'node:crypto';
import type { Filter, ObjectId } from 'mongodb';
import type { PostPosition } from '../../content/position.js';
import type { PostRecord } from '../../records/posts.js';
import { fromEntryDocument, type EntryDocument } from '../../records/posts.js';
import type { TimelineEntry } from '../timelineEntry.js';

/** The newest entries of one user's timeline, oldest first, at most `TIMELINE_CACHE_SIZE`. */
export interface CacheDocument {
  _id: string;
  _c: EntryDocument[];
  /**
   * Whom the cache is complete for: the fingerprint of the reader and everyone they followed when
   * it was built, and of how often whom they follow had changed (`authorsFingerprint`); a reader
   * who now follows others, or the same ones again, gets it rebuilt. Caches written before
   * fingerprints have none, so each is rebuilt once.
   */
  _h?: string;
  /** Nothing is below the oldest entry: that entry's id ('' for an empty cache); see `isWhole`. */
  _e?: string;
}

/**
 * The stretch a cache vouches for runs from its oldest entry up: every pushed post of the
 * fingerprinted authors in that stretch is in it, or still on its way from the queue. Three changes
 * could break that, and each is shaped so it cannot:
 * - a follow or an unfollow changes the authors and the reader's following version, and a read
 *   whose fingerprint does not match rebuilds the cache from `content` (a read that learnt the
 *   authors before the follow may build after it; the next read with the new authors rebuilds
 *   again). The version tells an unfollow and a follow back from no change at all: the posts
 *   delivered in between are missing from the cache, so it must not vouch for the same authors again;
 * - a delivery of a post older than the oldest entry would stretch the claim over posts never
 *   merged: deliveries land only above the oldest entry, unless the cache holds the whole timeline;
 * - a refill below the oldest entry is one conditional write, made only if the oldest entry and the
 *   fingerprint are still those the refill read under.
 */
const fingerprintVersion = 'v3';

/** Order-free: the same authors, at the same following version, give the same fingerprint in any order. */
export function authorsFingerprint(authorIds: readonly string[], followingVersion = 0): string {
  const authors = createHash('sha1');
  for (const authorId of [...authorIds].sort()) authors.update(authorId).update('\0');
  return `${fingerprintVersion} ${authors.digest('base64')} ${followingVersion}`;
}

/**
 * Whether a read found nothing below the oldest entry while that entry was oldest. A trim by a
 * capped push or a deletion of that entry changes the oldest, and the mark no longer holds.
 */
export function isWhole(cache: CacheDocument): boolean {
  return cache._e !== undefined && cache._e === wholeMark(cache._c[0]?._id);
}

export const wholeMark = (oldestId: ObjectId | undefined) => oldestId?.toHexString() ?? '';

const fingerprints = new WeakMap<readonly string[], { version: number; fingerprint: string }>();

/** One fingerprint per list of authors and version: the read path passes the same list while it holds it. */
export function fingerprintOf(authorIds: readonly string[], followingVersion = 0): string {
  let known = fingerprints.get(authorIds);
  if (known?.version !== followingVersion) {
    known = { version: followingVersion, fingerprint: authorsFingerprint(authorIds, followingVersion) };
    fingerprints.set(authorIds, known);
  }
  return known.fingerprint;
}

/**
 * A cache as this process holds it: the document as read, its entries ready for pages, and
 * whether it is the whole cache or only its newest entries (a first page's `$slice`).
 */
export interface HeldCache {
  cache: CacheDocument;
  entries: TimelineEntry[];
  whole: boolean;
}

/** A slice shorter than was asked for is the whole cache. */
export function holding(cache: CacheDocument, newest: number | null): HeldCache {
  return { cache, entries: cache._c.map(fromEntryDocument), whole: newest === null || cache._c.length < newest };
}

/** Pulled posts stay out of the cache, as out of every timeline: reads merge them from `content`. */
export const pushedOnly = (posts: readonly PostRecord[]) => posts.filter((post) => !post.pulled);

/** Entries oldest first, by time and then id, as pages order them. */
export const entryOrder = { _d: 1, _id: 1 } as const;

/** Newer than the cache's oldest entry by (time, id), or into a cache marked whole. */
export const aboveOldestOrWhole = (post: PostPosition): Filter<CacheDocument>[] => [
  { '_c.0._d': { $lt: post.createdAt } },
  { '_c.0._d': post.createdAt, '_c.0._id': { $lt: post.id } },
  { _e: { $exists: true } },
];
