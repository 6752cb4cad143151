import type { TimelineEdits } from '../changes/events.js';
import type { PostRecord } from '../records/posts.js';
import type { FollowKey } from '../records/users.js';
import type { TimelineEntry } from './timelineEntry.js';
import type { Page, PageRequest, PostPosition } from '../content/position.js';
import type { FeedStrategyName } from '../config.js';

/**
 * `announced`: the caller's own change event (a post removed) tells every instance that these
 * timelines changed, so the write need not announce it apart (see changes/staleness.ts).
 */
export interface Announced {
  announced: boolean;
}

/** Posts for these recipients' timelines. */
export interface Delivery {
  recipients: readonly string[];
  posts: readonly PostRecord[];
}

/**
 * A timeline strategy (Socialite's FeedService models). Posts are already stored in `content`
 * when a backend sees them; a backend only keeps the materialized timelines. Who receives what,
 * and when, is decided by FeedService and the fanout queue.
 */
export interface FeedBackend {
  readonly strategy: FeedStrategyName;
  /** False for fanout on read, which stores nothing and needs no fanout. */
  readonly materialized: boolean;
  /**
   * How this strategy's timelines come back after they were lost or built by another strategy:
   * never stored (`none`), rebuilt by the first read (`lazy`), or only by redelivering every
   * stored post (`redeliver`, see rebuild.ts).
   */
  readonly rebuild: 'none' | 'lazy' | 'redeliver';
  ensureIndexes(): Promise<void>;
  /** Deletes every materialized timeline of this strategy. */
  clear(): Promise<void>;
  /**
   * Adds posts to each recipient's timeline. Idempotent: an entry already there (a replayed
   * sub-task, a backfill that came first) is left as it is, never doubled.
   */
  deliverTo(recipients: readonly string[], posts: readonly PostRecord[]): Promise<void>;
  /** The same for many deliveries at once, in one write: the fanout of many small audiences. */
  deliverEach(deliveries: readonly Delivery[]): Promise<void>;
  /**
   * Puts the post's body as it is now into these recipients' embedded entries of it (an edit:
   * an image's alt text). Nothing where entries link to `content`, or hold no such entry.
   */
  rewrite(recipients: readonly string[], post: PostRecord): Promise<void>;
  /** Whether this strategy's entries carry bodies that edits must reach. */
  readonly embedsBodies: boolean;
  /** Takes a post out of these recipients' timelines. */
  removeFrom(recipients: readonly string[], post: PostPosition, options?: Announced): Promise<void>;
  /**
   * A page of `userId`'s materialized timeline around a point, newest first. `authorIds` are the
   * reader and everyone they follow, for strategies that read `content` (fanout on read, and the
   * cache below its stretch), and `followingVersion` how often whom they follow has changed.
   * Entries of other authors may be present; the caller filters.
   */
  timeline(userId: string, request: PageRequest, authorIds: readonly string[], followingVersion?: number): Promise<Page<TimelineEntry>>;
  /**
   * `followerId` now follows `followeeId`: the followee's recent posts join the timeline, by a
   * backfill here or by the rebuild of the next read. Runs under the pair's lease; idempotent.
   * The follow's own announcement tells every instance that the follower's timeline changed.
   */
  followed(followerId: string, followeeId: string): Promise<void>;
  /**
   * These followers no longer follow these followees: those authors' entries leave the followers'
   * timelines, all in one bulk write. The follow pairs' sweep calls it for the unfollows of a second
   * (see `FollowPairs.pruneSettled`); pages never show the entries meanwhile. Absent where no stored
   * timeline keeps them: fanout on read reads none, the cache is rebuilt by the next read. Idempotent.
   */
  removeUnfollowed?(unfollows: readonly FollowKey[]): Promise<void>;
  /**
   * A reader whom fanout skipped while they were inactive is back. `lazy` strategies drop what
   * they hold and rebuild on the read; `redeliver` ones are refilled through the queue.
   */
  readerReturned(userId: string): Promise<void>;
  /** Deletes the user's whole timeline: their account is gone. */
  dropTimeline(userId: string): Promise<void>;
  /**
   * Another instance changed these users' timelines: drop what this process holds of them, or,
   * where `edits` say what changed, change it in place. Only the cache strategy holds any (see
   * timelineCache.ts).
   */
  forgetHeld(userIds: readonly string[], edits?: TimelineEdits): void;
}

/**
 * Tells every instance, this one included, that these users' materialized timelines changed in
 * the database, after the change is stored (a `changed` live event).
 */
export type TimelinesChanged = (userIds: readonly string[], edits?: TimelineEdits) => Promise<void>;
