import { ObjectId, type Filter } from 'mongodb';
import { badInput } from '../errors.js';

/**
 * Where a post sits in any timeline: ordered by creation time, then by id, so no two posts tie.
 * Every list of posts (a timeline, an author's posts) is newest first by this key.
 */
export interface PostPosition {
  createdAt: Date;
  id: ObjectId;
}

/** `older` pages back in time (scroll); `newer` fetches what came after a point (pull to refresh). */
export type PageDirection = 'older' | 'newer';

export interface PageRequest {
  direction: PageDirection;
  /** Exclusive boundary; null starts at the newest (`older`) or oldest (`newer`) end. */
  from: PostPosition | null;
  limit: number;
}

export interface Page<T> {
  /** Newest first, whatever the direction. */
  items: T[];
  /** Whether more items lie beyond this page in the requested direction. */
  hasMore: boolean;
}

/**
 * Items read nearest the cursor first, one more than the page asks (the one that says whether
 * more lie beyond), as a page newest first: a `newer` read went up from the cursor, so it turns.
 */
export function newestFirstPage<T>(nearestFirst: readonly T[], request: Pick<PageRequest, 'direction' | 'limit'>): Page<T> {
  const items = nearestFirst.slice(0, request.limit);
  if (request.direction === 'newer') items.reverse();
  return { items, hasMore: nearestFirst.length > request.limit };
}

/** Newest first: negative when `a` is newer than `b`. */
export function compareNewestFirst(a: PostPosition, b: PostPosition): number {
  const byTime = b.createdAt.getTime() - a.createdAt.getTime();
  // The ids' bytes order as their hex strings do, without making two strings per comparison.
  return byTime !== 0 ? byTime : Buffer.compare(b.id.id, a.id.id);
}

/** Whether `position` lies strictly beyond `from` in `direction`. */
export function isBeyond(position: PostPosition, direction: PageDirection, from: PostPosition | null): boolean {
  if (!from) return true;
  const order = compareNewestFirst(position, from);
  return direction === 'older' ? order > 0 : order < 0;
}

/**
 * The MongoDB filter for documents beyond `from` in `direction`, for documents that keep the
 * creation time in `timeField` and the post id in `idField`.
 */
export function beyondFilter<T>(
  direction: PageDirection,
  from: PostPosition | null,
  timeField: string,
  idField: string,
): Filter<T> {
  if (!from) return {};
  const operator = direction === 'older' ? '$lt' : '$gt';
  return {
    $or: [
      { [timeField]: { [operator]: from.createdAt } },
      { [timeField]: from.createdAt, [idField]: { [operator]: from.id } },
    ],
  } as Filter<T>;
}

/** Sort spec for reading `direction` from a boundary: nearest first. */
export function sortFor(direction: PageDirection, timeField: string, idField: string): Record<string, 1 | -1> {
  const order = direction === 'older' ? -1 : 1;
  return { [timeField]: order, [idField]: order };
}

/**
 * Cursors are opaque to clients: base64url of "<epoch ms>:<post id>". The same cursor is valid in
 * every timeline strategy, in an author's posts and in live updates.
 */
export function encodeCursor(position: PostPosition): string {
  return Buffer.from(`${position.createdAt.getTime()}:${position.id.toHexString()}`).toString('base64url');
}

export function decodeCursor(cursor: string): PostPosition {
  const match = /^(\d{1,15}):([0-9a-f]{24})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match) throw badInput('Invalid cursor: pass a cursor exactly as a previous page returned it');
  return { createdAt: new Date(Number(match[1])), id: new ObjectId(match[2]) };
}
