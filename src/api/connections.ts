import type DataLoader from 'dataloader';
import { entryPost, shownPost, type PostEdgeRecord, type PostRecord } from '../records/posts.js';
import { decodeCursor, encodeCursor, type Page, type PageRequest, type PostPosition } from '../content/position.js';
import type { ListDirection, ListPage, ListPageRequest } from '../records/pages.js';
import { badInput } from '../errors.js';
import type { PageLoads, TimelineEntry } from '../feed/timelineEntry.js';
import { handlePattern, type HandlePage, type UserRecord } from '../records/users.js';
import type { ResolversTypes } from './generated/graphql.js';
import { existingUsers, type Loaders } from './loaders.js';

export const defaultPageSize = 20;
export const maxPageSize = 100;

interface PostPageArgs {
  first?: number | null;
  after?: string | null;
  last?: number | null;
  before?: string | null;
}

function pageSize(value: number | null | undefined, name: string): number {
  if (value === null || value === undefined) return defaultPageSize;
  if (value < 1 || value > maxPageSize) throw badInput(`${name} must be between 1 and ${maxPageSize}`);
  return value;
}

/**
 * Relay arguments to a page request: `first`/`after` scrolls back in time, `last`/`before` fetches
 * the posts just newer than a cursor. Mixing the two directions is refused rather than guessed.
 */
export function postPageRequest(args: PostPageArgs): PageRequest {
  const request = listPageRequest(args, decodeCursor, 'Use first/after to page older posts or last/before for newer ones, not both');
  return { direction: request.direction === 'forward' ? 'older' : 'newer', from: request.from, limit: request.limit };
}

/**
 * The same arguments for any list in its own order: `first`/`after` reads on from a cursor,
 * `last`/`before` the items just before one (towards the list's start). Mixing them is refused.
 */
export function listPageRequest<Position>(
  args: PostPageArgs,
  decode: (cursor: string) => Position,
  mixed = 'Use first/after to page forwards or last/before to page backwards, not both',
): ListPageRequest<Position> {
  const forward = args.first != null || args.after != null;
  const backward = args.last != null || args.before != null;
  if (forward && backward) throw badInput(mixed);
  if (backward) return { direction: 'backward', from: args.before != null ? decode(args.before) : null, limit: pageSize(args.last, 'last') };
  return { direction: 'forward', from: args.after != null ? decode(args.after) : null, limit: pageSize(args.first, 'first') };
}

/**
 * `timeline`'s rules for every connection: the far end of a page in its direction is exact (one
 * extra item was read); the near end is "there is something beyond the cursor you came from",
 * true whenever a cursor was given.
 */
export function listPageInfo(direction: ListDirection, cameFromCursor: boolean, hasMore: boolean, startCursor: string | null, endCursor: string | null) {
  return {
    hasNextPage: direction === 'forward' ? hasMore : cameFromCursor,
    hasPreviousPage: direction === 'backward' ? hasMore : cameFromCursor,
    startCursor,
    endCursor,
  };
}

/** A timeline item as an edge: a repost shows its original, at the repost's place (its cursor). */
export function toPostEdge(item: PostRecord): PostEdgeRecord {
  return { item, node: shownPost(item), repostedById: item.repostOf ? item.authorId : null };
}

const cursorOf = (item: PostRecord | undefined) => (item ? encodeCursor(item) : null);

/** A page of posts as the API answers it: records all the way down, for the posts' fields to resolve. */
export interface PostConnectionRecord {
  edges: PostEdgeRecord[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
}

export function toPostConnection(page: Page<PostRecord>, request: PageRequest): PostConnectionRecord {
  const direction = request.direction === 'older' ? 'forward' : 'backward';
  return {
    edges: page.items.map(toPostEdge),
    pageInfo: listPageInfo(direction, request.from !== null, page.hasMore, cursorOf(page.items[0]), cursorOf(page.items.at(-1))),
  };
}

/**
 * Linked timeline entries get their post from one batched content query; null where the post no
 * longer exists (the feed then reads on, so the page stays full).
 */
function hydrateEntries(
  entries: readonly TimelineEntry[],
  posts: DataLoader<string, PostRecord | null>,
): Promise<(PostRecord | null)[]> {
  // A page of embedded entries (the embed mode's every page) needs nothing loaded: no promise per entry.
  if (entries.every((entry) => entry.body !== null)) return Promise.resolve(entries.map((entry) => entryPost(entry, entry.body!)));
  return Promise.all(
    entries.map(async (entry): Promise<PostRecord | null> => {
      if (entry.body !== null) return entryPost(entry, entry.body);
      // A linked repost takes its body from the original, which the page shows anyway.
      const post = await posts.load((entry.repostOf?.id ?? entry.id).toHexString());
      if (!post) return null;
      return entry.repostOf ? entryPost(entry, post.body) : post;
    }),
  );
}

/** What a timeline page loads, through one request's loaders. */
export function pageLoads(loaders: Pick<Loaders, 'posts' | 'users'>): PageLoads {
  return {
    posts: (entries) => hydrateEntries(entries, loaders.posts),
    users: (handles) => existingUsers(loaders.users, handles),
  };
}

/** Replies are oldest first: `first`/`after` reads newer ones, `last`/`before` older ones. */
export const replyPageRequest = (args: PostPageArgs): ListPageRequest<PostPosition> => listPageRequest(args, decodeCursor);

export function toReplyConnection(page: ListPage<PostRecord>, request: ListPageRequest<unknown>): PostConnectionRecord {
  const pageInfo = listPageInfo(request.direction, request.from !== null, page.hasMore, cursorOf(page.items[0]), cursorOf(page.items.at(-1)));
  return { edges: page.items.map(toPostEdge), pageInfo };
}

/** Follow lists and list members, by handle. */
export const userPageRequest = (args: PostPageArgs): ListPageRequest<string> => listPageRequest(args, decodeUserCursor);

const encodeUserCursor = (handle: string) => Buffer.from(`u:${handle}`).toString('base64url');

function decodeUserCursor(cursor: string): string {
  const handle = /^u:(.*)$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'))?.[1];
  if (!handle || !handlePattern.test(handle)) {
    throw badInput('Invalid cursor: pass a cursor exactly as a previous page returned it');
  }
  return handle;
}

export function toUserConnection(
  page: HandlePage,
  users: readonly (UserRecord | null)[],
  totalCount: number,
  request: ListPageRequest<unknown>,
): ResolversTypes['UserConnection'] {
  const edges = users
    .filter((user): user is UserRecord => user !== null)
    .map((user) => ({ cursor: encodeUserCursor(user.handle), node: user }));
  const pageInfo = listPageInfo(request.direction, request.from !== null, page.hasMore, edges[0]?.cursor ?? null, edges.at(-1)?.cursor ?? null);
  return { edges, totalCount, pageInfo };
}

/** Bookmark cursors are decoded by the bookmarks themselves (their own format: a timeline cursor is refused). */
export const bookmarkPageRequest = (args: PostPageArgs): ListPageRequest<string> => listPageRequest(args, (cursor) => cursor);

/** Bookmarks as a post connection, each edge's cursor the bookmark's own place. */
export function toBookmarkConnection(page: ListPage<{ post: PostRecord; cursor: string }>, request: ListPageRequest<unknown>): PostConnectionRecord {
  const edges = page.items.map(({ post, cursor }) => ({ ...toPostEdge(post), cursor }));
  return { edges, pageInfo: listPageInfo(request.direction, request.from !== null, page.hasMore, edges[0]?.cursor ?? null, edges.at(-1)?.cursor ?? null) };
}

export const defaultSearchSize = 20;
export const maxSearchSize = 50;

/** `searchUsers`' arguments: a lowercase prefix (a leading `@` dropped), and how many. */
export function searchRequest(args: { query: string; first?: number | null }): { prefix: string; limit: number } {
  const prefix = args.query.trim().replace(/^@/, '').toLowerCase();
  if (prefix === '') throw badInput('query must not be empty');
  if (prefix.length > 100) throw badInput('query must be at most 100 characters');
  const limit = args.first ?? defaultSearchSize;
  if (limit < 1 || limit > maxSearchSize) throw badInput(`first must be between 1 and ${maxSearchSize}`);
  return { prefix, limit };
}
