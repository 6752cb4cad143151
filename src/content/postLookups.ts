import { LRUCache } from 'lru-cache';
import { ObjectId, type Collection } from 'mongodb';
import { ReadThroughCache } from '../cache/readThrough.js';
import { RecentRemovals } from '../cache/recentRemovals.js';
import { heldCaches } from '../config.js';
import { everyEvent, type HeldScope } from '../changes/partitions.js';
import { byPostId, byPostIds, tokensLeftOut, toPostCounts, toPostRecord, type ContentDocument, type PostCounts, type PostRecord, type EditableBody, editableBodyFields, type TombstoneDocument } from '../records/posts.js';

/** Posts this process remembers having stored, for `storedOnce`: a worker delivers most within a second. */
const storedHereMax = 10_000;
const storedHereMs = 60_000;

/** Posts by id: one or many, through the in-process tier or not, with their counts apart. */
export class PostLookups {
  /**
   * Posts held in this process for linked timeline entries, `post(id)`, `replyTo` and quoted posts (see
   * ReadThroughCache), without counts: a deletion forgets one (here at once, elsewhere through the
   * `postRemoved` change event), an edit of its text is taken in place (`postEdited`), an alt text change
   * forgets it. Counts change all the time and are read apart (`countsOf`).
   */
  private readonly postCache = new ReadThroughCache<string, PostRecord>('posts', heldCaches.posts);
  /** Counts by hex post id (see `countsOf`). */
  private readonly heldCounts: ReadThroughCache<string, PostCounts>;
  /** Posts deleted lately: a page that still showed one must not bring it back into the tier (see `hold`). */
  private readonly removedLately = new RecentRemovals(heldCaches.posts.ttlMs);
  /** Posts this process stored lately, by hex id (see `storedOnce`). */
  private readonly storedHere = new LRUCache<string, true>({ max: storedHereMax, ttl: storedHereMs });
  /** Posts a read of `postsWithCounts` found gone: stored once, so deleted, and never back. */
  private readonly foundGone = new RecentRemovals(heldCaches.posts.ttlMs);

  constructor(
    private readonly content: Collection<ContentDocument>,
    private readonly tombstones: Collection<TombstoneDocument>,
    scope: HeldScope = everyEvent,
  ) {
    const { max, ttlMs, ttlMsInGroups } = heldCaches.postCounts;
    // A like announced to another instance group is not heard here: counts are trusted briefly.
    this.heldCounts = new ReadThroughCache('post counts', { max, ttlMs: scope.readsEverything ? ttlMs : ttlMsInGroups });
  }

  async exists(id: ObjectId): Promise<boolean> {
    return (await this.content.countDocuments(byPostId(id), { limit: 1 })) > 0;
  }

  /** Which of these posts are stored, as hex ids: one query for many. */
  async existing(ids: readonly ObjectId[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const docs = await this.content.find(byPostIds(ids), { projection: { _id: 1 } }).toArray();
    return new Set(docs.map((doc) => doc._id.toHexString()));
  }

  /** The post was stored by this process (or found stored by a replay of its store). */
  stored(id: ObjectId): void {
    this.storedHere.set(id.toHexString(), true);
  }

  /**
   * Which of these posts were stored at some time, as hex ids: those this process stored lately
   * without a query, the others by one. One deleted since counts too: for a delivery, which checks
   * again after it writes (a deletion may come at any time before that check anyway).
   */
  async storedOnce(ids: readonly ObjectId[]): Promise<Set<string>> {
    const found = new Set<string>();
    const unknown: ObjectId[] = [];
    for (const id of ids) {
      const hex = id.toHexString();
      if (this.storedHere.has(hex)) found.add(hex);
      else unknown.push(id);
    }
    if (unknown.length > 0) for (const hex of await this.existing(unknown)) found.add(hex);
    return found;
  }

  /**
   * Which of these posts are stored, with the part of their body that can change once posted (the
   * images' alt text, the text), by hex id: one query, as `existing`, for checking a delivery against edits.
   */
  async editableBodies(ids: readonly ObjectId[]): Promise<Map<string, EditableBody>> {
    if (ids.length === 0) return new Map();
    const docs = await this.content.find(byPostIds(ids), { projection: editableBodyFields }).toArray();
    return new Map(docs.map((doc) => [doc._id.toHexString(), doc]));
  }

  /** A post, not a repost: reposts have no id of their own in the API. */
  async getPost(id: ObjectId): Promise<PostRecord | null> {
    const doc = await this.content.findOne({ ...byPostId(id), _o: { $exists: false } }, { projection: tokensLeftOut });
    return doc && toPostRecord(doc);
  }

  /** A post or a repost. */
  async getEntry(id: ObjectId): Promise<PostRecord | null> {
    const doc = await this.content.findOne(byPostId(id), { projection: tokensLeftOut });
    return doc && toPostRecord(doc);
  }

  /** One query for any number of ids; missing posts are simply absent from the result. */
  async getPosts(ids: readonly ObjectId[]): Promise<PostRecord[]> {
    if (ids.length === 0) return [];
    const docs = await this.content.find(byPostIds(ids), { projection: tokensLeftOut }).toArray();
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
    for (const id of ids) this.removedLately.remember(id);
    this.postCache.invalidate(ids.map((id) => id.toHexString()));
    this.heldCounts.invalidate(ids.map((id) => id.toHexString()));
  }

  /**
   * A post's text was edited: the held post and held reposts of it take the edited body in place,
   * unless what they hold is a later edit (announcements can arrive out of order); their counts
   * stay. Pages do not hold their embedded copies of them for a while, as after a deletion: an
   * entry may still carry the text from before the edit until its rewrite runs.
   */
  postEdited(post: PostRecord, repostIds: readonly ObjectId[]): void {
    const editedAt = post.body.editedAt?.getTime() ?? 0;
    const newer = (held: PostRecord) => (held.body.editedAt?.getTime() ?? 0) < editedAt;
    for (const id of [post.id, ...repostIds]) this.removedLately.remember(id);
    this.postCache.update(post.id.toHexString(), (held) => (newer(held) ? { ...post, counts: null } : held));
    for (const id of repostIds) this.postCache.update(id.toHexString(), (held) => (newer(held) ? { ...held, body: post.body } : held));
  }

  /**
   * Public posts a page showed from its timeline's embedded entries, held so that liking or
   * reposting one of them reads nothing; one deleted lately is not taken back in.
   */
  hold(posts: readonly PostRecord[]): void {
    for (const post of posts) {
      if (post.body.visibility !== 'PUBLIC' || this.removedLately.includes(post)) continue;
      this.postCache.hold(post.id.toHexString(), post.counts === null ? post : { ...post, counts: null });
    }
  }

  /**
   * Current like, repost and reply counts of these posts, by hex id, through the in-process tier
   * (Weibo's counter cache): one query for those not held; missing posts are absent. Every change
   * of a post's counts is announced with the counts it left, which each instance takes in place.
   */
  async countsOf(ids: readonly ObjectId[]): Promise<Map<string, PostCounts>> {
    if (ids.length === 0) return new Map();
    return this.heldCounts.getMany(
      ids.map((id) => id.toHexString()),
      async (missing) => {
        const docs = await this.content.find(byPostIds(missing.map((hex) => new ObjectId(hex))), { projection: { n: 1 } }).toArray();
        return new Map(docs.map((doc) => [doc._id.toHexString(), toPostCounts(doc)]));
      },
    );
  }

  /**
   * Posts through the tier of posts and counts through the tier of counts, for one page at once:
   * what either tier misses is read in one query, so the posts a page shows beside its own (the
   * quoted ones) cost no query more than the page's counts do. For posts known to have been stored
   * (a quoted post existed when it was quoted): one the read finds gone was deleted, never comes
   * back, and is not asked for again while it is remembered.
   */
  async postsWithCounts(postIds: readonly ObjectId[], countIds: readonly ObjectId[]): Promise<{ posts: Map<string, PostRecord>; counts: Map<string, PostCounts> }> {
    let wanted: string[] = [];
    let read: Promise<Map<string, ContentDocument>> | undefined;
    // Both tiers name what they miss as they are called; the read starts once both have.
    const readWith = (missing: string[]) => {
      read ??= Promise.resolve().then(async () => {
        const ids = [...new Set(wanted)].map((hex) => new ObjectId(hex));
        [wanted, read] = [[], undefined];
        const docs = await this.content.find(byPostIds(ids), { projection: tokensLeftOut }).toArray();
        return new Map(docs.map((doc) => [doc._id.toHexString(), doc]));
      });
      wanted.push(...missing);
      return read;
    };
    const known = (hex: string) => !this.foundGone.includes({ id: new ObjectId(hex), repostOf: null });
    const [posts, counts] = await Promise.all([
      this.postCache.getMany(postIds.map((id) => id.toHexString()).filter(known), async (missing) => {
        const docs = await readWith(missing);
        const found = new Map<string, PostRecord>();
        for (const hex of missing) {
          const doc = docs.get(hex);
          if (doc) found.set(hex, { ...toPostRecord(doc), counts: null });
          else this.foundGone.remember(new ObjectId(hex));
        }
        return found;
      }),
      this.heldCounts.getMany(countIds.map((id) => id.toHexString()).filter(known), async (missing) => {
        const docs = await readWith(missing);
        return new Map(missing.flatMap((hex) => { const doc = docs.get(hex); return doc ? [[hex, toPostCounts(doc)] as const] : []; }));
      }),
    ]);
    return { posts, counts };
  }

  /**
   * A post's counts as a change left them: held from now on, unless what is held is newer. With
   * none (they changed, and how is not known), what is held goes.
   */
  countsChanged(postId: ObjectId, counts: PostCounts | null): void {
    const hex = postId.toHexString();
    if (counts === null) return this.heldCounts.invalidate([hex]);
    this.heldCounts.update(hex, (held) => (held.version >= counts.version ? held : counts));
    this.heldCounts.hold(hex, counts);
  }

  cacheStats() {
    return this.postCache.stats();
  }

  /** Whether a post was deleted within the last day (its tombstone), as opposed to not stored yet. */
  async wasDeleted(id: ObjectId): Promise<boolean> {
    return (await this.tombstones.countDocuments({ _id: id }, { limit: 1 })) > 0;
  }
}
