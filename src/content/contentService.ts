import { ObjectId, type Collection, type Db, type Filter } from 'mongodb';
import { badInput } from '../errors.js';
import { assertDisplayableText, graphemeLength } from './text.js';
import { beyondFilter, sortFor, type Page, type PageRequest } from './position.js';

export const maxPostLength = 500;

/** A post as stored: the reference layout's short field names, plus `_d`, the creation time. */
export interface ContentDocument {
  _id: ObjectId;
  /** Author handle. */
  _a: string;
  /** Message text. */
  _m: string;
  _d: Date;
  /**
   * Set when the author had more than FANOUT_PULL_THRESHOLD followers at posting time: the post
   * is not pushed into followers' timelines; readers pull it from here (the author's outbox).
   */
  _p?: true;
}

export interface PostRecord {
  id: ObjectId;
  authorId: string;
  text: string;
  createdAt: Date;
  /** Delivered by pull at read time instead of by fanout. */
  pulled: boolean;
}

export const toPostRecord = (doc: ContentDocument): PostRecord => ({
  id: doc._id,
  authorId: doc._a,
  text: doc._m,
  createdAt: doc._d,
  pulled: doc._p === true,
});

/** Parses a client-supplied post id; a malformed id names no post, so it yields null. */
export function parsePostId(id: string): ObjectId | null {
  return /^[0-9a-f]{24}$/i.test(id) ? new ObjectId(id) : null;
}

/** The system of record for posts: every timeline strategy reads or links back to this collection. */
export class ContentService {
  readonly content: Collection<ContentDocument>;
  private readonly tombstones: Collection<{ _id: ObjectId; at: Date }>;

  constructor(db: Db) {
    this.content = db.collection<ContentDocument>('content');
    this.tombstones = db.collection<{ _id: ObjectId; at: Date }>('deleted_posts');
  }

  async ensureIndexes(): Promise<void> {
    // "Newest posts of these authors before this point": equality on _a, then the page order.
    await this.content.createIndexes([
      { key: { _a: 1, _d: -1, _id: -1 }, name: 'author_newest_first' },
      // Only pulled posts: the one extra query a page makes for every pulled author a reader follows.
      { key: { _p: 1, _a: 1, _d: -1, _id: -1 }, name: 'pulled_newest_first', partialFilterExpression: { _p: true } },
    ]);
    await this.tombstones.createIndex({ at: 1 }, { name: 'tombstone_ttl', expireAfterSeconds: 24 * 3600 });
  }

  /**
   * Checks the text and builds the post without storing it, so that its fanout can be queued
   * under the post's id before the post exists (see FeedService.post).
   */
  preparePost(authorId: string, text: string, options: { pulled: boolean }): PostRecord {
    const message = text.trim();
    const length = graphemeLength(message);
    if (length < 1 || length > maxPostLength) {
      throw badInput(`Post text must be 1 to ${maxPostLength} characters after trimming`);
    }
    assertDisplayableText(message, 'Post text', { multiline: true });
    return { id: new ObjectId(), authorId, text: message, createdAt: new Date(), pulled: options.pulled };
  }

  async storePost(post: PostRecord): Promise<void> {
    const doc: ContentDocument = { _id: post.id, _a: post.authorId, _m: post.text, _d: post.createdAt };
    if (post.pulled) doc._p = true;
    await this.content.insertOne(doc);
  }

  async exists(id: ObjectId): Promise<boolean> {
    return (await this.content.countDocuments({ _id: id }, { limit: 1 })) > 0;
  }

  async getPost(id: ObjectId): Promise<PostRecord | null> {
    const doc = await this.content.findOne({ _id: id });
    return doc && toPostRecord(doc);
  }

  /** True when this call removed the post. */
  /**
   * True when this call removed the post. A tombstone is written first and kept for a day, so
   * background work can tell a deleted post from one whose request has not stored it yet.
   */
  async deletePost(id: ObjectId): Promise<boolean> {
    await this.tombstones.updateOne({ _id: id }, { $setOnInsert: { at: new Date() } }, { upsert: true });
    return (await this.content.deleteOne({ _id: id })).deletedCount === 1;
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

  countPosts(): Promise<number> {
    return this.content.countDocuments();
  }

  /** Every post, oldest first, streamed: for rebuilding timelines. */
  async *allPostsOldestFirst(): AsyncGenerator<PostRecord> {
    for await (const doc of this.content.find().sort({ _d: 1, _id: 1 })) yield toPostRecord(doc);
  }

  /** A page of the posts of one or many authors around a point in time, newest first. */
  pageByAuthors(authorIds: readonly string[], request: PageRequest): Promise<Page<PostRecord>> {
    return this.page(authorIds, request, {});
  }

  /** The same, for the posts of these authors that are pulled rather than pushed. */
  pulledPageByAuthors(authorIds: readonly string[], request: PageRequest): Promise<Page<PostRecord>> {
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
    const byAuthor: Filter<ContentDocument> =
      authorIds.length === 1 ? { _a: authorIds[0]! } : { _a: { $in: [...authorIds] } };
    const docs = await this.content
      .find({ ...only, ...byAuthor, ...beyondFilter<ContentDocument>(request.direction, request.from, '_d', '_id') })
      .sort(sortFor(request.direction, '_d', '_id'))
      .limit(request.limit + 1)
      .toArray();
    const hasMore = docs.length > request.limit;
    const nearestFirst = docs.slice(0, request.limit).map(toPostRecord);
    return { items: request.direction === 'older' ? nearestFirst : nearestFirst.reverse(), hasMore };
  }
}
