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
import type { TimelineContentMode } from '../config.js';
import { fromStoredMedia, toStoredMedia, type MediaDescriptor, type StoredMedia } from './media.js';
import { mentionedHandles } from './mentions.js';
import { searchTokens } from './searchTokens.js';
import { postTags } from './tags.js';

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

/** The post a repost brings into timelines; the repost's body (`_m`, ...) is a copy of the original's. */
export interface RepostOfDocument extends PostRefDocument {
  _d: Date;
  _r?: PostRefDocument;
}

/** The collection of posts, the system of record; a post's insert there is also its announcement (changes/changeStreamEvents.ts). */
export const contentCollection = 'content';

/**
 * A post as stored: the reference layout's short field names, plus `_d`, the creation time.
 * A repost is a document of its own (author: the reposter, time: the repost), so every timeline
 * strategy carries reposts exactly as it carries posts: fanout, pull, refills and rebuilds alike.
 */
export interface ContentDocument extends StoredBody {
  _id: ObjectId;
  /** The post's place on a sharded cluster (`postPlace`): its author's, read back from its id. Set in `content` only. */
  s?: number;
  /** Set on a post stored before ids carried their place, when its id's place is not its author's. */
  sx?: true;
  /** Author handle. */
  _a: string;
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
  n?: { l?: number; r?: number; y?: number; q?: number; v?: number };
  /** Tokens of count changes under way (see PostCounters); empty or absent at rest. */
  pc?: string[];
  /** Tokens of suspensions whose like or repost these counts leave out until unsuspended (moderation/suspensions.ts). */
  sh?: string[];
  /** A reply not yet counted on its parent; cleared once it is. */
  _cq?: true;
  /**
   * What the post is found by: its search tokens and `#tag`s (records/searchTokens.ts), on posts
   * only, never reposts or timeline entries. Left out of every read but discovery's (`tokensLeftOut`).
   */
  _w?: string[];
  /** A public quote not yet counted on the post it quotes; cleared once it is. */
  _qc?: true;
  /** Earlier texts, newest first, at most `maxEditsKept`: each with the time of the edit that replaced it. */
  eh?: StoredEdit[];
  /** How many times the text was edited: the guard under which concurrent edits take turns. */
  ev?: number;
  /** On a reply: the root of its thread. */
  _rt?: ObjectId;
  /** On a reply: its nearest ancestors, root side first, the parent last; at most `maxAncestors`. */
  _an?: ObjectId[];
  /** On a reply: its place in the thread's reading order (see `threadPlace`). */
  _tk?: string;
}

/** An earlier text of a post: `m` the text, `e` when the edit that replaced it was made. */
export interface StoredEdit {
  m: string;
  e: Date;
}

/** Earlier texts kept per post. */
export const maxEditsKept = 50;
/** Ancestors a reply keeps, and `Post.ancestors` shows. */
export const maxAncestors = 50;

/**
 * Where a reply sits in its thread: the root, its nearest ancestors (root side first), and a key
 * that sorts the whole thread in reading order (depth first, each level oldest first): its
 * parent's key followed by its own segment, so a post's descendants are one range of keys.
 */
export interface ThreadPlace {
  root: ObjectId;
  ancestors: readonly ObjectId[];
  key: string;
}

/** A reply's segment of a thread key: its time (ms, 11 hex digits) then its id, so siblings sort oldest first. */
const threadSegment = (id: ObjectId, createdAt: Date): string => createdAt.getTime().toString(16).padStart(11, '0') + id.toHexString();

/** The place of a new reply to `parent` (a top-level post, or a reply stored before replies kept their place, starts a thread). */
export function threadPlace(parent: Pick<PostRecord, 'id' | 'thread'>, id: ObjectId, createdAt: Date): ThreadPlace {
  const segment = threadSegment(id, createdAt);
  if (!parent.thread) return { root: parent.id, ancestors: [parent.id], key: segment };
  return { root: parent.thread.root, ancestors: [...parent.thread.ancestors, parent.id].slice(-maxAncestors), key: parent.thread.key + segment };
}

/** Sorts after every key that starts with `key`: the end of a post's descendants' range. */
export const afterDescendants = (key: string): string => `${key}~`;

/**
 * A post's body as stored: in `content`, in embedded timeline entries (the same fields, so an
 * entry is a post's document less what a timeline has no use for) and in live events.
 */
export interface StoredBody {
  /** Message text. */
  _m: string;
  /**
   * The handles the text mentions, as parsed once when it was posted: present whenever the text
   * holds an `@` (empty when none of them is a mention). Absent with an `@` in the text only in
   * documents written before mentions were kept, whose mentions are parsed when read.
   */
  _mn?: string[];
  /**
   * Set on a limited post only: `f` followers of the author, `m` the accounts in `_to`. Limited
   * posts are never pulled, pushed or kept in outboxes; readers find them by the inbox query.
   */
  _v?: StoredVisibility;
  /** A mentioned-only post's audience, resolved to existing accounts when it was posted. */
  _to?: string[];
  /** The images, in the order the author gave them; absent when there are none. */
  _md?: StoredMedia[];
  /** The tags, as parsed once when it was posted: present whenever the text holds a `#` (as `_mn` for `@`). */
  _tg?: string[];
  /** The post this one quotes; absent on a post that quotes none. Never changes once posted. */
  _q?: PostRefDocument;
  /** When the text was last edited; absent until it first is. */
  _e?: Date;
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
  /** Public quotes. */
  quotes: number;
  /** Grows with every change of the counts: of two copies, the higher is the newer. */
  version: number;
}

/**
 * What a post says and whom it is for: one value, carried whole wherever a post goes (storage,
 * timeline entries, queued tasks, live events), so a field added here and to its stored form below
 * (`toStoredBody`, `fromStoredBody`) reaches every path at once. A repost carries its original's.
 */
export interface PostBody {
  text: string;
  /** The handles the text mentions, lowercased, each once (see records/mentions.ts). */
  mentions: readonly string[];
  visibility: Visibility;
  /** Whom a MENTIONED post is for besides its author; empty for the other visibilities. */
  audience: readonly string[];
  /** The images, never their bytes: what a page needs to show them (see records/media.ts). */
  media: readonly MediaDescriptor[];
  /** The tags the text holds, normalised, each once, at most 10 (see records/tags.ts). */
  tags: readonly string[];
  /** The post this one quotes, by id and author: a quote shows it as it is now, never a copy. */
  quoteOf: PostRef | null;
  /** When the text was last edited (see `editedBody`); null until it first is. */
  editedAt: Date | null;
}

/** Who may see a post, as a body says it. */
export type Audience = Pick<PostBody, 'visibility' | 'audience'>;

export interface PostRecord {
  id: ObjectId;
  authorId: string;
  createdAt: Date;
  /** Delivered by pull at read time instead of by fanout. */
  pulled: boolean;
  replyTo: PostRef | null;
  /** Set on a repost: the post it brings into timelines. */
  repostOf: RepostOf | null;
  /** Null when the record did not come from `content` (an embedded entry, a live event). */
  counts: PostCounts | null;
  /** For a repost, the original's. */
  body: PostBody;
  /** A reply's place in its thread, as stored; absent elsewhere (timeline entries, tasks, events). */
  thread?: ThreadPlace;
}

export const toRef = (doc: PostRefDocument | undefined): PostRef | null => (doc ? { id: doc._id, authorId: doc._a } : null);
export const fromRef = (ref: PostRef): PostRefDocument => ({ _id: ref.id, _a: ref.authorId });

/** A repost's stored original (the same in `content` and in timeline entries) as a record's. */
export const toRepostOf = (doc: RepostOfDocument | undefined): RepostOf | null =>
  doc ? { id: doc._id, authorId: doc._a, createdAt: doc._d, replyTo: toRef(doc._r) } : null;

export const toPostRecord = (doc: ContentDocument): PostRecord => ({
  id: doc._id,
  authorId: doc._a,
  createdAt: doc._d,
  pulled: doc._p === true,
  replyTo: toRef(doc._r),
  repostOf: toRepostOf(doc._o),
  counts: toPostCounts(doc),
  body: fromStoredBody(doc),
  ...(doc._rt && doc._tk !== undefined ? { thread: { root: doc._rt, ancestors: doc._an ?? [], key: doc._tk } } : {}),
});

const noMentions: readonly string[] = Object.freeze([]);
const noMedia: readonly MediaDescriptor[] = Object.freeze([]);

/**
 * A new post's body: its mentions parsed here, once, whom it is for and its images. `audience`
 * counts only for a MENTIONED post.
 */
export function newBody(
  text: string,
  shownTo: { visibility: Visibility; audience?: readonly string[] } = publicVisibility,
  media: readonly MediaDescriptor[] = noMedia,
  quoteOf: PostRef | null = null,
): PostBody {
  return {
    text,
    mentions: text.includes('@') ? mentionedHandles(text) : noMentions,
    visibility: shownTo.visibility,
    audience: shownTo.visibility === 'MENTIONED' ? [...(shownTo.audience ?? [])] : noMentions,
    media: media.length === 0 ? noMedia : [...media],
    tags: text.includes('#') ? postTags(text) : noMentions,
    quoteOf,
    editedAt: null,
  };
}

/**
 * The body after an edit of its text at `at`: only the text and what is parsed from it change.
 * Whom it is for (a MENTIONED post's audience, fixed when it was posted), its images and what it
 * quotes stay as they were.
 */
export const editedBody = (body: PostBody, text: string, at: Date): PostBody => ({
  ...body,
  text,
  mentions: text.includes('@') ? mentionedHandles(text) : noMentions,
  tags: text.includes('#') ? postTags(text) : noMentions,
  editedAt: at,
});

/** The stored fields an edit of the text changes: the text, its edit time and what is parsed from it. */
const textFields = ['_m', '_mn', '_tg', '_e'] as const satisfies readonly (keyof StoredBody)[];

/**
 * The update that puts an edited body's text into a stored copy of it: only the text's fields, so
 * an image's alt text changed meanwhile stays. `own`: the post's own document, which alone carries
 * the search tokens (never a repost's copy, never a timeline entry).
 */
export function textUpdate(body: PostBody, own: boolean): { $set: Record<string, unknown>; $unset: Record<string, ''> } {
  const stored: Partial<StoredBody> = toStoredBody(body);
  const $set: Record<string, unknown> = {};
  const $unset: Record<string, ''> = {};
  for (const field of textFields) {
    if (stored[field] === undefined) $unset[field] = '';
    else $set[field] = stored[field];
  }
  if (own) {
    const tokens = searchTokens(body.text, body.tags);
    if (tokens.length > 0) $set._w = tokens;
    else $unset._w = '';
  }
  return { $set, $unset };
}

/** A body as `content`, embedded entries and live events store it. */
export function toStoredBody(body: PostBody): StoredBody {
  const stored: StoredBody = { _m: body.text };
  if (body.text.includes('@')) stored._mn = [...body.mentions];
  Object.assign(stored, toStoredVisibility(body));
  if (body.media.length > 0) stored._md = body.media.map(toStoredMedia);
  if (body.text.includes('#')) stored._tg = [...body.tags];
  if (body.quoteOf) stored._q = fromRef(body.quoteOf);
  if (body.editedAt) stored._e = body.editedAt;
  return stored;
}

/** Every field of a stored body: a field added to StoredBody and not here fails to compile. */
const storedBodyFields = ['_m', '_mn', '_v', '_to', '_md', '_tg', '_q', '_e'] as const satisfies readonly (keyof StoredBody)[];
type Unlisted = Exclude<keyof StoredBody, (typeof storedBodyFields)[number]>;
const everyFieldListed: Unlisted extends never ? true : Unlisted = true;
void everyFieldListed;

/**
 * The update that puts `body` into the copy of a post at `path` (an embedded entry matched by the
 * positional `$`, say): every stored field set, or unset when the body has none of it.
 */
export function bodyUpdate(body: PostBody, path: string): { $set: Record<string, unknown>; $unset?: Record<string, ''> } {
  const stored: Partial<StoredBody> = toStoredBody(body);
  const $set: Record<string, unknown> = {};
  const $unset: Record<string, ''> = {};
  for (const field of storedBodyFields) {
    if (stored[field] === undefined) $unset[`${path}${field}`] = '';
    else $set[`${path}${field}`] = stored[field];
  }
  return Object.keys($unset).length > 0 ? { $set, $unset } : { $set };
}

/** The fields of a stored body that can change once posted: the images' alt text, the text and what is parsed from it. */
export type EditableBody = Pick<StoredBody, '_md' | '_m' | '_e' | '_tg'>;
export const editableBodyFields = { _md: 1, _m: 1, _e: 1, _tg: 1 } as const;

/** Whether two stored forms of one post's body say the same (the fields that can change once posted). */
export const sameEditableBody = (a: EditableBody, b: EditableBody): boolean =>
  a._m === b._m && (a._e?.getTime() ?? 0) === (b._e?.getTime() ?? 0) && JSON.stringify(a._md ?? []) === JSON.stringify(b._md ?? []);

/** A projection of posts without their bodies, for reads that need only where posts are (see `placeOnly`). */
export const bodyLeftOut = { _m: 0, _mn: 0, _md: 0, _tg: 0, _w: 0, _q: 0, _e: 0 } as const;

/** The projection every read of whole posts uses: a post's search tokens are for the index, not for pages. */
export const tokensLeftOut = { _w: 0 } as const;

/** A post read with `bodyLeftOut`: its place and references, an empty body. */
export const placeOnly = (doc: Omit<ContentDocument, keyof StoredBody>): PostRecord => toPostRecord({ ...doc, _m: '' });

/** The body of a stored post, entry or event. */
export function fromStoredBody(doc: StoredBody): PostBody {
  return {
    text: doc._m,
    // Documents written before mentions were kept have none stored: parsed from their text.
    mentions: doc._mn ?? (doc._m.includes('@') ? mentionedHandles(doc._m) : noMentions),
    ...toVisibility(doc),
    media: doc._md ? doc._md.map(fromStoredMedia) : noMedia,
    // As for mentions: documents written before tags were kept are parsed when read.
    tags: doc._tg ?? (doc._m.includes('#') ? postTags(doc._m) : noMentions),
    quoteOf: toRef(doc._q),
    editedAt: doc._e ?? null,
  };
}

export const toVisibility = (doc: Pick<StoredBody, '_v' | '_to'>): Audience =>
  doc._v === 'f' ? { visibility: 'FOLLOWERS', audience: noMentions } : doc._v === 'm' ? { visibility: 'MENTIONED', audience: doc._to ?? noMentions } : publicVisibility;

/** `_v` and `_to` as stored, nothing for a public post. */
export function toStoredVisibility({ visibility, audience }: Audience): Pick<StoredBody, '_v' | '_to'> {
  if (visibility === 'PUBLIC') return {};
  return visibility === 'MENTIONED' ? { _v: storedVisibility[visibility], _to: [...audience] } : { _v: storedVisibility[visibility] };
}

export const publicVisibility: Audience = { visibility: 'PUBLIC', audience: noMentions };

export const toPostCounts = (doc: Pick<ContentDocument, 'n'>): PostCounts => ({
  likes: Math.max(0, doc.n?.l ?? 0),
  reposts: Math.max(0, doc.n?.r ?? 0),
  replies: Math.max(0, doc.n?.y ?? 0),
  quotes: Math.max(0, doc.n?.q ?? 0),
  version: doc.n?.v ?? 0,
});

/** The stored shape of a post; also how live events carry one. */
export function toContentDocument(post: Omit<PostRecord, 'counts'>): ContentDocument {
  const doc: ContentDocument = { _id: post.id, _a: post.authorId, _d: post.createdAt, ...toStoredBody(post.body) };
  if (post.pulled) doc._p = true;
  if (post.replyTo) doc._r = fromRef(post.replyTo);
  if (post.repostOf) doc._o = toRepostOfDocument(post.repostOf);
  if (post.thread) Object.assign(doc, { _rt: post.thread.root, _an: [...post.thread.ancestors], _tk: post.thread.key });
  return doc;
}

const toRepostOfDocument = ({ id, authorId, createdAt, replyTo }: RepostOf): RepostOfDocument => ({
  _id: id,
  _a: authorId,
  _d: createdAt,
  ...(replyTo ? { _r: fromRef(replyTo) } : {}),
});

/** What a reader sees for a timeline item: the original for a repost, the post itself otherwise. */
export function shownPost(post: PostRecord): PostRecord {
  if (!post.repostOf) return post;
  const { id, authorId, createdAt, replyTo } = post.repostOf;
  return { id, authorId, createdAt, replyTo, pulled: false, repostOf: null, counts: null, body: post.body };
}

/**
 * A repost of `original` by `reposterId`: its own place (id, time) in timelines, the original's
 * body. Reposts are public: only public posts can be reposted.
 */
export function repostRecord(reposterId: string, original: PostRecord, at: { id: ObjectId; createdAt: Date }, pulled: boolean): PostRecord {
  const { authorId, createdAt, replyTo } = original;
  return {
    id: at.id,
    authorId: reposterId,
    createdAt: at.createdAt,
    pulled,
    replyTo: null,
    repostOf: { id: original.id, authorId, createdAt, replyTo },
    counts: null,
    body: original.body,
  };
}

/**
 * One post as a timeline holds it: its place (id, time), author, what it replies to or reposts,
 * and its body, which is null when the strategy links to `content` instead of embedding it (the
 * API then loads the page's posts in one batched query). A record of `content` is an entry too.
 */
export interface TimelineEntry {
  id: ObjectId;
  createdAt: Date;
  /** The author, or for a repost the reposter. */
  authorId: string;
  replyTo: PostRef | null;
  repostOf: RepostOf | null;
  body: PostBody | null;
}

/**
 * One post inside a materialized timeline: the reference layout (`_id` post id, `_a` author, the
 * body's `_m` message and its other fields only when embedding) plus `_d`, the creation time,
 * because pages are cut and cursors made by (time, id) without touching `content`. Timelines hold
 * public posts only, so an embedded body never has `_v` or `_to`.
 */
export interface EntryDocument extends Partial<StoredBody> {
  _id: ObjectId;
  _a: string;
  _d: Date;
  /** As in `content`: the post replied to, the post reposted. Small, so both modes keep them. */
  _r?: PostRefDocument;
  _o?: RepostOfDocument;
}

export function toEntryDocument(post: PostRecord, mode: TimelineContentMode): EntryDocument {
  const entry: EntryDocument = { _id: post.id, _a: post.authorId, _d: post.createdAt };
  if (mode === 'embed') Object.assign(entry, toStoredBody(post.body));
  if (post.replyTo) entry._r = fromRef(post.replyTo);
  if (post.repostOf) entry._o = toRepostOfDocument(post.repostOf);
  return entry;
}

export function fromEntryDocument(entry: EntryDocument): TimelineEntry {
  return {
    id: entry._id,
    authorId: entry._a,
    createdAt: entry._d,
    replyTo: toRef(entry._r),
    repostOf: toRepostOf(entry._o),
    body: entry._m === undefined ? null : fromStoredBody(entry as StoredBody),
  };
}

/**
 * The post an entry shows, with `body` from the entry or, for a linked one, from its post (a
 * linked repost's from its original). Built field by field: a spread of the entry cost a
 * measurable share of a page (CPU profile).
 */
export const entryPost = (entry: TimelineEntry, body: PostBody): PostRecord => ({
  id: entry.id,
  authorId: entry.authorId,
  createdAt: entry.createdAt,
  pulled: false,
  replyTo: entry.replyTo,
  repostOf: entry.repostOf,
  counts: null,
  body,
});

/**
 * A public post as a queued task carries it (fanout: deliver, retract, rewrite): enough to write
 * embedded entries without reading `content`.
 */
export interface PostTask {
  id: ObjectId;
  authorId: string;
  createdAt: Date;
  replyTo?: PostRef | null;
  repostOf?: RepostOf | null;
  /** Absent from tasks queued before posts had a body: those carry `text`. */
  body?: PostBody;
  text?: string;
}

export const toPostTask = ({ id, authorId, createdAt, replyTo, repostOf, body }: PostRecord): PostTask => ({ id, authorId, createdAt, replyTo, repostOf, body });

export const fromPostTask = (task: PostTask): PostRecord => ({
  id: task.id,
  authorId: task.authorId,
  createdAt: task.createdAt,
  pulled: false,
  replyTo: task.replyTo ?? null,
  repostOf: task.repostOf ?? null,
  counts: null,
  // Tasks queued before bodies had quotes and edits carry neither.
  body: task.body ? { ...task.body, quoteOf: task.body.quoteOf ?? null, editedAt: task.body.editedAt ?? null } : newBody(task.text ?? ''),
});

/** A post as a live event carries it: its stored form, counts and its place in a thread left out (they are read apart). */
export const toAnnouncedPost = ({ thread: _thread, ...post }: PostRecord): ContentDocument => toContentDocument(post);
export const fromAnnouncedPost = (doc: ContentDocument): PostRecord => ({ ...toPostRecord(doc), counts: null });

/**
 * The one rule of who sees a post, given whom the viewer follows now (null: nobody signed in).
 * `shownTo` is the post's body, or what an event says of it; none (a linked timeline entry, which
 * timelines hold only of public posts) is public. Reposts are public: only public posts can be reposted.
 */
export function visibleTo(
  authorId: string,
  shownTo: Audience | null | undefined,
  viewerId: string | null,
  follows: (authorId: string) => boolean,
): boolean {
  switch (shownTo?.visibility ?? 'PUBLIC') {
    case 'PUBLIC':
      return true;
    case 'FOLLOWERS':
      return viewerId !== null && (viewerId === authorId || follows(authorId));
    case 'MENTIONED':
      return viewerId !== null && (viewerId === authorId || shownTo!.audience.includes(viewerId));
  }
}

/** Whether the post reaches this reader by address (their inbox) rather than by following its author. */
export const addressedTo = (shownTo: Audience | null | undefined, viewerId: string): boolean =>
  shownTo?.visibility === 'MENTIONED' && shownTo.audience.includes(viewerId);

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
export function toStoredPost(post: Omit<PostRecord, 'counts'>): ContentDocument {
  const doc: ContentDocument = { ...toContentDocument(post), s: postPlace(post.id) };
  // A repost carries its original's body but is found through the original, never twice.
  if (!post.repostOf) {
    const tokens = searchTokens(post.body.text, post.body.tags);
    if (tokens.length > 0) doc._w = tokens;
  }
  return doc;
}

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
  /** The same for a deleted public quote: the intent to take it off its quoted post's count. */
  unquote?: { p: ObjectId; state: 'pending' | 'applying'; at: Date };
}

/** Where a reader last read their timeline; `position` and `updatedAt` are null until they first mark it. */
export interface TimelineMarkerRecord {
  readerId: string;
  position: { createdAt: Date; id: ObjectId } | null;
  updatedAt: Date | null;
}
