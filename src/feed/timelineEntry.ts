/**
 * Timeline entries as every layer sees them: what a timeline holds of a post, and what a page
 * needs loaded to show it. Types only, so the API imports this rather than the feed's services.
 */
import type { PostPosition } from '../content/position.js';
import type { PostRecord, PostRef, RepostOf, Visibility } from '../records/posts.js';

/**
 * One post as a timeline holds it. `text` is null when the strategy links to content instead of
 * embedding it; the API then hydrates the page's posts in one batched content query.
 */
export interface TimelineEntry extends PostPosition {
  /** The author, or for a repost the reposter. */
  authorId: string;
  text: string | null;
  replyTo: PostRef | null;
  repostOf: RepostOf | null;
  /**
   * Absent on entries of materialized timelines, which hold public posts only; limited posts come
   * to a page from the inbox query, as records of `content`.
   */
  visibility?: Visibility;
  audience?: readonly string[];
}

/**
 * How a page gets what its entries leave out, batched per request by the API's DataLoaders:
 * `posts` gives linked entries their post (aligned with its input; null for a post that no longer
 * exists), `users` says which authors still exist. Both are loads the response needs anyway.
 */
export interface PageLoads {
  posts(entries: readonly TimelineEntry[]): Promise<(PostRecord | null)[]>;
  users(handles: readonly string[]): Promise<Set<string>>;
}
