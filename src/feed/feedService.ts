import type { RateLimits } from '../auth/rateLimits.js';
import type { FanoutOptions } from '../config.js';
import { parsePostId, type ContentService, type PostRecord } from '../content/contentService.js';
import type { Page, PageRequest } from '../content/position.js';
import { AppError, notFound } from '../errors.js';
import type { UserGraphService, UserRecord } from '../graph/userGraphService.js';
import type { Fanout } from './fanout.js';
import type { FeedBackend, FeedObserver, TimelineEntry } from './feedBackend.js';
import { mergeFiltered, type EntrySource } from './pageMerge.js';

/**
 * Gives linked entries their post, aligned with its input; null for a post that no longer exists.
 * The API passes its per-request DataLoader, so a page costs one batched `content` query.
 */
export type Hydrate = (entries: readonly TimelineEntry[]) => Promise<(PostRecord | null)[]>;

/** How long this process trusts what it last learnt about a reader's activity. */
const activityMemoMaxMs = 60 * 60 * 1000;
const activityMemoLimit = 100_000;

/**
 * Everything that changes what a timeline shows goes through here: the content store is written
 * first (the system of record), the fanout queue and the configured backend update timelines, and
 * observers (live updates) hear about the change once it is stored.
 *
 * The read side merges the reader's materialized timeline with the posts of the high-follower
 * authors they follow (pulled from `content` at read time) and keeps only entries of authors the
 * reader follows now, so a delivery that raced an unfollow never shows.
 */
export class FeedService {
  private readonly observers: FeedObserver[] = [];
  /** Readers whose activity this process recorded recently: no database write per page. */
  private readonly activeReaders = new Map<string, number>();

  constructor(
    private readonly graph: UserGraphService,
    private readonly content: ContentService,
    readonly backend: FeedBackend,
    readonly fanout: Fanout,
    private readonly options: FanoutOptions,
    private readonly rateLimits: RateLimits,
  ) {}

  observe(observer: FeedObserver): void {
    this.observers.push(observer);
  }

  /**
   * Returns as soon as the post is stored, in the author's own timeline and queued for everyone
   * else, whatever the audience. The fanout task is queued before the post is stored, so no crash
   * can leave a stored post without its delivery; a task whose post never arrives is dropped.
   */
  async post(authorId: string, text: string): Promise<PostRecord> {
    await this.rateLimits.post(authorId);
    const author = await this.graph.getUser(authorId);
    if (!author) throw new AppError('UNAUTHENTICATED', 'Your account no longer exists');
    const pulled = this.backend.materialized && author.followerCount > this.options.pullThreshold;
    const post = this.content.preparePost(authorId, text, { pulled });
    if (this.backend.materialized && !pulled) await this.fanout.enqueueDelivery(post);
    await this.content.storePost(post);
    await this.backend.deliverTo([authorId], [post]);
    await this.notify((observer) => observer.postCreated(post));
    return post;
  }

  /**
   * The retraction is queued first, then the post leaves `content` and the author's own timeline;
   * workers take it out of followers' timelines. A delivery still running checks `content` after
   * writing and removes what it wrote, so a deleted post never lingers.
   */
  async deletePost(viewerId: string, id: string): Promise<boolean> {
    const postId = parsePostId(id);
    const post = postId && (await this.content.getPost(postId));
    if (!post) throw notFound(`No post with id "${id}"`);
    if (post.authorId !== viewerId) throw new AppError('FORBIDDEN', 'Only the author can delete a post');
    if (!post.pulled) await this.fanout.enqueueRetraction(post);
    // The retraction's first sub-task deletes the post too, and may have been first.
    await this.content.deletePost(post.id);
    await this.backend.removeFrom([viewerId], post);
    await this.notify((observer) => observer.postDeleted(post));
    return true;
  }

  /** A page of the viewer's timeline, hydrated and never short while older (or newer) posts exist. */
  async timeline(userId: string, request: PageRequest, hydrate: Hydrate): Promise<Page<PostRecord>> {
    const followees = await this.graph.followingIds(userId);
    const authorIds = [userId, ...followees];
    const sources: EntrySource[] = [];
    if (!this.backend.materialized || (await this.hasTimelineGap(userId))) {
      sources.push((page) => this.content.pageByAuthors(authorIds, page));
    } else {
      sources.push((page) => this.backend.timeline(userId, page, authorIds));
      if (followees.length > 0) sources.push((page) => this.content.pulledPageByAuthors(followees, page));
    }
    const shown = new Set(authorIds);
    return mergeFiltered(sources, request, async (candidates) => {
      const current = candidates.filter((entry) => shown.has(entry.authorId));
      const posts = await hydrate(current);
      return posts.filter((post): post is PostRecord => post !== null);
    });
  }

  /** Returns the followed user with fresh counts. */
  async follow(followerId: string, followeeId: string): Promise<UserRecord> {
    await this.rateLimits.follow(followerId);
    const { following } = await this.graph.follow(followerId, followeeId, this.backend);
    await this.notify((observer) => (following ? observer.followed : observer.unfollowed).call(observer, followerId, followeeId));
    return this.freshUser(followeeId);
  }

  async unfollow(followerId: string, followeeId: string): Promise<UserRecord> {
    await this.rateLimits.follow(followerId);
    const { following } = await this.graph.unfollow(followerId, followeeId, this.backend);
    await this.notify((observer) => (following ? observer.followed : observer.unfollowed).call(observer, followerId, followeeId));
    return this.freshUser(followeeId);
  }

  /** Finishes follows and unfollows whose request died; the fanout workers call this now and then. */
  repairFollows(): Promise<number> {
    return this.graph.pairs.repairStalled(this.backend);
  }

  /**
   * Records that `userId` reads, and whether their materialized timeline is complete. A reader back
   * from more than ACTIVE_READER_DAYS away missed the deliveries fanout skipped: a lazily built cache
   * is dropped (this read rebuilds it); bucket timelines get a gap that workers refill from
   * `content`, and until then this reader's pages come from `content`, complete and never partial.
   * The gap is opened before the reader counts as active again, so a crash in between repeats
   * the return rather than losing it.
   */
  private async hasTimelineGap(userId: string): Promise<boolean> {
    const now = Date.now();
    const memo = this.activeReaders.get(userId);
    if (memo !== undefined && now - memo < Math.min(activityMemoMaxMs, this.options.activeReaderMs / 4)) return false;

    const reader = await this.graph.readerActivity(userId);
    let gap = reader?.timelineGap ?? null;
    const lastRead = reader?.readAt;
    if (lastRead && now - lastRead.getTime() > this.options.activeReaderMs) {
      if (this.backend.rebuild === 'lazy') {
        await this.backend.readerReturned(userId);
      } else if (!gap) {
        // One whole window back: covers posts whose fanout ran late, after this reader went quiet.
        const from = new Date(lastRead.getTime() - this.options.activeReaderMs);
        await this.graph.openTimelineGap(userId, from);
        gap = (await this.graph.readerActivity(userId))?.timelineGap ?? null;
      }
    }
    await this.graph.markRead(userId, new Date(now));
    if (gap) {
      await this.fanout.enqueueGapFill(userId, gap.since);
      return true;
    }
    if (this.activeReaders.size >= activityMemoLimit) this.activeReaders.clear();
    this.activeReaders.set(userId, now);
    return false;
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
