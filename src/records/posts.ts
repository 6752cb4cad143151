/**
 * records/ owns the shapes every layer shares, with no I/O and no service: posts (here) and users
 * (users.ts), as stored and as passed around, with their mappers. Services and the API import
 * these instead of each other's files.
 *
 * Posts as every layer sees them: the stored document (`content`, timeline entries, fanout tasks
 * and change events all carry this shape) and the record the services and the API pass around,
 * with the mappers between them. Types and pure functions only: no service, no I/O.
 */
import { createHash } from 'node:crypto';
import { ObjectId, type Filter } from 'mongodb';

export const maxPostLength = 500;

/**
 * Who may see a post: everyone; the author and whoever follows the author when reading; or the
 * author and the accounts the post mentioned when it was posted (its audience).
 */
export type Visibility = 'PUBLIC' | 'FOLLOWERS' | 'MENTIONED';

/** How each limited visibility is stored in `_v`; a public post has no `_v`. */
const storedVisibility = { FOLLOWERS: 'f', MENTIONED: 'm' } as const;
type StoredVisibility = (typeof storedVisibility)[keyof typeof storedVisibility];

/** Narrowest last: a reply is never more visible than the post it answers. */
const visibilityOrder: readonly Visibility[] = ['PUBLIC', 'FOLLOWERS', 'MENTIONED'];
export const narrowerVisibility = (a: Visibility, b: Visibility): Visibility =>
  visibilityOrder.indexOf(a) >= visibilityOrder.indexOf(b) ? a : b;

/** Another post, named by id and author: what a reply answers. */
export interface PostRefDocument {
  _id: ObjectId;
  _a: string;
}

/** The post a repost brings into timelines; the repost's `_m` is a copy of the original's text. */
export interface RepostOfDocument extends PostRefDocument {
  _d: Date;
  _r?: PostRefDocument;
}

/**
 * A post as stored: the reference layout's short field names, plus `_d`, the creation time.
 * A repost is a document of its own (author: the reposter, time: the repost), so every timeline
 * strategy carries reposts exactly as it carries posts: fanout, pull, refills and rebuilds alike.
 */
export interface ContentDocument {
  _id: ObjectId;
  /** The post's place on a sharded cluster (`postPlace`): its author's, read back from its id. Set in `content` only. */
  s?: number;
  /** Set on a post stored before ids carried their place, when its id's place is not its author's. */
  sx?: true;
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
  /** Reply to this post. */
  _r?: PostRefDocument;
  /** Repost of this post. */
  _o?: RepostOfDocument;
  /** Counts kept on the post (the counter service): likes, reposts, replies, and `v`, bumped by every change. Absent means 0. */
  n?: { l?: number; r?: number; y?: number; v?: number };
  /** Tokens of count changes under way (see PostCounters); empty or absent at rest. */
  pc?: string[];
  /** A reply not yet counted on its parent; cleared once it is. */
  _cq?: true;
  /**
   * Set on a limited post only: `f` followers of the author, `m` the accounts in `_to`. Limited
   * posts are never pulled, pushed or kept in outboxes; readers find them by the inbox query.
   */
  _v?: StoredVisibility;
  /** A mentioned-only post's audience, resolved to existing accounts when it was posted. */
  _to?: string[];
}

/** Public posts only: what outboxes, author pages and timelines hold. */
export const publicOnly = { _v: { $exists: false } } as const;

export interface PostRef {
  id: ObjectId;
  authorId: string;
}

export interface RepostOf extends PostRef {
  createdAt: Date;
  replyTo: PostRef | null;
}

export interface PostCounts {
  likes: number;
  reposts: number;
  replies: number;
  /** Grows with every change of the counts: of two copies, the higher is the newer. */
  version: number;
}

export interface PostRecord {
  id: ObjectId;
  authorId: string;
  /** For a repost, the original's text. */
  text: string;
  createdAt: Date;
  /** Delivered by pull at read time instead of by fanout. */
  pulled: boolean;
  replyTo: PostRef | null;
  /** Set on a repost: the post it brings into timelines. */
  repostOf: RepostOf | null;
  /** Null when the record did not come from `content` (an embedded entry, a live event). */
  counts: PostCounts | null;
  visibility: Visibility;
  /** Whom a MENTIONED post is for besides its author; empty for the other visibilities. */
  audience: readonly string[];
}

export const toRef = (doc: PostRefDocument | undefined): PostRef | null => (doc ? { id: doc._id, authorId: doc._a } : null);
export const fromRef = (ref: PostRef): PostRefDocument => ({ _id: ref.id, _a: ref.authorId });

/** A repost's stored original (the same in `content` and in timeline entries) as a record's. */
export const toRepostOf = (doc: RepostOfDocument | undefined): RepostOf | null =>
  doc ? { id: doc._id, authorId: doc._a, createdAt: doc._d, replyTo: toRef(doc._r) } : null;

export const toPostRecord = (doc: ContentDocument): PostRecord => ({
  id: doc._id,
  authorId: doc._a,
  text: doc._m,
  createdAt: doc._d,
  pulled: doc._p === true,
  replyTo: toRef(doc._r),
  repostOf: toRepostOf(doc._o),
  counts: toPostCounts(doc),
  ...toVisibility(doc),
});

export const toVisibility = (doc: Pick<ContentDocument, '_v' | '_to'>): Pick<PostRecord, 'visibility' | 'audience'> =>
  doc._v === 'f' ? { visibility: 'FOLLOWERS', audience: [] } : doc._v === 'm' ? { visibility: 'MENTIONED', audience: doc._to ?? [] } : publicVisibility;

/** `_v` and `_to` as stored, nothing for a public post. */
export function toStoredVisibility({ visibility, audience }: Pick<PostRecord, 'visibility' | 'audience'>): Pick<ContentDocument, '_v' | '_to'> {
  if (visibility === 'PUBLIC') return {};
  return visibility === 'MENTIONED' ? { _v: storedVisibility[visibility], _to: [...audience] } : { _v: storedVisibility[visibility] };
}

export const publicVisibility: Pick<PostRecord, 'visibility' | 'audience'> = { visibility: 'PUBLIC', audience: [] };

export const toPostCounts = (doc: Pick<ContentDocument, 'n'>): PostCounts => ({
  likes: Math.max(0, doc.n?.l ?? 0),
  reposts: Math.max(0, doc.n?.r ?? 0),
  replies: Math.max(0, doc.n?.y ?? 0),
  version: doc.n?.v ?? 0,
});

/** The stored shape of a post; also how fanout tasks and live events carry one. */
export function toContentDocument(post: Omit<PostRecord, 'counts'>): ContentDocument {
  const doc: ContentDocument = { _id: post.id, _a: post.authorId, _m: post.text, _d: post.createdAt };
  if (post.pulled) doc._p = true;
  Object.assign(doc, toStoredVisibility(post));
  if (post.replyTo) doc._r = fromRef(post.replyTo);
  if (post.repostOf) {
    const { id, authorId, createdAt, replyTo } = post.repostOf;
    doc._o = { _id: id, _a: authorId, _d: createdAt, ...(replyTo ? { _r: fromRef(replyTo) } : {}) };
  }
  return doc;
}

/** What a reader sees for a timeline item: the original for a repost, the post itself otherwise. */
export function shownPost(post: PostRecord): PostRecord {
  if (!post.repostOf) return post;
  const { id, authorId, createdAt, replyTo } = post.repostOf;
  return { id, authorId, createdAt, replyTo, text: post.text, pulled: false, repostOf: null, counts: null, ...publicVisibility };
}

/**
 * The one rule of who sees a post, given whom the viewer follows now (null: nobody signed in).
 * Reposts are public: only public posts can be reposted.
 */
export function visibleTo(
  post: { authorId: string; visibility?: Visibility; audience?: readonly string[] },
  viewerId: string | null,
  follows: (authorId: string) => boolean,
): boolean {
  switch (post.visibility ?? 'PUBLIC') {
    case 'PUBLIC':
      return true;
    case 'FOLLOWERS':
      return viewerId !== null && (viewerId === post.authorId || follows(post.authorId));
    case 'MENTIONED':
      return viewerId !== null && (viewerId === post.authorId || (post.audience ?? []).includes(viewerId));
  }
}

/** Whether the post reaches this reader by address (their inbox) rather than by following its author. */
export const addressedTo = (post: { visibility?: Visibility; audience?: readonly string[] }, viewerId: string): boolean =>
  post.visibility === 'MENTIONED' && (post.audience ?? []).includes(viewerId);

/** Parses a client-supplied post id; a malformed id names no post, so it yields null. */
export function parsePostId(id: string): ObjectId | null {
  return /^[0-9a-f]{24}$/i.test(id) ? new ObjectId(id) : null;
}

/**
 * Posts are placed on a sharded cluster by author, and an id tells where its post lives, so that
 * both ways to a post reach one shard: `content` is keyed `{ s, _id }`, where `s` is one of 4,096
 * places chosen by the author's handle and written into 12 bits of the post's id (an ObjectId
 * keeps its time first, so ids still sort by time). An author's page asks one place; a post, a
 * like's counter or a page of posts by id ask the places their ids name (Instagram's ids that
 * carry their shard). Ids minted before ids carried a place keep the place their bits name;
 * see `byAuthors` for how author pages still find those.
 */
const postPlaces = 4096;

/** The place of this author's posts. */
export function authorPlace(authorId: string): number {
  return createHash('sha1').update(authorId).digest().readUInt16BE(0) % postPlaces;
}

/** The place a post id names: the low 12 bits of its 5th and 6th bytes (the ObjectId's process-random part). */
export function postPlace(id: ObjectId): number {
  const bytes = id.id;
  return ((bytes[4]! << 8) | bytes[5]!) % postPlaces;
}

/**
 * A new post id in its author's place: a fresh ObjectId (time, random, counter) whose 12 bits of
 * random become the place. The counter still makes ids of one process unique, and the 28 random
 * bits left tell processes apart; a collision would be refused by the unique `_id`, never merged.
 */
export function newPostId(authorId: string): ObjectId {
  const bytes = Buffer.from(new ObjectId().id);
  const place = authorPlace(authorId);
  bytes[4] = (bytes[4]! & 0xf0) | (place >> 8);
  bytes[5] = place & 0xff;
  return new ObjectId(bytes);
}

/** A post as `content` stores it: its shape everywhere, plus its place. */
export const toStoredPost = (post: Omit<PostRecord, 'counts'>): ContentDocument => ({ ...toContentDocument(post), s: postPlace(post.id) });

/** The filter for one post by id: its place and its id. */
export const byPostId = (id: ObjectId): { s: number; _id: ObjectId } => ({ s: postPlace(id), _id: id });

/** The filter for posts by id: the places they name and their ids. */
export function byPostIds(ids: readonly ObjectId[]): Filter<ContentDocument> {
  const places = [...new Set(ids.map(postPlace))];
  return { s: places.length === 1 ? places[0]! : { $in: places }, _id: { $in: [...ids] } };
}

/**
 * The filter for the posts of these authors, in a page query and in an outbox load: their places
 * and their handles. A database that held posts before ids carried their place (`spread`, known at
 * start-up from the `post-places` migration) asks by handle alone, on every shard: its old posts
 * are where their ids say, not with their authors.
 */
export function byAuthors(authorIds: readonly string[], spread = false): Filter<ContentDocument> {
  const authors = authorIds.length === 1 ? { _a: authorIds[0]! } : { _a: { $in: [...authorIds] } };
  if (spread) return authors;
  const places = [...new Set(authorIds.map(authorPlace))];
  return { s: places.length === 1 ? places[0]! : { $in: places }, ...authors };
}

/**
 * An edge before its fields resolve: its cursor is encoded and `repostedBy` loaded only when asked
 * for (a client that pages by `pageInfo` alone makes none of the twenty cursors).
 */
export interface PostEdgeRecord {
  /** The timeline item, whose place the cursor marks: for a repost, the repost. */
  item: PostRecord;
  node: PostRecord;
  repostedById: string | null;
  /** Set for lists ordered by something else than the post's place (bookmarks); otherwise the item's timeline cursor. */
  cursor?: string;
}

/**
 * Kept a day after a post is deleted. `uncount` is the intent to take a deleted reply off its
 * parent's count, recorded before the reply is deleted; `applying` once someone has claimed it.
 */
export interface TombstoneDocument {
  _id: ObjectId;
  at: Date;
  uncount?: { p: ObjectId; state: 'pending' | 'applying'; at: Date };
}

/** Where a reader last read their timeline; `position` and `updatedAt` are null until they first mark it. */
export interface TimelineMarkerRecord {
  readerId: string;
  position: { createdAt: Date; id: ObjectId } | null;
  updatedAt: Date | null;
}
