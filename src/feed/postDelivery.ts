import { changed, postAdded, postRemoved, type ChangePublisher } from '../changes/events.js';
import type { ContentService } from '../content/contentService.js';
import type { InteractionDocument, InteractionEffects } from '../content/interactions.js';
import { AppError } from '../errors.js';
import type { UserDirectory } from '../graph/userDirectory.js';
import type { UserFeedState } from '../graph/userFeedState.js';
import type { PostRecord } from '../records/posts.js';
import type { Fanout } from './fanout.js';
import type { FeedBackend } from './feedBackend.js';

export interface PostDeliveryDependencies {
  users: Pick<UserDirectory, 'getUser'>;
  feedState: Pick<UserFeedState, 'markPulling'>;
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
  readonly repostEffects: InteractionEffects = {
    adding: (edge) => this.repostAdded(edge),
    removing: (edge) => this.repostRemoved(edge),
  };

  constructor(private readonly deps: PostDeliveryDependencies) {}

  /** Queued, stored, in the author's own timeline, and announced live, in that order. */
  async publish(post: PostRecord): Promise<void> {
    const { feedState, content, backend, fanout, changes } = this.deps;
    // Readers look for pulled posts only among followees marked as pulling: mark first.
    if (post.pulled && (await feedState.markPulling(post.authorId))) await changes.publish(changed({ users: [post.authorId] }));
    if (backend.materialized && !post.pulled) await fanout.enqueueDelivery(post);
    await content.storePost(post);
    await backend.deliverTo([post.authorId], [post], { announced: true });
    await changes.publish(postAdded(post));
  }

  /**
   * Queued, out of `content` and the author's own timeline, and announced live. Returns whether
   * this call removed the post: of racing calls exactly one does, and only it announces, so each
   * removal is told once. The retraction's first sub-task leaves the deletion to a live request
   * (see Fanout), so a request is not beaten to it by its own worker.
   */
  async retract(post: PostRecord): Promise<boolean> {
    const { content, backend, fanout, changes } = this.deps;
    if (!post.pulled) await fanout.enqueueRetraction(post);
    const removed = await content.deletePost(post);
    // Announced by whichever call removed the post, this one or a racing one.
    await backend.removeFrom([post.authorId], post, { announced: true });
    if (removed) await changes.publish(postRemoved(post));
    return removed;
  }

  /** Whether the author's posts (and reposts) are pulled by readers instead of pushed to them. */
  async isPulled(authorId: string): Promise<boolean> {
    const author = await this.deps.users.getUser(authorId);
    if (!author) throw new AppError('UNAUTHENTICATED', 'Your account no longer exists');
    return this.deps.backend.materialized && author.followerCount > this.deps.pullThreshold;
  }

  private async repostAdded(edge: InteractionDocument): Promise<void> {
    const original = await this.deps.content.lookups.getPost(edge.p);
    if (!original) return; // deleted meanwhile: nothing left to bring
    const pulled = await this.isPulled(edge.u);
    await this.publish(this.deps.content.prepareRepost(edge.u, original, { id: edge.entry, createdAt: edge.d }, { pulled }));
  }

  private async repostRemoved(edge: InteractionDocument): Promise<void> {
    const repost = await this.deps.content.lookups.getEntry(edge.entry);
    if (repost) await this.retract(repost);
  }
}
