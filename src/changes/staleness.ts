import type { ObjectId } from 'mongodb';
import { UnreachableCaseError } from '../errors.js';
import type { PostCounts, PostRecord } from '../records/posts.js';
import { withoutCounts, type UserCounts } from '../records/users.js';
import type { ChangeEvent, TimelineEdits, ViewerState } from './events.js';

/**
 * What this process holds in front of MongoDB, by what a change can make stale: authors' outboxes
 * and posts (content), users and follow lists (graph), readers' filters, and the cache strategy's
 * timelines. Each is a plain function, so this module knows none of the services that hold them.
 */
export interface HeldRecords {
  /**
   * `change`, when the event says what it was: held outboxes take the post, or lose it, in place
   * instead of being read again.
   */
  forgetOutboxes(authorIds: readonly string[], change?: OutboxChange): void;
  forgetPosts(postIds: readonly ObjectId[]): void;
  /** A post's text was edited: held copies of it and of these reposts take its body, when newer. */
  postEdited(post: PostRecord, repostIds: readonly ObjectId[]): void;
  /** A post's counts as a change left them (taken when newer), or, with none, forgotten. */
  postCounted(postId: ObjectId, counts: PostCounts | null): void;
  /** A viewer's state of a post changed: liked, reposted or bookmarked. */
  forgetViewerState(viewerId: string, state: ViewerState, postId: ObjectId): void;
  forgetUsers(change: { users: readonly string[]; following: readonly string[] }): void;
  /** Counts as a change left them: held users take them in place when they are newer. */
  applyCounts(counts: readonly UserCounts[]): void;
  /** `all` when a change touched more readers' filters than it names (a deleted account). */
  forgetFilters(readerIds: readonly string[] | 'all'): void;
  /** `edits`, when the event says what they were: held timelines take them in place. */
  forgetTimelines(userIds: readonly string[], edits?: TimelineEdits): void;
  /** Owners' lists and their members (an unfollow empties a place in them too, through forgetUsers). */
  forgetLists(ownerIds: readonly string[]): void;
}

/** A post that entered or left its author's outbox. */
export type OutboxChange = { added: PostRecord } | { removed: ObjectId };

/**
 * The one place that says what each change makes stale. Every instance runs it for every event,
 * its own included (they come back through the bus), so what one instance changed no other keeps
 * serving. A new kind of change breaks the build here until it is handled.
 */
export function forgetStale(event: ChangeEvent, held: HeldRecords): void {
  switch (event.kind) {
    case 'postAdded':
      // A public reply was counted on its parent before it was announced.
      if (event.post.replyTo && event.post.body.visibility === 'PUBLIC' && !event.post.repostOf) held.postCounted(event.post.replyTo.id, null);
      // Into its author's outbox, which their own timeline's pages merge: no timeline took it yet.
      held.forgetOutboxes([event.post.authorId], { added: event.post });
      return;
    case 'postRemoved':
      if (event.replyToId) held.postCounted(event.replyToId, null);
      held.forgetPosts([event.postId]);
      held.forgetOutboxes([event.authorId], { removed: event.postId });
      held.forgetTimelines([event.authorId], { removed: [event.postId] });
      return;
    case 'postEdited': {
      // Held posts take an edited text in place (counts do not change); after an alt text change
      // they go, and are read again. Outboxes carry the body too, and go either way.
      const posts = [event.post, ...event.reposts];
      if (event.edited) held.postEdited(event.edited, event.reposts.map((repost) => repost.id));
      else held.forgetPosts(posts.map((post) => post.id));
      held.forgetOutboxes([...new Set(posts.map((post) => post.authorId))]);
      return;
    }
    case 'followed':
    case 'unfollowed': {
      // Both users' counts (in place where the event carries them), the follower's list of whom
      // they follow, and their timeline, which the follow's own timeline work changed.
      const counts = event.counts ?? [];
      if (counts.length > 0) held.applyCounts(counts);
      held.forgetUsers({ users: withoutCounts([event.followerId, event.followeeId], counts), following: [event.followerId] });
      held.forgetTimelines([event.followerId]);
      return;
    }
    case 'changed':
      held.forgetUsers({ users: event.users, following: [] });
      held.forgetFilters(event.allFilters ? 'all' : event.filters);
      held.forgetTimelines(event.timelines, event.edits);
      held.forgetLists(event.lists);
      return;
    case 'notificationAdded':
      // Nothing held in front of MongoDB shows notifications.
      return;
    case 'counted':
      if (event.counts || event.countsStale) held.postCounted(event.postId, event.counts ?? null);
      if (event.viewer) held.forgetViewerState(event.viewer.id, event.viewer.state, event.postId);
      return;
    default:
      throw new UnreachableCaseError(event);
  }
}
