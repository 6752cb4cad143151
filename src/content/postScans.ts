import type { Collection, Filter, ObjectId } from 'mongodb';
import { beyondFilter, sortFor, type Page, type PostPosition } from './position.js';
import type { ListPageRequest } from '../records/pages.js';
import { bodyLeftOut, byAuthors as postsOfAuthors, byPostIds, placeOnly, publicOnly, tokensLeftOut, toPostRecord, type ContentDocument, type PostRecord } from '../records/posts.js';

/** Lists of posts other than timeline pages: replies, reposts, an author's posts, every post. */
export class PostScans {
  constructor(
    private readonly content: Collection<ContentDocument>,
    private readonly byAuthors: (authorIds: readonly string[]) => Filter<ContentDocument> = (authorIds) => postsOfAuthors(authorIds),
  ) {}

  /**
   * Replies to a post that `visible` selects (see PostVisibility.filterFor), beyond `from` in `direction` (oldest first is the replies' own order: `forward` reads
   * newer ones, `backward` older ones), nearest to `from` first.
   */
  async replies(parentId: ObjectId, request: ListPageRequest<PostPosition>, visible: Filter<ContentDocument>): Promise<Page<PostRecord>> {
    const towards = request.direction === 'forward' ? 'newer' : 'older';
    const docs = await this.content
      .find({ $and: [{ '_r._id': parentId }, visible, beyondFilter<ContentDocument>(towards, request.from, '_d', '_id')].filter((part) => Object.keys(part).length > 0) }, { projection: tokensLeftOut })
      .sort(sortFor(towards, '_d', '_id'))
      .limit(request.limit + 1)
      .toArray();
    return { items: docs.slice(0, request.limit).map(toPostRecord), hasMore: docs.length > request.limit };
  }

  /**
   * Which of `originalIds` are still stored, and their reposts by any of `reposterIds`: one query,
   * without the bodies.
   */
  async originalsAndReposts(
    originalIds: readonly ObjectId[],
    reposterIds: readonly string[],
  ): Promise<{ originals: Set<string>; reposts: PostRecord[] }> {
    const ids = [...originalIds];
    const docs = await this.content
      .find({ $or: [byPostIds(ids), { '_o._id': { $in: ids }, ...this.byAuthors(reposterIds) }] }, { projection: bodyLeftOut })
      .toArray();
    const records = docs.map(placeOnly);
    return {
      originals: new Set(records.filter((post) => !post.repostOf).map((post) => post.id.toHexString())),
      reposts: records.filter((post) => post.repostOf),
    };
  }

  /** Every repost of a post, for taking them back with it. */
  async allRepostsOf(originalId: ObjectId): Promise<PostRecord[]> {
    return (await this.content.find({ '_o._id': originalId }, { projection: tokensLeftOut }).toArray()).map(toPostRecord);
  }

  /** Reposts by anyone of this author's posts, for deleting the account. */
  async repostsOfAuthor(authorId: string, limit: number): Promise<PostRecord[]> {
    return (await this.content.find({ '_o._a': authorId }, { projection: tokensLeftOut }).limit(limit).toArray()).map(toPostRecord);
  }

  /** The author's newest posts and reposts, for deleting the account. */
  async postsBy(authorId: string, limit: number): Promise<PostRecord[]> {
    return (await this.content.find(this.byAuthors([authorId]), { projection: tokensLeftOut }).limit(limit).toArray()).map(toPostRecord);
  }

  /**
   * The author's posts (not reposts) by id after `after`, each with what it counts on: the post a
   * public reply answers, the post a public quote quotes (limited ones count nowhere). For a
   * suspension taking them out of those counts and out of the notifications they made.
   */
  async postsAfter(authorId: string, after: ObjectId | null, limit: number): Promise<{ id: ObjectId; replyTo: ObjectId | null; quoteOf: ObjectId | null }[]> {
    const docs = await this.content
      .find({ ...this.byAuthors([authorId]), ...(after === null ? {} : { _id: { $gt: after } }), _o: { $exists: false } }, { projection: { _id: 1, _r: 1, _q: 1, _v: 1 } })
      .sort({ _id: 1 })
      .limit(limit)
      .toArray();
    return docs.map((doc) => ({ id: doc._id, replyTo: (!doc._v && doc._r?._id) || null, quoteOf: (!doc._v && doc._q?._id) || null }));
  }

  /** The posts timelines hold (limited posts never enter one). */
  countPosts(): Promise<number> {
    return this.content.countDocuments(publicOnly);
  }

  /** Every public post, oldest first, streamed: for rebuilding timelines, which hold no limited post. */
  async *allPostsOldestFirst(): AsyncGenerator<PostRecord> {
    for await (const doc of this.content.find(publicOnly, { projection: tokensLeftOut }).sort({ _d: 1, _id: 1 })) yield toPostRecord(doc);
  }

  /** Posts of these authors from `from` on, oldest first, that fanout pushes: for refilling a timeline. */
  async *pushedPostsSince(authorIds: readonly string[], from: Date): AsyncGenerator<PostRecord> {
    if (authorIds.length === 0) return;
    const cursor = this.content.find({ ...this.byAuthors(authorIds), _d: { $gte: from }, _p: { $exists: false }, ...publicOnly }, { projection: tokensLeftOut }).sort({ _d: 1, _id: 1 });
    for await (const doc of cursor) yield toPostRecord(doc);
  }
}
