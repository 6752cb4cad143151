import { LRUCache } from 'lru-cache';
import type { ObjectId } from 'mongodb';

/** A post, or a repost with the id of its original. */
interface Removable {
  id: ObjectId;
  repostOf: { id: ObjectId } | null;
}

/**
 * Posts removed lately, for caches that take posts in place from announcements: a post's
 * announcement can arrive after its removal's (the deletion raced it), and must then not bring it
 * back. Remembered for `ttlMs`, as long as the caches trust what they hold without an announcement.
 * `scope` narrows a removal to one holder (an author's outbox); none means everywhere.
 */
export class RecentRemovals {
  private readonly removed: LRUCache<string, true>;

  constructor(ttlMs: number) {
    this.removed = new LRUCache<string, true>({ max: 10_000, ttl: ttlMs });
  }

  remember(postId: ObjectId, scope = ''): void {
    this.removed.set(`${scope}|${postId.toHexString()}`, true);
  }

  /** Whether `post`, or for a repost its original, was removed lately. */
  includes(post: Removable, scope = ''): boolean {
    const ids = post.repostOf ? [post.id, post.repostOf.id] : [post.id];
    return ids.some((id) => this.removed.has(`${scope}|${id.toHexString()}`));
  }
}
