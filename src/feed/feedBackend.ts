import type { PostRecord } from '../content/contentService.js';
import type { Page, PageRequest, PostPosition } from '../content/position.js';
import type { FeedStrategyName } from '../config.js';

/**
 * One post as a timeline holds it. `text` is null when the strategy links to content instead of
 * embedding it; the API then hydrates the page's posts in one batched content query.
 */
export interface TimelineEntry extends PostPosition {
  authorId: string;
  text: string | null;
}

/**
 * A timeline strategy (Socialite's FeedService models). Posts are already stored in `content`
 * when a backend sees them; a backend only decides where timelines come from.
 */
export interface FeedBackend {
  readonly strategy: FeedStrategyName;
  /**
   * How this strategy's timelines come back after they were lost or built by another strategy:
   * never stored (`none`), rebuilt by the first read (`lazy`), or only by redelivering every
   * stored post (`redeliver`, see rebuild.ts).
   */
  readonly rebuild: 'none' | 'lazy' | 'redeliver';
  ensureIndexes(): Promise<void>;
  /** Deletes every materialized timeline of this strategy. */
  clear(): Promise<void>;
  /** Puts a stored post into the materialized timelines of its author and their followers. */
  deliver(post: PostRecord): Promise<void>;
  /** Takes a post out of every materialized timeline (it is about to leave `content`). */
  retract(post: PostRecord): Promise<void>;
  /** A page of `userId`'s timeline around a point, newest first. */
  timeline(userId: string, request: PageRequest): Promise<Page<TimelineEntry>>;
  /** `followerId` has just started following `followeeId`. */
  followed(followerId: string, followeeId: string): Promise<void>;
  /** `followerId` has just stopped following `followeeId`. */
  unfollowed(followerId: string, followeeId: string): Promise<void>;
}

/**
 * Told about each change after it is durably stored, e.g. to push live updates. Called in the
 * request that made the change; a failing observer fails that request after the change is kept.
 */
export interface FeedObserver {
  postCreated(post: PostRecord): Promise<void>;
  postDeleted(post: PostRecord): Promise<void>;
  followed(followerId: string, followeeId: string): Promise<void>;
  unfollowed(followerId: string, followeeId: string): Promise<void>;
}
