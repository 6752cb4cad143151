import { parsePostId, type ContentService, type PostRecord } from '../content/contentService.js';
import type { Page, PageRequest } from '../content/position.js';
import { AppError, notFound } from '../errors.js';
import type { UserGraphService, UserRecord } from '../graph/userGraphService.js';
import type { FeedBackend, FeedObserver, TimelineEntry } from './feedBackend.js';

/**
 * Everything that changes what a timeline shows goes through here: the content store is written
 * first (the system of record), then the configured backend updates its timelines, then observers
 * (live updates) hear about the change.
 */
export class FeedService {
  private readonly observers: FeedObserver[] = [];

  constructor(
    private readonly graph: UserGraphService,
    private readonly content: ContentService,
    readonly backend: FeedBackend,
  ) {}

  observe(observer: FeedObserver): void {
    this.observers.push(observer);
  }

  async post(authorId: string, text: string): Promise<PostRecord> {
    const post = await this.content.createPost(authorId, text);
    await this.backend.deliver(post);
    await this.notify((observer) => observer.postCreated(post));
    return post;
  }

  /**
   * Timelines first, then content: if the process dies in between, the post still exists and a
   * second delete finishes the job, rather than a deleted post lingering in embedded timelines.
   */
  async deletePost(viewerId: string, id: string): Promise<boolean> {
    const postId = parsePostId(id);
    const post = postId && (await this.content.getPost(postId));
    if (!post) throw notFound(`No post with id "${id}"`);
    if (post.authorId !== viewerId) throw new AppError('FORBIDDEN', 'Only the author can delete a post');
    await this.backend.retract(post);
    const deleted = await this.content.deletePost(post.id);
    if (deleted) await this.notify((observer) => observer.postDeleted(post));
    return deleted;
  }

  timeline(userId: string, request: PageRequest): Promise<Page<TimelineEntry>> {
    return this.backend.timeline(userId, request);
  }

  /** Returns the followed user with fresh counts. */
  async follow(followerId: string, followeeId: string): Promise<UserRecord> {
    const { created } = await this.graph.follow(followerId, followeeId);
    // Even when the edge already existed: a backfill cut short by a crash is completed.
    await this.backend.followed(followerId, followeeId);
    if (created) await this.notify((observer) => observer.followed(followerId, followeeId));
    return this.freshUser(followeeId);
  }

  async unfollow(followerId: string, followeeId: string): Promise<UserRecord> {
    const { removed } = await this.graph.unfollow(followerId, followeeId);
    // Even when no edge was removed: a timeline left behind by an interrupted unfollow is cleaned.
    await this.backend.unfollowed(followerId, followeeId);
    if (removed) await this.notify((observer) => observer.unfollowed(followerId, followeeId));
    return this.freshUser(followeeId);
  }

  private async notify(event: (observer: FeedObserver) => Promise<void>): Promise<void> {
    await Promise.all(this.observers.map(event));
  }

  private async freshUser(handle: string): Promise<UserRecord> {
    const user = await this.graph.getUser(handle);
    if (!user) throw notFound(`No user with handle "${handle}"`);
    return user;
  }
}
