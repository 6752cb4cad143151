import { ObjectId, type Collection, type Db } from 'mongodb';
import { badInput, isDuplicateKeyError } from '../errors.js';
import type { ListPageRequest } from '../records/pages.js';
import { HeldViewerStates } from './heldViewerStates.js';
import { plannedCollection, plannedIndexes } from '../db/shardPlan.js';
import { everyEvent, type HeldScope } from '../changes/partitions.js';

/**
 * One user's bookmark of one post. The `_id` is the pair, so bookmarking twice stores one
 * document and "which of these posts has the viewer bookmarked" is one `_id $in` query per page.
 */
export interface BookmarkDocument {
  /** `<post id hex>:<handle>`. */
  _id: string;
  p: ObjectId;
  u: string;
  /** When it was bookmarked: the list's order, newest first, with `p` breaking ties. */
  at: Date;
}

/** Where a bookmark sits in its owner's list. */
export interface BookmarkPosition {
  at: Date;
  postId: ObjectId;
}

export interface BookmarkPage {
  /** Nearest to the page's cursor first. */
  items: BookmarkPosition[];
  hasMore: boolean;
}

const keyOf = (postId: ObjectId, userId: string) => `${postId.toHexString()}:${userId}`;

/**
 * Bookmarks (collection `bookmarks`): a user's private list of posts, paged newest first on the
 * compound `{ u, at, p }` index; `{ p }` finds a deleted post's bookmarks.
 */
export class Bookmarks {
  readonly edges: Collection<BookmarkDocument>;
  /** Which posts each viewer has bookmarked, held in this process. */
  private readonly held: HeldViewerStates;

  constructor(db: Db, scope: HeldScope = everyEvent) {
    this.edges = plannedCollection<BookmarkDocument>(db, 'bookmarks');
    this.held = new HeldViewerStates(
      'bookmarks',
      async (userId, postIds) => {
        const docs = await this.edges.find({ _id: { $in: postIds.map((id) => keyOf(id, userId)) }, u: userId }, { projection: { p: 1 } }).toArray();
        return new Set(docs.map((doc) => doc.p.toHexString()));
      },
      scope,
    );
  }

  async ensureIndexes(): Promise<void> {
    await plannedIndexes(this.edges, [
      { key: { u: 1, at: -1, p: -1 }, name: 'user_newest' },
      { key: { p: 1 }, name: 'by_post' },
    ]);
  }

  /** Idempotent: a second bookmark keeps the first one's time. */
  async add(postId: ObjectId, userId: string): Promise<void> {
    this.held.forget(userId, [postId]);
    await this.edges.updateOne(
      { _id: keyOf(postId, userId), u: userId },
      { $setOnInsert: { p: postId, at: new Date() } },
      { upsert: true },
    ).catch((error: unknown) => {
      // Two racing upserts of one new `_id`: one inserts, the other finds the key taken. Either way it is there.
      if (!isDuplicateKeyError(error)) throw error;
    });
    this.held.forget(userId, [postId]);
  }

  async remove(postId: ObjectId, userId: string): Promise<void> {
    await this.edges.deleteOne({ _id: keyOf(postId, userId), u: userId });
    this.held.forget(userId, [postId]);
  }

  /** Which of `postIds` the user has bookmarked: held in this process, one query for those not held. */
  among(userId: string, postIds: readonly ObjectId[]): Promise<Set<string>> {
    return this.held.among(userId, postIds);
  }

  /** The user's bookmarks of these posts changed, here or on another instance. */
  forgetHeld(userId: string, postIds: readonly ObjectId[]): void {
    this.held.forget(userId, postIds);
  }

  /**
   * Up to `limit` bookmarks beyond `from` in `direction` (`forward`: older, `backward`: newer),
   * nearest to `from` first, and whether more follow.
   */
  async page(userId: string, request: ListPageRequest<BookmarkPosition>): Promise<BookmarkPage> {
    const { from, limit } = request;
    const forward = request.direction === 'forward';
    const operator = forward ? '$lt' : '$gt';
    const beyond = from ? { $or: [{ at: { [operator]: from.at } }, { at: from.at, p: { [operator]: from.postId } }] } : {};
    const order = forward ? -1 : 1;
    const docs = await this.edges
      .find({ u: userId, ...beyond }, { projection: { at: 1, p: 1 } })
      .sort({ u: 1, at: order, p: order })
      .limit(limit + 1)
      .toArray();
    return { items: docs.slice(0, limit).map((doc) => ({ at: doc.at, postId: doc.p })), hasMore: docs.length > limit };
  }

  /** The bookmarks of a post that no longer exists. */
  async forgetPost(postId: ObjectId): Promise<void> {
    await this.edges.deleteMany({ p: postId });
  }

  /** Bookmarks of these posts by this user that point at nothing any more (found while paging). */
  async forgetMissing(userId: string, postIds: readonly ObjectId[]): Promise<void> {
    if (postIds.length > 0) await this.edges.deleteMany({ _id: { $in: postIds.map((id) => keyOf(id, userId)) }, u: userId });
  }

  /** All of a user's bookmarks, when the account goes. Returns how many there were. */
  async forgetUser(userId: string): Promise<number> {
    return (await this.edges.deleteMany({ u: userId })).deletedCount;
  }
}

/** Bookmark cursors are opaque and their own: "b:<epoch ms>:<post id>" in base64url. */
export function encodeBookmarkCursor(position: BookmarkPosition): string {
  return Buffer.from(`b:${position.at.getTime()}:${position.postId.toHexString()}`).toString('base64url');
}

export function decodeBookmarkCursor(cursor: string): BookmarkPosition {
  const match = /^b:(\d{1,15}):([0-9a-f]{24})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match) throw badInput('Invalid cursor: pass a cursor exactly as a previous page of bookmarks returned it');
  return { at: new Date(Number(match[1])), postId: new ObjectId(match[2]) };
}
