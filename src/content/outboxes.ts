import type { Collection, Filter, ObjectId } from 'mongodb';
import { ReadThroughCache } from '../cache/readThrough.js';
import { RecentRemovals } from '../cache/recentRemovals.js';
import { compareNewestFirst, isBeyond, type Page, type PageRequest, type PostPosition } from './position.js';
import { byAuthors as postsOfAuthors, publicOnly, tokensLeftOut, toPostRecord, type ContentDocument, type PostRecord } from '../records/posts.js';
import { heldCaches } from '../config.js';

/**
 * What this process knows of one author's public posts and reposts (limited posts never enter an outbox): every one at or newer than `floor`,
 * newest first, and all of them when `floor` is null. Counts are left out (`counts: null`): they
 * change with every like and are read apart.
 */
export interface Outbox {
  posts: PostRecord[];
  floor: PostPosition | null;
}

/** Posts kept per author: two pages of the reference client, so scrolling stays in process too. */
const outboxLength = 40;
/** Largest number of posts one load reads, whatever the number of authors missing. */
const maxLoad = 1000;
/**
 * Readers who follow more authors than this are paged by a query: merging their outboxes would
 * cost more CPU per page than the query it saves.
 */
const maxAuthors = 500;

/**
 * Each author's newest posts held in this process (the outbox of Weibo's multi-tier feed cache,
 * in its in-process L1 tier), so a page of several authors
 * (fanout on read, a returning reader's first pages, an account's own posts) is merged here instead of read from
 * `content`. A page the outboxes cannot answer exactly (past what they hold) is left to `content`.
 *
 * A new or deleted post changes its author's outbox in place, here at once (ContentService) and in
 * every other instance through the `postAdded` and `postRemoved` live events (services.ts), so no
 * reader reads it again for a post. A post's two events may arrive in either order (its deletion
 * raced its announcement): a post added after its removal was seen drops the outbox instead, to be
 * read again. Entries are trusted for 10 s at most, a backstop for a post whose request died
 * between storing it and announcing it.
 */
export class Outboxes {
  private readonly cache = new ReadThroughCache<string, Outbox>('outboxes', {
    max: heldCaches.outboxes.max,
    ttlMs: heldCaches.outboxes.ttlMs,
    sized: { maxSize: heldCaches.outboxes.maxPosts, sizeOf: (outbox) => outbox.posts.length + 1 },
  });

  /** Posts removed lately, by author: their late announcements are not taken in. */
  private readonly removed = new RecentRemovals(heldCaches.outboxes.ttlMs);

  constructor(
    private readonly content: Collection<ContentDocument>,
    private readonly byAuthors: (authorIds: readonly string[]) => Filter<ContentDocument> = (authorIds) => postsOfAuthors(authorIds),
  ) {}

  /**
   * The page from the outboxes of `authorIds`; null when they do not hold all of it, or for more
   * than `maxAuthors`. A newest page loads the missing outboxes first, in one query; other pages
   * use only what is held.
   */
  async page(authorIds: readonly string[], request: PageRequest): Promise<Page<PostRecord> | null> {
    if (authorIds.length > maxAuthors) return null;
    const newestPage = request.direction === 'older' && request.from === null;
    const held = await this.cache.getMany(authorIds, (missing) => (newestPage ? this.load(missing) : Promise.resolve(new Map())));
    for (const authorId of authorIds) if (!held.has(authorId)) return null;
    // One outbox per author, however often the list names one.
    return pageOfOutboxes([...held.values()], request);
  }

  forget(authorIds: Iterable<string>): void {
    this.cache.invalidate(authorIds);
  }

  /** A stored post, into its author's outbox where one is held (only public posts enter one). */
  take(post: PostRecord): void {
    if (post.body.visibility !== 'PUBLIC') return;
    if (this.removed.includes(post, post.authorId)) return this.forget([post.authorId]);
    this.cache.update(post.authorId, (outbox) => withPost(outbox, { ...post, counts: null }));
  }

  /** A removed post or repost (by its own id or, for a repost, its original's) out of its author's outbox. */
  drop(authorId: string, postId: ObjectId): void {
    this.removed.remember(postId, authorId);
    this.cache.update(authorId, (outbox) => ({
      ...outbox,
      posts: outbox.posts.filter((post) => !post.id.equals(postId) && !post.repostOf?.id.equals(postId)),
    }));
  }

  stats() {
    return this.cache.stats();
  }

  /**
   * The newest posts of these authors, newest first, at most `outboxLength` each. When the query
   * stops at its limit, each author's posts are known down to the last post it read (the floor).
   */
  private async load(authorIds: string[]): Promise<Map<string, Outbox>> {
    const limit = Math.min(outboxLength * authorIds.length, maxLoad);
    const docs = await this.content
      .find({ ...publicOnly, ...this.byAuthors(authorIds) }, { projection: tokensLeftOut })
      .sort({ _d: -1, _id: -1 })
      .limit(limit)
      .toArray();
    const last = docs.at(-1);
    const floor = docs.length === limit && last ? { createdAt: last._d, id: last._id } : null;
    const outboxes = new Map<string, Outbox>(authorIds.map((authorId) => [authorId, { posts: [], floor }]));
    for (const doc of docs) {
      const outbox = outboxes.get(doc._a)!;
      if (outbox.posts.length === outboxLength) continue;
      outbox.posts.push({ ...toPostRecord(doc), counts: null });
      if (outbox.posts.length === outboxLength) outbox.floor = outbox.posts[outboxLength - 1]!;
    }
    return outboxes;
  }
}

/**
 * The outbox with `post` in its place, newest first; the oldest held post goes when it is full,
 * and marks the new floor. A post below the floor lies where the outbox says nothing, and one held
 * already (its own announcement coming back) changes nothing.
 */
export function withPost(outbox: Outbox, post: PostRecord): Outbox {
  if (outbox.floor && compareNewestFirst(post, outbox.floor) > 0) return outbox;
  if (outbox.posts.some((held) => held.id.equals(post.id))) return outbox;
  const posts = [...outbox.posts];
  let index = 0;
  while (index < posts.length && compareNewestFirst(posts[index]!, post) < 0) index++;
  posts.splice(index, 0, post);
  if (posts.length <= outboxLength) return { posts, floor: outbox.floor };
  posts.length = outboxLength;
  return { posts, floor: posts[outboxLength - 1]! };
}

/**
 * A page merged from outboxes (each newest first), or null when it reaches past what they hold.
 * Below the newest of their floors some author's posts may be missing, so an older page needs one
 * post more than its size above that floor (which also proves `hasMore`), and a newer page must
 * start at or above it.
 */
export function pageOfOutboxes(outboxes: readonly Outbox[], request: PageRequest): Page<PostRecord> | null {
  let floor: PostPosition | null = null;
  for (const outbox of outboxes) if (outbox.floor && (!floor || compareNewestFirst(outbox.floor, floor) < 0)) floor = outbox.floor;
  const { direction, from, limit } = request;
  const older = direction === 'older';
  if (!older && floor && (!from || compareNewestFirst(from, floor) > 0)) return null;

  // Each outbox's post nearest `from` in the page's direction; older pages walk towards the end.
  const step = older ? 1 : -1;
  const heads = outboxes.map(({ posts }) => {
    if (older) {
      let index = 0;
      while (index < posts.length && !isBeyond(posts[index]!, direction, from)) index++;
      return index;
    }
    let index = posts.length - 1;
    while (index >= 0 && !isBeyond(posts[index]!, direction, from)) index--;
    return index;
  });
  const headPost = (i: number) => outboxes[i]!.posts[heads[i]!];
  // The nearest head wins: by time (a number, the profile's hot path), by id only on a tie.
  const headTimes = heads.map((_, i) => headPost(i)?.createdAt.getTime() ?? Number.NaN);
  const nearestFirst: PostRecord[] = [];
  while (nearestFirst.length <= limit) {
    let best = -1;
    for (let i = 0; i < outboxes.length; i++) {
      const time = headTimes[i]!;
      if (Number.isNaN(time)) continue;
      const nearer = best < 0 || (older ? time > headTimes[best]! : time < headTimes[best]!);
      const tie = !nearer && time === headTimes[best]! && compareNewestFirst(headPost(i)!, headPost(best)!) * step < 0;
      if (nearer || tie) best = i;
    }
    if (best < 0) break;
    const post = headPost(best)!;
    if (older && floor && compareNewestFirst(post, floor) > 0) break;
    nearestFirst.push(post);
    heads[best] = heads[best]! + step;
    headTimes[best] = headPost(best)?.createdAt.getTime() ?? Number.NaN;
  }
  if (older && floor && nearestFirst.length <= limit) return null;
  const items = nearestFirst.slice(0, limit);
  return { items: older ? items : items.reverse(), hasMore: nearestFirst.length > limit };
}
