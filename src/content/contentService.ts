/**
 * content/ owns posts, the system of record every timeline strategy reads or links back to: how
 * they are stored and paged (ContentService), looked up by id (PostLookups), listed (PostScans),
 * their authors' outboxes held in process (Outboxes), and their counts: likes and reposts
 * (Interactions), replies (ReplyCounts), each exactly once through PostCounters.
 */
import { ObjectId, type Collection, type Db, type Filter, type UpdateFilter } from 'mongodb';
import type { OutboxChange } from '../changes/staleness.js';
import { isDuplicateKeyError } from '../errors.js';
import {
  contentCollection,
  toStoredPost,
  tokensLeftOut,
  toPostRecord,
  byAuthors,
  byPostId,
  byPostIds,
  authorPlace,
  newPostId,
  postPlace,
  publicOnly,
  repostRecord,
  threadPlace,
  type PostBody,
  type ContentDocument,
  type PostRecord,
  type PostRef,
  type TombstoneDocument,
} from '../records/posts.js';
import { Outboxes } from './outboxes.js';
import { PostCounters } from './postCounters.js';
import { PostLookups } from './postLookups.js';
import { PostScans } from './postScans.js';
import { DiscoveryScans } from './discoveryScans.js';
import { beyondFilter, newestFirstPage, sortFor, type Page, type PageRequest } from './position.js';
import { ReplyCounts } from './replyCounts.js';
import { QuoteCounts } from './quoteCounts.js';
import { TextEdits } from './textEdits.js';
import { Threads } from './threads.js';
import { Pins } from './pins.js';
import { plannedCollection, plannedIndexes } from '../db/shardPlan.js';
import { everyEvent, type HeldScope } from '../changes/partitions.js';

/**
 * What a reader's inbox query covers: posts addressed to them (only asked when some ever were),
 * and the followers-only posts of these authors (followees who wrote any, and the reader).
 */
export interface InboxSources {
  readerId: string;
  addressed: boolean;
  followersOnlyAuthors: readonly string[];
}

/** The system of record for posts: writing, deleting, and paging by author. */
export class ContentService {
  readonly content: Collection<ContentDocument>;
  readonly counters: PostCounters;
  /** Posts by id (see PostLookups). */
  readonly lookups: PostLookups;
  /** Replies, reposts, an author's posts, every post (see PostScans). */
  readonly scans: PostScans;
  /** Posts by tag and by search tokens (see DiscoveryScans). */
  readonly discovery: DiscoveryScans;
  /** Reply counts and the tombstones of deleted posts (see ReplyCounts). */
  readonly replyCounts: ReplyCounts;
  /** Quote counts (see QuoteCounts). */
  readonly quoteCounts: QuoteCounts;
  /** Text edits and their history (see TextEdits). */
  readonly textEdits: TextEdits;
  /** Threads and quotes as lists (see Threads). */
  readonly threads: Threads;
  /** Authors' pinned posts (see Pins). */
  readonly pins: Pins;

  /** Authors' newest posts, for pages of one or many authors (see Outboxes). */
  private readonly outboxes: Outboxes;
  /** Whether some post sits in the place its id names rather than its author's (see `byAuthors`); known at start-up. */
  private spread = false;

  /** `scope`: the live events this instance reads, which decide what it may hold. */
  constructor(db: Db, scope: HeldScope = everyEvent) {
    this.content = plannedCollection<ContentDocument>(db, contentCollection);
    this.outboxes = new Outboxes(this.content, (authorIds) => this.byAuthors(authorIds));
    this.lookups = new PostLookups(this.content, plannedCollection<TombstoneDocument>(db, 'deleted_posts'), scope);
    this.counters = new PostCounters(this.content, this.lookups);
    this.scans = new PostScans(this.content, (authorIds) => this.byAuthors(authorIds));
    this.discovery = new DiscoveryScans(this.content);
    this.replyCounts = new ReplyCounts(this.content, plannedCollection<TombstoneDocument>(db, 'deleted_posts'), this.counters, this.lookups);
    this.quoteCounts = new QuoteCounts(this.content, plannedCollection<TombstoneDocument>(db, 'deleted_posts'), this.counters, this.lookups);
    this.textEdits = new TextEdits(this.content);
    this.threads = new Threads(this.content);
    this.pins = new Pins(db);
  }

  async ensureIndexes(): Promise<void> {
    // "Newest posts of these authors before this point": equality on _a, then the page order.
    await plannedIndexes(this.content, [
      { key: { _a: 1, _d: -1, _id: -1 }, name: 'author_newest_first' },
      // Only pulled posts: the one extra query a page makes for every pulled author a reader follows.
      { key: { _p: 1, _a: 1, _d: -1, _id: -1 }, name: 'pulled_newest_first', partialFilterExpression: { _p: true } },
      // The inbox: each reader's mentioned-only posts, newest first (multikey over the audience).
      { key: { _to: 1, _d: -1, _id: -1 }, name: 'inbox_newest_first', partialFilterExpression: { _to: { $exists: true } } },
      // Limited posts by author: followers-only posts of the authors a reader follows, an author's own.
      { key: { _v: 1, _a: 1, _d: -1, _id: -1 }, name: 'limited_newest_first', partialFilterExpression: { _v: { $exists: true } } },
    ]);
    await plannedIndexes(this.content, [
      // Replies of a post, oldest first.
      { key: { '_r._id': 1, _d: 1, _id: 1 }, name: 'replies_oldest_first', partialFilterExpression: { '_r._id': { $exists: true } } },
      // Who reposted a post: the at-most-once check of a timeline page, and deleting an original.
      { key: { '_o._id': 1, _a: 1 }, name: 'reposts_of', partialFilterExpression: { '_o._id': { $exists: true } } },
      // Reposts of an author's posts, for deleting an account.
      { key: { '_o._a': 1 }, name: 'reposts_of_author', partialFilterExpression: { '_o._a': { $exists: true } } },
      // Posts stored away from their authors' place: the start-up check reads this index, not the collection.
      { key: { sx: 1 }, name: 'away_from_author', partialFilterExpression: { sx: true } },
    ]);
    await this.replyCounts.ensureIndexes();
    await this.discovery.ensureIndexes();
    await this.quoteCounts.ensureIndexes();
    await this.threads.ensureIndexes();
  }

  /**
   * Builds the post without storing it, so that its fanout can be queued under the post's id
   * before the post exists (see Publishing.post). `body` is `newBody` of a text as `postText`
   * (content/text.ts) returned it: checked by the caller before anything else runs.
   */
  preparePost(authorId: string, body: PostBody, options: { pulled: boolean; replyTo?: PostRecord | null }): PostRecord {
    const replyTo = options.replyTo ? { id: options.replyTo.id, authorId: options.replyTo.authorId } : null;
    const id = newPostId(authorId);
    const createdAt = new Date();
    const post: PostRecord = { id, authorId, createdAt, pulled: options.pulled, replyTo, repostOf: null, counts: null, body };
    // A reply's place in its thread, from its parent's as read: no read more.
    return options.replyTo ? { ...post, thread: threadPlace(options.replyTo, id, createdAt) } : post;
  }

  /** A repost document of `original` by `reposterId`, under an id chosen by the caller (see Reposts). */
  prepareRepost(reposterId: string, original: PostRecord, at: { id: ObjectId; createdAt: Date }, options: { pulled: boolean }): PostRecord {
    return repostRecord(reposterId, original, at, options.pulled);
  }

  /**
   * Idempotent: storing the same post twice (a replayed repost) keeps the first. A public reply is
   * stored marked as not yet counted, then counted on its parent exactly once. Limited replies are
   * not counted: a count shown to everyone who sees the parent must not tell of posts they cannot see.
   */
  async storePost(post: PostRecord): Promise<void> {
    // An id from anywhere but `newPostId` would put the post where its author's pages never look.
    if (postPlace(post.id) !== authorPlace(post.authorId)) throw new Error(`post ${post.id.toHexString()} is not in the place of ${post.authorId}`);
    const doc = toStoredPost(post);
    const counted = post.replyTo !== null && post.body.visibility === 'PUBLIC';
    if (counted) doc._cq = true;
    const quoteCounted = post.body.quoteOf !== null && post.body.visibility === 'PUBLIC' && !post.repostOf;
    if (quoteCounted) doc._qc = true;
    let stored = true;
    try {
      await this.content.insertOne(doc);
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
      stored = false;
    }
    this.lookups.stored(post.id);
    this.outboxes.take(post);
    // A replay counts only a reply that is still marked as not yet counted.
    const uncounted = stored || (await this.content.countDocuments({ ...byPostId(post.id), _cq: true }, { limit: 1 })) > 0;
    if (counted && uncounted) await this.replyCounts.count(post.id, post.replyTo!.id);
    const quoteUncounted = quoteCounted && (stored || (await this.content.countDocuments({ ...byPostId(post.id), _qc: true }, { limit: 1 })) > 0);
    if (quoteUncounted) await this.quoteCounts.count(post.id, post.body.quoteOf!.id);
  }

  /**
   * True when this call removed the post. A tombstone is written first (ReplyCounts.recordDeletion),
   * so background work can tell a deleted post from one whose request has not stored it yet.
   */
  async deletePost({ id, authorId }: PostRef): Promise<boolean> {
    const { quoted } = await this.replyCounts.recordDeletion(id);
    const deleted = (await this.content.deleteOne(byPostId(id))).deletedCount === 1;
    this.lookups.forgetPosts([id]);
    // Also when another caller deleted it first: this process may hold it all the same.
    this.outboxes.drop(authorId, id);
    await this.replyCounts.uncountDeleted(id);
    if (quoted) await this.quoteCounts.uncountDeleted(id);
    return deleted;
  }

  /**
   * The account is gone, and its handle becomes free: the mentioned-only posts addressed to it are
   * not for whoever takes the handle next. Repeatable.
   */
  async leaveAudiences(handle: string): Promise<void> {
    for (;;) {
      const ids = (await this.content.find({ _to: handle }, { projection: { _id: 1 } }).limit(1000).toArray()).map((doc) => doc._id);
      if (ids.length === 0) return;
      await this.content.updateMany(byPostIds(ids), { $pull: { _to: handle } });
      this.lookups.forgetPosts(ids);
    }
  }

  /**
   * An image's alt text as it is now, into these posts' copies of it (a post and its reposts, which
   * carry its body): one update, by the ids the caller read. Held copies are the caller's to forget.
   */
  async setMediaAlt(postIds: readonly ObjectId[], mediaId: ObjectId, alt: string | null): Promise<void> {
    if (postIds.length === 0) return;
    const change: UpdateFilter<ContentDocument> = alt === null ? { $unset: { '_md.$[image].a': '' as const } } : { $set: { '_md.$[image].a': alt } };
    await this.content.updateMany(byPostIds(postIds), change, { arrayFilters: [{ 'image._id': mediaId }] });
  }

  /** The filter for these authors' posts (see `byAuthors` in records/posts.ts). */
  byAuthors(authorIds: readonly string[]): Filter<ContentDocument> {
    return byAuthors(authorIds, this.spread);
  }

  /**
   * Gives every post stored before posts carried their place (`s`) the place its id names, and
   * marks (`sx`) those whose author's place differs, so author pages know to ask every shard.
   * Idempotent, in batches: a start killed half-way resumes. Returns how many posts it placed.
   */
  async placeEveryPost(): Promise<number> {
    let placed = 0;
    for (;;) {
      const unplaced = await this.content.find({ s: { $exists: false } }, { projection: { _a: 1 } }).limit(1000).toArray();
      if (unplaced.length === 0) return placed;
      await this.content.bulkWrite(
        unplaced.map(({ _id, _a }) => {
          const s = postPlace(_id);
          return { updateOne: { filter: { _id, s: { $exists: false } }, update: { $set: s === authorPlace(_a) ? { s } : { s, sx: true as const } } } };
        }),
        { ordered: false },
      );
      placed += unplaced.length;
    }
  }

  /** Learns at start-up whether any post sits away from its author's place (see `placeEveryPost`). */
  async checkPlacement(): Promise<void> {
    this.spread = (await this.content.countDocuments({ sx: true }, { limit: 1 })) > 0;
  }

  /** A post, not a repost, as stored (see PostLookups for the other lookups by id). */
  getPost(id: ObjectId): Promise<PostRecord | null> {
    return this.lookups.getPost(id);
  }

  /** The posts this process holds by id (see PostLookups). */
  cacheStats() {
    return this.lookups.cacheStats();
  }

  forgetOutboxes(authorIds: Iterable<string>): void {
    this.outboxes.forget(authorIds);
  }

  /** Another instance's post change (or this one's, echoed): in place when it is known. */
  outboxesChanged(authorIds: Iterable<string>, change?: OutboxChange): void {
    if (!change) this.outboxes.forget(authorIds);
    else if ('added' in change) this.outboxes.take(change.added);
    else for (const authorId of authorIds) this.outboxes.drop(authorId, change.removed);
  }

  outboxStats() {
    return this.outboxes.stats();
  }

  /** A page of the public posts of one or many authors around a point in time, newest first. */
  async pageByAuthors(authorIds: readonly string[], request: PageRequest): Promise<Page<PostRecord>> {
    return (await this.outboxes.page(authorIds, request)) ?? this.page(authorIds, request, {});
  }

  /** The same, for the posts of these authors that are pulled rather than pushed. */
  pulledPageByAuthors(authorIds: readonly string[], request: PageRequest): Promise<Page<PostRecord>> {
    // A query, not the outboxes: a reader follows few pulled authors, and their outboxes would hold mostly pushed posts.
    return this.page(authorIds, request, { _p: true });
  }

  /**
   * The reader's inbox: the limited posts they may see, newest first around a point. Those
   * addressed to them (and their own mentioned-only posts) when `addressed`, and the followers-only
   * posts of `followersOnlyAuthors` (whom they follow now, and themselves). One query; none when
   * there is nothing to ask.
   */
  inboxPage(reader: InboxSources, request: PageRequest): Promise<Page<PostRecord>> {
    const clauses: Filter<ContentDocument>[] = [];
    if (reader.addressed) clauses.push({ _to: reader.readerId }, { ...this.byAuthors([reader.readerId]), _v: 'm' });
    if (reader.followersOnlyAuthors.length > 0) clauses.push({ _v: 'f', ...this.byAuthors(reader.followersOnlyAuthors) });
    return this.limitedPage(clauses, request);
  }

  /**
   * The limited posts of a list's members that its owner may see: the followers-only ones of
   * members who write them (the owner follows every member), and those addressed to the owner.
   */
  listInboxPage(
    ownerId: string,
    members: readonly string[],
    sources: { addressed: boolean; followersOnlyAuthors: readonly string[] },
    request: PageRequest,
  ): Promise<Page<PostRecord>> {
    const clauses: Filter<ContentDocument>[] = [];
    if (sources.followersOnlyAuthors.length > 0) clauses.push({ _v: 'f', ...this.byAuthors(sources.followersOnlyAuthors) });
    if (sources.addressed && members.length > 0) clauses.push({ _to: ownerId, ...this.byAuthors(members) });
    return this.limitedPage(clauses, request);
  }

  /**
   * The limited posts of one author that a viewer may see: all of them for the author; the
   * followers-only ones for a follower; those addressed to the viewer.
   */
  limitedPageBy(authorId: string, viewer: { id: string; follows: boolean; addressed: boolean }, request: PageRequest): Promise<Page<PostRecord>> {
    const author = this.byAuthors([authorId]);
    if (viewer.id === authorId) return this.limitedPage([{ ...author, _v: { $exists: true } }], request);
    const clauses: Filter<ContentDocument>[] = [];
    if (viewer.follows) clauses.push({ ...author, _v: 'f' });
    if (viewer.addressed) clauses.push({ ...author, _to: viewer.id });
    return this.limitedPage(clauses, request);
  }

  private limitedPage(clauses: Filter<ContentDocument>[], request: PageRequest): Promise<Page<PostRecord>> {
    if (clauses.length === 0) return Promise.resolve({ items: [], hasMore: false });
    return this.find(clauses.length === 1 ? clauses[0]! : { $or: clauses }, request);
  }

  private async page(authorIds: readonly string[], request: PageRequest, only: Filter<ContentDocument>): Promise<Page<PostRecord>> {
    if (authorIds.length === 0) return { items: [], hasMore: false };
    return this.find({ ...only, ...publicOnly, ...this.byAuthors(authorIds) }, request);
  }

  private async find(selection: Filter<ContentDocument>, request: PageRequest): Promise<Page<PostRecord>> {
    const beyond = beyondFilter<ContentDocument>(request.direction, request.from, '_d', '_id');
    const docs = await this.content
      .find(beyond.$or && selection.$or ? { $and: [selection, beyond] } : { ...selection, ...beyond }, { projection: tokensLeftOut })
      .sort(sortFor(request.direction, '_d', '_id'))
      .limit(request.limit + 1)
      .toArray();
    return newestFirstPage(docs.map(toPostRecord), request);
  }
}
