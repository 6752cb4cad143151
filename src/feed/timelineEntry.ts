/**
 * What a page needs loaded to show its timeline entries (records/posts.ts has the entries
 * themselves). Types only, so the API imports this rather than the feed's services.
 */
import type { PostRecord, TimelineEntry } from '../records/posts.js';

export type { TimelineEntry };

/**
 * How a page gets what its entries leave out, batched per request by the API's DataLoaders:
 * `posts` gives linked entries their post (aligned with its input; null for a post that no longer
 * exists), `users` says which authors still exist. Both are loads the response needs anyway.
 */
export interface PageLoads {
  posts(entries: readonly TimelineEntry[]): Promise<(PostRecord | null)[]>;
  users(handles: readonly string[]): Promise<Set<string>>;
}
