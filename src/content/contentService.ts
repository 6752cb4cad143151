import { ObjectId, type Collection, type Db, type Filter } from 'mongodb';
import { badInput } from '../errors.js';
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
}

export interface PostRecord {
  id: ObjectId;
  authorId: string;
  text: string;
  createdAt: Date;
}

export const toPostRecord = (doc: ContentDocument): PostRecord => ({
  id: doc._id,
  authorId: doc._a,
  text: doc._m,
  createdAt: doc._d,
});

/** Parses a client-supplied post id; a malformed id names no post, so it yields null. */
export function parsePostId(id: string): ObjectId | null {
  return /^[0-9a-f]{24}$/i.test(id) ? new ObjectId(id) : null;
}

/** The system of record for posts: every timeline strategy reads or links back to this collection. */
export class ContentService {
  readonly content: Collection<ContentDocument>;

  constructor(db: Db) {
    this.content = db.collection<ContentDocument>('content');
  }

  async ensureIndexes(): Promise<void> {
    // "Newest posts of these authors before this point": equality on _a, then the page order.
    await this.content.createIndex({ _a: 1, _d: -1, _id: -1 }, { name: 'author_newest_first' });
  }

  async createPost(authorId: string, text: string): Promise<PostRecord> {
    const message = text.trim();
    if (message.length < 1 || message.length > maxPostLength) {
      throw badInput(`Post text must be 1 to ${maxPostLength} characters after trimming`);
    }
    const doc: ContentDocument = { _id: new ObjectId(), _a: authorId, _m: message, _d: new Date() };
    await this.content.insertOne(doc);
    return toPostRecord(doc);
  }

  async getPost(id: ObjectId): Promise<PostRecord | null> {
    const doc = await this.content.findOne({ _id: id });
    return doc && toPostRecord(doc);
  }

  /** True when this call removed the post. */
  async deletePost(id: ObjectId): Promise<boolean> {
    return (await this.content.deleteOne({ _id: id })).deletedCount === 1;
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
  async pageByAuthors(authorIds: readonly string[], request: PageRequest): Promise<Page<PostRecord>> {
    if (authorIds.length === 0) return { items: [], hasMore: false };
    const byAuthor: Filter<ContentDocument> =
      authorIds.length === 1 ? { _a: authorIds[0]! } : { _a: { $in: [...authorIds] } };
    const docs = await this.content
      .find({ ...byAuthor, ...beyondFilter<ContentDocument>(request.direction, request.from, '_d', '_id') })
      .sort(sortFor(request.direction, '_d', '_id'))
      .limit(request.limit + 1)
      .toArray();
    const hasMore = docs.length > request.limit;
    const nearestFirst = docs.slice(0, request.limit).map(toPostRecord);
    return { items: request.direction === 'older' ? nearestFirst : nearestFirst.reverse(), hasMore };
  }
}
