import { changed, postAdded, postRemoved, type ChangeEvent, type ChangePublisher } from '../changes/events.js';
import type { ContentService } from '../content/contentService.js';
import type { CountChange, InteractionDocument } from '../content/interactions.js';
import { AppError } from '../errors.js';
import type { UserDirectory } from '../graph/userDirectory.js';
import type { UserFeedState } from '../graph/userFeedState.js';
import type { PostRecord } from '../records/posts.js';
import type { UserRecord } from '../records/users.js';
import type { Fanout } from './fanout.js';
import type { HeldTasks } from './queuedWork.js';
import type { FeedBackend } from './feedBackend.js';
import { postNotificationTasks, retractionNotificationTasks } from '../notifications/notificationService.js';
import { tagCountTasks } from './trendCounting.js';
import type { Scope } from '../observability/requestScope.js';

/** What a repost's transition does to timelines: its own entry, made and taken back. */
export interface RepostTimelineEffects {
  /** Returns what to announce, with the rest of the transition; changes the original's count once the repost is stored. */
  adding(edge: InteractionDocument, count: CountChange, scope: Scope): Promise<ChangeEvent[]>;
  removing(edge: InteractionDocument, scope: Scope): Promise<void>;
}

export interface PostDeliveryDependencies {
  users: Pick<UserDirectory, 'getUser'>;
  feedState: Pick<UserFeedState, 'markPulling' | 'markLimited'>;
  content: ContentService;
  backend: FeedBackend;
  fanout: Fanout;
  changes: ChangePublisher;
  /** Authors with more followers than this are pulled at read time instead of pushed. */
  pullThreshold: number;
}

/**
 * How a stored post reaches timelines and leaves them again: the content store is written first
 * (the system of record), the fanout queue and the configured backend update timelines, and the
 * change bus hears about it once it is stored. Posts and reposts go the same way; a repost's own
 * entry is made and taken back by its edge's transition (`repostEffects`), so a crash is finished
 * by the repair sweep.
 */
export class PostDelivery {
  /** The reposts' transition effects (see Interactions): their own timeline entry. */
  readonly repostEffects: RepostTimelineEffects = {
    adding: (edge, count, scope) => this.repostAdded(edge, count, scope),
    removing: (edge, scope) => this.repostRemoved(edge, scope),
  };

  constructor(private readonly deps: PostDeliveryDependencies) {}

  /**
   * Queued, stored, and announced live, in that order. The author's own timeline takes no entry:
   * their pages merge their outbox, which the store changes in place (see TimelineReading). A
   * limited post is only stored and announced: it enters no timeline, and the inbox query of
   * whoever may see it finds it.
   */
  async publish(post: PostRecord, scope: Scope): Promise<void> {
    await this.deps.changes.publish(await this.store(post, scope));
  }

  /** `publish` without its announcement, which it returns: for a repost, announced with the rest of its transition. */
  async store(post: PostRecord, scope: Scope): Promise<ChangeEvent[]> {
    const { feedState, fanout, changes } = this.deps;
    const { visibility, audience } = post.body;
    if (visibility !== 'PUBLIC') {
      // Readers ask for limited posts only where these marks say some exist: mark first.
      const marked = await feedState.markLimited(post.authorId, visibility, audience);
      if (marked.length > 0) await changes.publish(changed({ users: marked }));
      // No delivery, but the replied-to and mentioned accounts who may see it are told.
      await this.storeQueued(post, fanout.enqueueDelivery(post, scope, postNotificationTasks(post), false));
      return [postAdded(post)];
    }
    // Readers look for pulled posts only among followees marked as pulling: mark first.
    if (post.pulled && (await feedState.markPulling(post.authorId))) await changes.publish(changed({ users: [post.authorId] }));
    // Its tags' trend count rides in the same write (a post without tags, or a repost, queues none).
    const queued = fanout.enqueueDelivery(post, scope, [...postNotificationTasks(post), ...tagCountTasks(post)], !post.pulled);
    await this.storeQueued(post, queued);
    return [postAdded(post)];
  }

  /** The post stored once its work is queued; the work runs once it is stored, or its store failed. */
  private async storeQueued(post: PostRecord, queued: Promise<HeldTasks>): Promise<void> {
    const held = await queued;
    try {
      await this.deps.content.storePost(post);
    } finally {
      held.release();
    }
  }

  /**
   * Queued, out of `content` and the author's own timeline (which holds its reader's own posts
   * where a cache was built or a timeline rebuilt from `content`), and announced live. Returns whether
   * this call removed the post: of racing calls exactly one does, and only it announces, so each
   * removal is told once. The retraction's first sub-task leaves the deletion to a live request
   * (see Fanout), so a request is not beaten to it by its own worker.
   */
  async retract(post: PostRecord, scope: Scope): Promise<boolean> {
    const { content, backend, fanout, changes } = this.deps;
    const inTimelines = post.body.visibility === 'PUBLIC';
    await fanout.enqueueRetraction(post, scope, retractionNotificationTasks(post), inTimelines && !post.pulled);
    const removed = await content.deletePost(post);
    // Announced by whichever call removed the post, this one or a racing one.
    if (inTimelines) await backend.removeFrom([post.authorId], post, { announced: true });
    if (removed) await changes.publish(postRemoved(post));
    return removed;
  }

  /** Whether the author's posts (and reposts) are pulled by readers instead of pushed to them. */
  async isPulled(authorId: string): Promise<boolean> {
    const author = await this.deps.users.getUser(authorId);
    if (!author) throw new AppError('UNAUTHENTICATED', 'Your account no longer exists');
    return this.pulls(author);
  }

  private pulls(author: UserRecord): boolean {
    return this.deps.backend.materialized && author.followerCount > this.deps.pullThreshold;
  }

  /**
   * Also run by whoever finishes a repost its request left half-made: the sweep, or the removal of
   * the reposter's account, which must not fail on it.
   */
  private async repostAdded(edge: InteractionDocument, count: CountChange, scope: Scope): Promise<ChangeEvent[]> {
    // The original as the repost's request held it (its text never changes); one deleted meanwhile
    // is found by the deletion, which takes back its reposts, or else right below.
    const [[original], reposter] = await Promise.all([this.deps.content.lookups.cachedPosts([edge.p]), this.deps.users.getUser(edge.u)]);
    // The original was deleted: nothing left to bring. The reposter's account is going: the repost
    // gets no entry, and the account's removal takes the repost back.
    if (!original || original.repostOf || !reposter) return [];
    const repost = this.deps.content.prepareRepost(edge.u, original, { id: edge.entry, createdAt: edge.d }, { pulled: this.pulls(reposter) });
    const events = await this.store(repost, scope);
    // Stored, then counted on the original, which tells whether it still exists: a deletion removes
    // the original before it scans for reposts, so one whose scan missed this repost leaves the
    // count nothing to change. A replay whose count was changed before checks apart.
    if (!(await count()) && !(await this.deps.content.lookups.exists(original.id))) {
      await this.retract(repost, scope);
      return [];
    }
    return events;
  }

  private async repostRemoved(edge: InteractionDocument, scope: Scope): Promise<void> {
    const repost = await this.deps.content.lookups.getEntry(edge.entry);
    if (repost) await this.retract(repost, scope);
  }
}
