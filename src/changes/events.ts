/**
 * The change bus's vocabulary: event types, their builders, and the interfaces of a source and a
 * publisher. Types and pure functions only, no I/O (see bus.ts for the bus itself).
 */
import type { ObjectId } from 'mongodb';
import type { LiveEventMode } from '../config.js';
import type { Logger } from '../logger.js';
import type { NotificationRecord } from '../records/notifications.js';
import type { PostCounts, PostRecord, PostRef, Visibility } from '../records/posts.js';
import type { UserCounts } from '../records/users.js';

/**
 * Each published only after the change is stored. `followed`/`unfollowed` change which authors a
 * viewer's open subscriptions show; the post events are what those subscriptions deliver. Delete
 * events carry the author, so a subscriber can tell whether the deleted post was in its timeline
 * without reading anything. A mentioned-only post's events reach its audience as well as its
 * author's followers, and each subscriber's visibility rules decide.
 */
export type ChangeEvent =
  | { kind: 'postAdded'; post: PostRecord }
  | {
      kind: 'postRemoved';
      postId: ObjectId;
      authorId: string;
      originalAuthorId: string | null;
      /** The post a reply answered: its reply count changed. */
      replyToId?: ObjectId;
      /** A mentioned-only post's removal is news to its audience, who may not follow its author. */
      visibility: Visibility;
      audience: readonly string[];
      /** A public post's tags: its removal is news to whoever follows one of them. Absent when none. */
      tags?: readonly string[];
    }
  | PostEditedEvent
  | FollowEvent
  | NotificationAddedEvent
  | CountedEvent
  | ({ kind: 'changed' } & StoredChange);

export type ChangeKind = ChangeEvent['kind'];

/**
 * A stored post's body changed (its text, an image's alt text), and with it its reposts' copies:
 * every instance takes an edited text in place in what it holds of them, and forgets them after an
 * alt text change, for pages to read again. Timelines' embedded copies are rewritten through the
 * queue, which announces those timelines as it goes.
 */
export interface PostEditedEvent {
  kind: 'postEdited';
  post: PostRef;
  reposts: readonly PostRef[];
  /** Whom a mentioned-only post is addressed to: their live subscriptions hear of the edit too. */
  audience?: readonly string[];
  /** The post as a text edit left it (its `editedAt` orders edits); absent for an alt text change. */
  edited?: PostRecord;
}

export const postEdited = (post: PostRef, reposts: readonly PostRef[], audience: readonly string[] = [], edited?: PostRecord): PostEditedEvent => ({
  kind: 'postEdited',
  post,
  reposts,
  ...(audience.length > 0 ? { audience } : {}),
  ...(edited ? { edited } : {}),
});

/**
 * Records that changed outside follows and posts, for every instance's in-process tier to forget:
 * users (deleted, now pulling, their pinned posts), readers' filters (mutes, blocks, keywords; `allFilters` when a
 * deleted account left many lists), and the cache strategy's timelines (every write to one).
 */
export interface StoredChange {
  users: string[];
  filters: string[];
  allFilters: boolean;
  timelines: string[];
  /** Owners whose lists changed (created, renamed, deleted, members added or removed). */
  lists: string[];
  /** What the change to `timelines` was, when it is known: held copies take it in place. */
  edits?: TimelineEdits;
}

/**
 * Known edits of timelines: posts delivered to readers (the fanout's capped pushes), and posts
 * taken out, which a delivery announced later must not bring back into a held copy.
 */
export interface TimelineEdits {
  delivered?: readonly { recipients: readonly string[]; posts: readonly PostRecord[] }[];
  removed?: readonly ObjectId[];
}

/** Part of a StoredChange: what is not named did not change. */
export type ChangeParts = { [K in keyof StoredChange]?: Readonly<StoredChange[K]> };

/** A change with nothing left out: what is not named did not change. */
export function fullChange(change: ChangeParts): StoredChange {
  return {
    users: [...(change.users ?? [])],
    filters: [...(change.filters ?? [])],
    allFilters: change.allFilters ?? false,
    timelines: [...(change.timelines ?? [])],
    lists: [...(change.lists ?? [])],
    ...(change.edits ? { edits: change.edits } : {}),
  };
}

/** A notification made, or a group that an actor joined, as it is now: its recipient's subscriptions send it. */
export interface NotificationAddedEvent {
  kind: 'notificationAdded';
  notification: NotificationRecord;
}

export const notificationAdded = (notification: NotificationRecord): NotificationAddedEvent => ({ kind: 'notificationAdded', notification });

/** A viewer's state of a post that pages show: liked, reposted, bookmarked. */
export type ViewerState = 'like' | 'repost' | 'bookmark';

/**
 * A post's counts or a viewer's state of it changed: a like, a repost, a bookmark, or one taken
 * back. Every instance takes the counts in place (by their version) and forgets the viewer's state.
 */
export interface CountedEvent {
  kind: 'counted';
  postId: ObjectId;
  /** The post's counts as the change left them. */
  counts?: PostCounts;
  /** The counts changed, and how is not known (a change finished after a crash): held ones go. */
  countsStale?: true;
  viewer?: { id: string; state: ViewerState };
}

/** `counts`: as the change left them; `'stale'`: changed, to be read again; null: unchanged. */
export const counted = (postId: ObjectId, counts: PostCounts | 'stale' | null, viewer?: CountedEvent['viewer']): CountedEvent => ({
  kind: 'counted',
  postId,
  ...(counts === 'stale' ? { countsStale: true as const } : counts ? { counts } : {}),
  ...(viewer ? { viewer } : {}),
});

export type PostAddedEvent = Extract<ChangeEvent, { kind: 'postAdded' }>;
export type PostRemovedEvent = Extract<ChangeEvent, { kind: 'postRemoved' }>;

export const postAdded = (post: PostRecord): PostAddedEvent => ({ kind: 'postAdded', post });

/** Clients know a repost by its original's id, which is what they must remove. */
export function postRemoved(post: PostRecord): PostRemovedEvent {
  const { repostOf, replyTo } = post;
  const { visibility, audience } = post.body;
  return {
    kind: 'postRemoved',
    postId: repostOf?.id ?? post.id,
    authorId: post.authorId,
    originalAuthorId: repostOf?.authorId ?? null,
    visibility,
    audience,
    ...(replyTo && !repostOf ? { replyToId: replyTo.id } : {}),
    ...(!repostOf && visibility === 'PUBLIC' && post.body.tags.length > 0 ? { tags: post.body.tags } : {}),
  };
}

/**
 * A follow or unfollow. `counts`: both users' counts as this change left them, so instances that
 * hold either user update it in place instead of reading it again; a user missing from it (a
 * replay after a crash does not know them) is forgotten.
 */
export interface FollowEvent {
  kind: 'followed' | 'unfollowed';
  followerId: string;
  followeeId: string;
  /** Absent in an event an older version announced. */
  counts?: readonly UserCounts[];
}

export const followChange = (following: boolean, followerId: string, followeeId: string, counts: readonly UserCounts[] = []): FollowEvent => ({
  kind: following ? 'followed' : 'unfollowed',
  followerId,
  followeeId,
  counts,
});

export const changed = (change: ChangeParts): ChangeEvent => ({ kind: 'changed', ...fullChange(change) });

export type ChangeListener = (event: ChangeEvent) => void;

/**
 * What a service needs to announce a stored change. Publishing never fails the caller: the change
 * is kept already, and a lost event is logged (see ChangeBus.publish).
 */
export interface ChangePublisher {
  /** Several events of one change go in one write (one insert of several documents). */
  publish(event: ChangeEvent | readonly ChangeEvent[]): Promise<void>;
  /**
   * The events of a change whose last write can carry them: `write` makes that write with
   * `carried` set as the field `an` of the document it updates (absent when the transport carries
   * nothing that way), and the events are heard once it is made. A failed write announces nothing.
   */
  publishWithin(events: readonly ChangeEvent[], write: (carried: CarriedEvents | undefined) => Promise<void>): Promise<void>;
}

/**
 * Events stored in the write of the change they tell of (the field `an` of the updated document),
 * which every instance's change stream reads from the update: no write of their own. `t` makes
 * each such write set a value of its own (MongoDB reports no field a write left as it was); `e`
 * holds the events in the transport's own form.
 */
export interface CarriedEvents {
  t: string;
  e: readonly object[];
}

/** The field of a document that carries its write's events (see CarriedEvents). */
export const carriedEventsField = 'an';

/**
 * Carries events from whichever instance stored a change to every instance's listeners, in the
 * order the changes were published.
 */
export interface ChangeSource {
  readonly mode: LiveEventMode;
  ensureIndexes(): Promise<void>;
  /** Starts delivering published events to listeners; fails when the transport is unavailable. */
  start(logger: Logger): Promise<void>;
  /** Stops delivering; no listener is called once this resolves. */
  stop(): Promise<void>;
  /** In order, in one write. */
  publish(events: readonly ChangeEvent[]): Promise<void>;
  /**
   * What of these events a write of the change can carry (see ChangePublisher.publishWithin), and
   * the rest, to publish once it is made.
   */
  carry(events: readonly ChangeEvent[]): { carried: CarriedEvents | undefined; rest: readonly ChangeEvent[] };
  /** Returns the function that removes the listener. */
  listen(listener: ChangeListener): () => void;
  listenerCount(): number;
  /** Times the transport was reopened after an error (0 for one that cannot fail). */
  readonly restarts: number;
  /** Started, and not failing: events published now reach the listeners (/readyz asks). */
  flowing(): boolean;
}
