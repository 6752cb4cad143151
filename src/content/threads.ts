import type { Collection, Filter } from 'mongodb';
import { plannedIndexes } from '../db/shardPlan.js';
import { badInput } from '../errors.js';
import {
  afterDescendants,
  byPostId,
  byPostIds,
  placeOnly,
  threadPlace,
  publicOnly,
  toPostRecord,
  type ContentDocument,
  type PostRecord,
} from '../records/posts.js';
import { beyondFilter, newestFirstPage, sortFor, type Page, type PageRequest } from './position.js';
import { inListOrder, type ListPageRequest } from '../records/pages.js';

/**
 * Conversations as lists: a post's ancestors, the reply tree below it in reading order, and the
 * quotes of a post. Each reply carries its thread's root, its nearest ancestors and a key that
 * sorts the whole thread depth first (records/posts.ts, `threadPlace`), so the ancestors are one
 * read by id and any page of descendants is one range of one index, whatever the depth.
 */
export class Threads {
  constructor(private readonly content: Collection<ContentDocument>) {}

  async ensureIndexes(): Promise<void> {
    await plannedIndexes(this.content, [
      // A thread in reading order: a post's descendants are one range of keys under its root.
      { key: { _rt: 1, _tk: 1 }, name: 'thread_order', partialFilterExpression: { _rt: { $exists: true } } },
      // The quotes of a post, newest first.
      { key: { '_q._id': 1, _d: -1, _id: -1 }, name: 'quotes_newest_first', partialFilterExpression: { '_q._id': { $exists: true } } },
    ]);
  }

  /**
   * The posts `post` answers, root first, as stored (one read by id): null where one was deleted.
   * A reply stored before replies kept their place knows only its parent.
   */
  async ancestors(post: PostRecord): Promise<(PostRecord | null)[]> {
    const ids = post.thread?.ancestors ?? (post.replyTo ? [post.replyTo.id] : []);
    if (ids.length === 0) return [];
    const docs = await this.content.find({ ...byPostIds(ids), _o: { $exists: false } }).toArray();
    const found = new Map(docs.map((doc) => [doc._id.toHexString(), toPostRecord(doc)]));
    return ids.map((id) => found.get(id.toHexString()) ?? null);
  }

  /**
   * The replies below `post` that `visible` selects, in reading order after the key `from` (a
   * cursor from this list; `backward`: just before it), `limit` of them, in reading order: one
   * indexed range query, the filter applied by the database, so a hidden reply never shortens a page.
   */
  async descendants(post: PostRecord, request: ListPageRequest<string>, visible: Filter<ContentDocument>): Promise<Page<PostRecord>> {
    const { from, limit, direction } = request;
    const root = post.thread?.root ?? post.id;
    const own = post.thread?.key ?? '';
    if (from !== null && (!from.startsWith(own) || from === own)) throw badInput('Invalid cursor: pass a cursor of this post\'s descendants exactly as a previous page returned it');
    const end = post.thread ? { $lt: afterDescendants(own) } : {};
    const range = direction === 'forward' ? { $gt: from ?? own, ...end } : { $gt: own, ...(from === null ? end : { $lt: from }) };
    const order = direction === 'forward' ? 1 : -1;
    const docs = await this.content
      .find({ $and: [{ _rt: root, _tk: range }, visible] })
      .sort({ _rt: order, _tk: order })
      .limit(limit + 1)
      .toArray();
    return inListOrder(direction, docs.map(toPostRecord), limit);
  }

  /**
   * Gives every reply stored before replies kept their thread place its place, oldest first so a
   * parent is placed before its replies (a parent deleted since starts its replies' thread).
   * Idempotent, in batches: a start killed half-way resumes. Returns how many replies it placed.
   */
  async placeEveryReply(): Promise<number> {
    let placed = 0;
    const unplaced = { '_r._id': { $exists: true }, _rt: { $exists: false }, _o: { $exists: false } };
    for (;;) {
      const replies = (await this.content.find(unplaced, { projection: { _r: 1, _d: 1, _a: 1 } }).sort({ _d: 1, _id: 1 }).limit(1000).toArray()).map(placeOnly);
      if (replies.length === 0) return placed;
      const parents = new Map(
        (await this.content.find(byPostIds(replies.map((reply) => reply.replyTo!.id)), { projection: { _rt: 1, _an: 1, _tk: 1, _r: 1, _a: 1, _d: 1 } }).toArray()).map((doc) => [doc._id.toHexString(), placeOnly(doc)]),
      );
      const writes = replies.map((reply) => {
        const parentId = reply.replyTo!.id;
        const parent = parents.get(parentId.toHexString());
        const thread = threadPlace(parent ?? { id: parentId }, reply.id, reply.createdAt);
        // A reply of this batch answered by a later one of it: the later one finds its place here.
        parents.set(reply.id.toHexString(), { ...reply, thread });
        return { updateOne: { filter: { ...byPostId(reply.id), _rt: { $exists: false } }, update: { $set: { _rt: thread.root, _an: [...thread.ancestors], _tk: thread.key } } } };
      });
      await this.content.bulkWrite(writes, { ordered: false });
      placed += replies.length;
    }
  }

  /** Public quotes of a post that `visible` selects, newest first around a point: one indexed query. */
  async quotes(quotedId: PostRecord['id'], request: PageRequest, visible: Filter<ContentDocument>): Promise<Page<PostRecord>> {
    const beyond = beyondFilter<ContentDocument>(request.direction, request.from, '_d', '_id');
    const docs = await this.content
      .find({ $and: [{ '_q._id': quotedId, _o: { $exists: false }, ...publicOnly }, visible, beyond].filter((part) => Object.keys(part).length > 0) })
      .sort(sortFor(request.direction, '_d', '_id'))
      .limit(request.limit + 1)
      .toArray();
    return newestFirstPage(docs.map(toPostRecord), request);
  }
}
