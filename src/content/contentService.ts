import { ObjectId, type Collection, type Db, type Filter } from 'mongodb';
import { ReadThroughCache } from '../cache/readThrough.js';
import { Outboxes } from './outboxes.js';
import { badInput, isDuplicateKeyError } from '../errors.js';
import { assertDisplayableText, graphemeLength } from './text.js';
import { PostCounters, staleChangeMs } from './postCounters.js';
import { beyondFilter, sortFor, type Page, type PageRequest, type PostPosition } from './position.js';
import { sweepQuery } from '../db/connect.js';
import {
  maxPostLength,
  toContentDocument,
  toPostCounts,
  toPostRecord,
  byAuthors,
  type ContentDocument,
  type PostCounts,
  type PostRecord,
  type PostRef,
} from '../records/posts.js';
import { heldCaches } from '../config.js';

/**
 * Kept a day after a post is deleted. `uncount` is the intent to take a deleted reply off its
 * parent's count, recorded before the reply is deleted; `applying` once someone has claimed it.
 */
interface TombstoneDocument {
  _id: ObjectId;
  at: Date;
  uncount?: { p: ObjectId; state: 'pending' | 'applying'; at: Date };
}

/** The system of record for posts: every timeline strategy reads or links back to this collection. */
export class ContentService {
  readonly content: Collection<ContentDocument>;
  readonly counters: PostCounters;
  private readonly tombstones: Collection<TombstoneDocument>;

  /**
   * Posts held in this process for linked timeline entries, `post(id)` and `replyTo` (see ReadThroughCache):
   * only what never changes once a post is stored, so a deletion is the one change to forget (here at once,
   * elsewhere through the `postRemoved` live event). Counts change all the time and are read apart (`countsOf`).
   */
  private readonly postCache = new ReadThroughCache<string, PostRecord>('posts', heldCaches.posts);
  /** Authors' newest posts, for pages of one or many authors (see Outboxes). */
  private readonly outboxes: Outboxes;

  constructor(db: Db) {
    this.content = db.collection<ContentDocument>('content');
    this.outboxes = new Outboxes(this.content);
    this.counters = new PostCounters(this.content);
    this.tombstones = db.collection<TombstoneDocument>('deleted_posts');
  }

  async ensureIndexes(): Promise<void> {
    // "Newest posts of these authors before this point": equality on _a, then the page order.
    await this.content.createIndexes([
      { key: { _a: 1, _d: -1, _id: -1 }, name: 'author_newest_first' },
      // Only pulled posts: the one extra query a page makes for every pulled author a reader follows.
      { key: { _p: 1, _a: 1, _d: -1, _id: -1 }, name: 'pulled_newest_first', partialFilterExpression: { _p: true } },
    ]);
    await this.content.createIndexes([
      // Replies of a post, oldest first.
      { key: { '_r._id': 1, _d: 1, _id: 1 }, name: 'replies_oldest_first', partialFilterExpression: { '_r._id': { $exists: true } } },
      // Who reposted a post: the at-most-once check of a timeline page, and deleting an original.
      { key: { '_o._id': 1, _a: 1 }, name: 'reposts_of', partialFilterExpression: { '_o._id': { $exists: true } } },
      // Reposts of an author's posts, for deleting an account.
      { key: { '_o._a': 1 }, name: 'reposts_of_author', partialFilterExpression: { '_o._a': { $exists: true } } },
    ]);
    await this.content.createIndex({ _cq: 1, _d: 1 }, { name: 'replies_not_counted', partialFilterExpression: { _cq: true } });
    await this.tombstones.createIndexes([
      { key: { at: 1 }, name: 'tombstone_ttl', expireAfterSeconds: 24 * 3600 },
      { key: { 'uncount.at': 1 }, name: 'replies_not_uncounted', partialFilterExpression: { 'uncount.at': { $exists: true } } },
    ]);
  }

  /**
   * Checks the text and builds the post without storing it, so that its fanout can be queued
   * under the post's id before the post exists (see FeedService.post).
   */
  preparePost(authorId: string, text: string, options: { pulled: boolean; replyTo?: PostRecord | null }): PostRecord {
    const message = text.trim();
    const length = graphemeLength(message);
    if (length < 1 || length > maxPostLength) {
      throw badInput(`Post text must be 1 to ${maxPostLength} characters after trimming`);
    }
    assertDisplayableText(message, 'Post text', { multiline: true });
    const replyTo = options.replyTo ? { id: options.replyTo.id, authorId: options.replyTo.authorId } : null;
    return { id: new ObjectId(), authorId, text: message, createdAt: new Date(), pulled: options.pulled, replyTo, repostOf: null, counts: null };
  }

  /** A repost document of `original` by `reposterId`, under an id chosen by the caller (see Reposts). */
  prepareRepost(reposterId: string, original: PostRecord, at: { id: ObjectId; createdAt: Date }, options: { pulled: boolean }): PostRecord {
    const { authorId, createdAt, replyTo } = original;
    return {
      id: at.id,
      authorId: reposterId,
      text: original.text,
      createdAt: at.createdAt,
      pulled: options.pulled,
      replyTo: null,
      repostOf: { id: original.id, authorId, createdAt, replyTo },
      counts: null,
    };
  }

  /**
   * Idempotent: storing the same post twice (a replayed repost) keeps the first. A reply is
   * stored marked as not yet counted, then counted on its parent exactly once.
   */
  async storePost(post: PostRecord): Promise<void> {
    const doc = toContentDocument(post);
    if (post.replyTo) doc._cq = true;
    let stored = true;
    try {
      await this.content.insertOne(doc);
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
      stored = false;
    }
    this.outboxes.forget([post.authorId]);
    // A replay counts only a reply that is still marked as not yet counted.
    const uncounted = stored || (await this.content.countDocuments({ _id: post.id, _cq: true }, { limit: 1 })) > 0;
    if (post.replyTo && uncounted) await this.countReply(post.id, post.replyTo.id);
  }

  private countReply(replyId: ObjectId, parentId: ObjectId): Promise<void> {
    return this.counters.change(parentId, 'replies', 1, `reply:${replyId.toHexString()}`, () =>
      this.content.updateOne({ _id: replyId }, { $unset: { _cq: '' } }),
    );
  }

  /** Replies to a post, oldest first, after a cursor. */
  async replies(parentId: ObjectId, request: { from: PostPosition | null; limit: number }): Promise<Page<PostRecord>> {
    const docs = await this.content
      .find({ '_r._id': parentId, ...beyondFilter<ContentDocument>('newer', request.from, '_d', '_id') })
      .sort({ _d: 1, _id: 1 })
      .limit(request.limit + 1)
      .toArray();
    return { items: docs.slice(0, request.limit).map(toPostRecord), hasMore: docs.length > request.limit };
  }

  /**
   * Which of `originalIds` are still stored, and their reposts by any of `reposterIds`: one query,
   * without the texts.
   */
  async originalsAndReposts(
    originalIds: readonly ObjectId[],
    reposterIds: readonly string[],
  ): Promise<{ originals: Set<string>; reposts: PostRecord[] }> {
    const ids = [...originalIds];
    const docs = await this.content
      .find({ $or: [{ _id: { $in: ids } }, { '_o._id': { $in: ids }, _a: { $in: [...reposterIds] } }] }, { projection: { _m: 0 } })
      .toArray();
    const records = docs.map((doc) => toPostRecord({ ...doc, _m: '' }));
    return {
      originals: new Set(records.filter((post) => !post.repostOf).map((post) => post.id.toHexString())),
      reposts: records.filter((post) => post.repostOf),
    };
  }

  /** Every repost of a post, for taking them back with it. */
  async allRepostsOf(originalId: ObjectId): Promise<PostRecord[]> {
    return (await this.content.find({ '_o._id': originalId }).toArray()).map(toPostRecord);
  }

  /** Reposts by anyone of this author's posts, for deleting the account. */
  async repostsOfAuthor(authorId: string, limit: number): Promise<PostRecord[]> {
    return (await this.content.find({ '_o._a': authorId }).limit(limit).toArray()).map(toPostRecord);
  }

  /** The author's newest posts and reposts, for deleting the account. */
  async postsBy(authorId: string, limit: number): Promise<PostRecord[]> {
    return (await this.content.find({ _a: authorId }).limit(limit).toArray()).map(toPostRecord);
  }

  async exists(id: ObjectId): Promise<boolean> {
    return (await this.content.countDocuments({ _id: id }, { limit: 1 })) > 0;
  }

  /** A post, not a repost: reposts have no id of their own in the API. */
  async getPost(id: ObjectId): Promise<PostRecord | null> {
    const doc = await this.content.findOne({ _id: id, _o: { $exists: false } });
    return doc && toPostRecord(doc);
  }

  /** A post or a repost. */
  async getEntry(id: ObjectId): Promise<PostRecord | null> {
    const doc = await this.content.findOne({ _id: id });
    return doc && toPostRecord(doc);
  }

  /**
   * True when this call removed the post. A tombstone is written first and kept for a day, so
   * background work can tell a deleted post from one whose request has not stored it yet.
   */
  async deletePost({ id, authorId }: PostRef): Promise<boolean> {
    const doc = await this.content.findOne({ _id: id }, { projection: { _r: 1 } });
    const now = new Date();
    const intent = doc?._r ? { uncount: { p: doc._r._id, state: 'pending' as const, at: now } } : {};
    await this.tombstones.updateOne({ _id: id }, { $setOnInsert: { at: now, ...intent } }, { upsert: true });
    const deleted = (await this.content.deleteOne({ _id: id })).deletedCount === 1;
    this.forgetPosts([id]);
    // Also when another caller deleted it first: this process may hold it all the same.
    this.outboxes.forget([authorId]);
    await this.uncountReply({ _id: id, 'uncount.state': 'pending' });
    return deleted;
  }

  /** Takes a deleted reply off its parent's count, if this caller claims the intent. */
  private async uncountReply(claim: Filter<TombstoneDocument>): Promise<void> {
    const tombstone = await this.tombstones.findOneAndUpdate(
      claim,
      { $set: { 'uncount.state': 'applying', 'uncount.at': new Date() } },
      { returnDocument: 'after' },
    );
    if (!tombstone?.uncount) return;
    await this.counters.change(tombstone.uncount.p, 'replies', -1, `unreply:${tombstone._id.toHexString()}`, () =>
      this.tombstones.updateOne({ _id: tombstone._id }, { $unset: { uncount: '' } }),
    );
  }

  /** Finishes reply counts whose request died. Returns how many it finished. */
  async repairStalled(limit = 100): Promise<number> {
    const before = new Date(Date.now() - staleChangeMs);
    const [uncounted, tombstones] = await Promise.all([
      this.content.find({ _cq: true, _d: { $lt: before } }, { projection: { _r: 1 }, ...sweepQuery }).limit(limit).toArray(),
      this.tombstones.find({ 'uncount.at': { $lt: before } }, sweepQuery).limit(limit).toArray(),
    ]);
    for (const reply of uncounted) if (reply._r) await this.countReply(reply._id, reply._r._id);
    for (const tombstone of tombstones) {
      // A reply deleted only in intent (its request died first) is deleted by its retraction.
      if (await this.exists(tombstone._id)) continue;
      await this.uncountReply({ _id: tombstone._id, 'uncount.at': tombstone.uncount!.at });
    }
    return uncounted.length + tombstones.length;
  }

  async wasDeleted(id: ObjectId): Promise<boolean> {
    return (await this.tombstones.countDocuments({ _id: id }, { limit: 1 })) > 0;
  }

  /** One query for any number of ids; missing posts are simply absent from the result. */
  async getPosts(ids: readonly ObjectId[]): Promise<PostRecord[]> {
    if (ids.length === 0) return [];
    const docs = await this.content.find({ _id: { $in: [...ids] } }).toArray();
    return docs.map(toPostRecord);
  }

  /** Posts and reposts by id through the in-process tier, without counts (`counts: null`); missing ones are absent. */
  async cachedPosts(ids: readonly ObjectId[]): Promise<PostRecord[]> {
    const found = await this.postCache.getMany(
      ids.map((id) => id.toHexString()),
      async (missing) => {
        const posts = await this.getPosts(missing.map((hex) => new ObjectId(hex)));
        return new Map(posts.map((post) => [post.id.toHexString(), { ...post, counts: null }]));
      },
    );
    return [...found.values()];
  }

  /** Deleted posts: the tier drops them, so a linked entry or `post(id)` no longer shows them. */
  forgetPosts(ids: readonly ObjectId[]): void {
    this.postCache.invalidate(ids.map((id) => id.toHexString()));
  }

  /** Current like, repost and reply counts of these posts, by hex id, in one query; missing posts are absent. */
  async countsOf(ids: readonly ObjectId[]): Promise<Map<string, PostCounts>> {
    if (ids.length === 0) return new Map();
    const docs = await this.content.find({ _id: { $in: [...ids] } }, { projection: { n: 1 } }).toArray();
    return new Map(docs.map((doc) => [doc._id.toHexString(), toPostCounts(doc)]));
  }

  /** Posts added or removed elsewhere: their authors' outboxes are stale. */
  forgetOutboxes(authorIds: Iterable<string>): void {
    this.outboxes.forget(authorIds);
  }

  cacheStats() {
    return this.postCache.stats();
  }

  outboxStats() {
    return this.outboxes.stats();
  }

  countPosts(): Promise<number> {
    return this.content.countDocuments();
  }

  /** Every post, oldest first, streamed: for rebuilding timelines. */
  async *allPostsOldestFirst(): AsyncGenerator<PostRecord> {
    for await (const doc of this.content.find().sort({ _d: 1, _id: 1 })) yield toPostRecord(doc);
  }

  /** A page of the posts of one or many authors around a point in time, newest first. */
  async pageByAuthors(authorIds: readonly string[], request: PageRequest): Promise<Page<PostRecord>> {
    return (await this.outboxes.page(authorIds, request)) ?? this.page(authorIds, request, {});
  }

  /** The same, for the posts of these authors that are pulled rather than pushed. */
  pulledPageByAuthors(authorIds: readonly string[], request: PageRequest): Promise<Page<PostRecord>> {
    // A query, not the outboxes: a reader follows few pulled authors, and their outboxes would hold mostly pushed posts.
    return this.page(authorIds, request, { _p: true });
  }

  /** Posts of these authors from `from` on, oldest first, that fanout pushes: for refilling a timeline. */
  async *pushedPostsSince(authorIds: readonly string[], from: Date): AsyncGenerator<PostRecord> {
    if (authorIds.length === 0) return;
    const cursor = this.content.find({ _a: { $in: [...authorIds] }, _d: { $gte: from }, _p: { $exists: false } }).sort({ _d: 1, _id: 1 });
    for await (const doc of cursor) yield toPostRecord(doc);
  }

  private async page(authorIds: readonly string[], request: PageRequest, only: Filter<ContentDocument>): Promise<Page<PostRecord>> {
    if (authorIds.length === 0) return { items: [], hasMore: false };
    const docs = await this.content
      .find({ ...only, ...byAuthors(authorIds), ...beyondFilter<ContentDocument>(request.direction, request.from, '_d', '_id') })
      .sort(sortFor(request.direction, '_d', '_id'))
      .limit(request.limit + 1)
      .toArray();
    const hasMore = docs.length > request.limit;
    const nearestFirst = docs.slice(0, request.limit).map(toPostRecord);
    return { items: request.direction === 'older' ? nearestFirst : nearestFirst.reverse(), hasMore };
  }
}
