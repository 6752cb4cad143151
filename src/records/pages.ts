/**
 * A page of a list in the list's own order (followers by handle, bookmarks newest first, replies
 * oldest first, ...), paged either way as Relay's connections are: `forward` reads on after `from`
 * (`first`/`after`), `backward` the items just before it (`last`/`before`). Types and pure
 * functions only.
 */
export type ListDirection = 'forward' | 'backward';

export interface ListPageRequest<Position> {
  direction: ListDirection;
  /** Exclusive; null starts at the list's start (`forward`) or its end (`backward`). */
  from: Position | null;
  limit: number;
}

export interface ListPage<T> {
  /** In the list's own order, whatever the direction. */
  items: T[];
  /** Whether more items lie beyond this page in the requested direction. */
  hasMore: boolean;
}

/**
 * Items read nearest to the cursor first (how a store reads either way) as a page in list order:
 * `backward` read them from the cursor towards the start, so they are turned around.
 */
export function inListOrder<T>(direction: ListDirection, nearestFirst: readonly T[], limit: number): ListPage<T> {
  const items = nearestFirst.slice(0, limit);
  if (direction === 'backward') items.reverse();
  return { items, hasMore: nearestFirst.length > limit };
}
