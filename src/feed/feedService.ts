import type { RateLimits } from '../auth/rateLimits.js';
import type { FanoutOptions } from '../config.js';
import { parsePostId, type ContentService, type PostRecord } from '../content/contentService.js';
import type { InteractionDocument, Interactions } from '../content/interactions.js';
import type { ObjectId } from 'mongodb';
import type { Page, PageRequest } from '../content/position.js';
import { AppError, badInput, notFound } from '../errors.js';
import type { KeywordFilterRecord, ReaderFilters } from '../graph/readerFilters.js';
import { fullChange, type StoredChange } from '../live/liveEvents.js';
import type { UserGraphService, UserRecord } from '../graph/userGraphService.js';
import type { Fanout } from './fanout.js';
import type { FeedBackend, FeedObserver, TimelineEntry } from './feedBackend.js';
import { mergeFiltered, type EntrySource } from './pageMerge.js';
import { firstOccurrences, passesGraph, type Reader } from './visibility.js';

/**
 * How a page gets what its entries leave out, batched per request by the API's DataLoaders:
 * `posts` gives linked entries their post (aligned with its input; null for a post that no longer
 * exists), `users` says which authors still exist. Both are loads the response needs anyway.
 */
export interface PageLoads {
  posts(entries: readonly TimelineEntry[]): Promise<(PostRecord | null)[]>;
  users(handles: readonly string[]): Promise<Set<string>>;
}

/** The likes and reposts kept by ContentService's interactions. */
export interface InteractionStores {
  likes: Interactions;
  reposts: Interactions;
}

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
  private readonly authorLists = new WeakMap<readonly string[], readonly string[]>();

  constructor(
    private readonly graph: UserGraphService,
    private readonly content: ContentService,
    readonly backend: FeedBackend,
    readonly fanout: Fanout,
    private readonly options: FanoutOptions,
    private readonly rateLimits: RateLimits,
    readonly readerFilters: ReaderFilters,
    private readonly interactions: InteractionStores,
  ) {
    interactions.reposts.withEffects({
      adding: (edge) => this.repostAdded(edge),
      removing: (edge) => this.repostRemoved(edge),
    });
  }

  async ensureIndexes(): Promise<void> {
    await Promise.all([
      this.readerFilters.ensureIndexes(),
      this.interactions.likes.ensureIndexes(),
      this.interactions.reposts.ensureIndexes(),
    ]);
  }

  observe(observer: FeedObserver): void {
    this.observers.push(observer);
  }

  /**
   * Returns as soon as the post is stored, in the author's own timeline and queued for everyone
   * else, whatever the audience. The fanout task is queued before the post is stored, so no crash
   * can leave a stored post without its delivery; a task whose post never arrives is dropped.
   */
  async post(authorId: string, text: string, replyToId: string | null = null): Promise<PostRecord> {
    await this.rateLimits.post(authorId);
    const replyTo = replyToId === null ? null : await this.existingPost(replyToId);
    if (replyTo) await this.assertNotBlocked(authorId, replyTo.authorId, 'reply to');
    const pulled = await this.isPulled(authorId);
    const post = this.content.preparePost(authorId, text, { pulled, replyTo });
    await this.publish(post);
    return post;
  }

  /** Queued, stored, in the author's own timeline, and announced live, in that order. */
  private async publish(post: PostRecord): Promise<void> {
    // Readers look for pulled posts only among followees marked as pulling: mark first.
    if (post.pulled && (await this.graph.markPulling(post.authorId))) await this.announce({ users: [post.authorId] });
    if (this.backend.materialized && !post.pulled) await this.fanout.enqueueDelivery(post);
    await this.content.storePost(post);
    await this.backend.deliverTo([post.authorId], [post]);
    await this.notify((observer) => observer.postCreated(post));
  }

  /** Whether the author's posts (and reposts) are pulled by readers instead of pushed to them. */
  private async isPulled(authorId: string): Promise<boolean> {
    const author = await this.graph.getUser(authorId);
    if (!author) throw new AppError('UNAUTHENTICATED', 'Your account no longer exists');
    return this.backend.materialized && author.followerCount > this.options.pullThreshold;
  }

  async likePost(userId: string, id: string): Promise<PostRecord> {
    const post = await this.existingPost(id);
    await this.assertNotBlocked(userId, post.authorId, 'like');
    await this.interactions.likes.add(post.id, userId);
    return this.existingPost(id);
  }

  async unlikePost(userId: string, id: string): Promise<PostRecord> {
    const post = await this.existingPost(id);
    await this.interactions.likes.remove(post.id, userId);
    return this.existingPost(id);
  }

  /** The repost's own entry is made by the transition's effects (below), so a crash is finished by the sweep. */
  async repost(userId: string, id: string): Promise<PostRecord> {
    const post = await this.existingPost(id);
    if (post.authorId === userId) throw new AppError('FORBIDDEN', 'You cannot repost your own post');
    await this.assertNotBlocked(userId, post.authorId, 'repost');
    await this.rateLimits.post(userId);
    await this.interactions.reposts.add(post.id, userId);
    return this.existingPost(id);
  }

  async undoRepost(userId: string, id: string): Promise<PostRecord> {
    const post = await this.existingPost(id);
    await this.interactions.reposts.remove(post.id, userId);
    return this.existingPost(id);
  }

  /** Which of these posts the viewer likes / has reposted: one query each for a whole page. */
  viewerLikes(userId: string, postIds: readonly PostRecord['id'][]): Promise<Set<string>> {
    return this.interactions.likes.among(userId, postIds);
  }

  viewerReposts(userId: string, postIds: readonly PostRecord['id'][]): Promise<Set<string>> {
    return this.interactions.reposts.among(userId, postIds);
  }

  private async repostAdded(edge: InteractionDocument): Promise<void> {
    const original = await this.content.getPost(edge.p);
    if (!original) return; // deleted meanwhile: nothing left to bring
    const pulled = await this.isPulled(edge.u);
    await this.publish(this.content.prepareRepost(edge.u, original, { id: edge.entry, createdAt: edge.d }, { pulled }));
  }

  private async repostRemoved(edge: InteractionDocument): Promise<void> {
    const repost = await this.content.getEntry(edge.entry);
    if (repost) await this.retract(repost);
  }

  /** Queued, out of `content` and the author's own timeline, and announced live. */
  private async retract(post: PostRecord): Promise<void> {
    if (!post.pulled) await this.fanout.enqueueRetraction(post);
    // The retraction's first sub-task deletes the post too, and may have been first.
    await this.content.deletePost(post);
    await this.backend.removeFrom([post.authorId], post);
    await this.notify((observer) => observer.postDeleted(post));
  }

  private async existingPost(id: string): Promise<PostRecord> {
    const postId = parsePostId(id);
    const post = postId && (await this.content.getPost(postId));
    if (!post) throw notFound(`No post with id "${id}"`);
    return post;
  }

  private async assertNotBlocked(userId: string, otherId: string, action: string): Promise<void> {
    if (userId === otherId) return;
    const view = await this.readerFilters.of(userId);
    if (view.isBlockedEitherWay(otherId)) throw new AppError('FORBIDDEN', `You cannot ${action} ${otherId}: one of you blocked the other`);
  }

  /**
   * The retraction is queued first, then the post leaves `content` and the author's own timeline;
   * workers take it out of followers' timelines. A delivery still running checks `content` after
   * writing and removes what it wrote, so a deleted post never lingers.
   */
  async deletePost(viewerId: string, id: string): Promise<boolean> {
    const post = await this.existingPost(id);
    if (post.authorId !== viewerId) throw new AppError('FORBIDDEN', 'Only the author can delete a post');
    await this.removePost(post);
    return true;
  }

  /** A post or repost of an account being deleted. */
  async removeAuthored(post: PostRecord): Promise<void> {
    if (!post.repostOf) return this.removePost(post);
    await this.interactions.reposts.remove(post.repostOf.id, post.authorId);
    // A repost whose original is gone has no edge left to undo.
    if (await this.content.exists(post.id)) await this.retract(post);
  }

  /** Takes back up to `limit` of the user's likes and reposts; returns how many it found. */
  async undoInteractionsOf(userId: string, limit: number): Promise<number> {
    let found = 0;
    for (const kind of [this.interactions.likes, this.interactions.reposts]) {
      const edges = await kind.ofUser(userId, limit);
      for (const edge of edges) await kind.remove(edge.p, userId);
      found += edges.length;
    }
    return found;
  }

  /** Ends one follow of a deleted account, counts and timeline included, and tells live subscribers. */
  async endFollow(followerId: string, followeeId: string): Promise<void> {
    await this.graph.endFollow(followerId, followeeId, this.backend);
    await this.notify((observer) => observer.unfollowed(followerId, followeeId));
  }

  /** The last traces of a deleted reader: their filters, their place in others', their timeline. */
  async forgetReader(userId: string): Promise<void> {
    await this.readerFilters.forget(userId);
    await this.backend.dropTimeline(userId);
    await this.graph.pairs.forget(userId);
    await this.announce({ users: [userId], allFilters: true });
  }

  /** A post goes with its reposts and likes; replies stay, their `replyTo` now null. */
  private async removePost(post: PostRecord): Promise<void> {
    await this.retract(post);
    for (const repost of await this.content.allRepostsOf(post.id)) await this.interactions.reposts.remove(post.id, repost.authorId);
    await this.interactions.likes.forgetPost(post.id);
    await this.interactions.reposts.forgetPost(post.id);
  }

  /**
   * A page of the viewer's timeline, hydrated, filtered by their mutes, blocks and keyword filters,
   * each post once, and never short while older (or newer) posts exist.
   */
  async timeline(userId: string, request: PageRequest, loads: PageLoads): Promise<Page<PostRecord>> {
    const [followees, view] = await Promise.all([this.graph.followingIds(userId), this.readerFilters.of(userId)]);
    const authorIds = this.authorsOf(userId, followees);
    const sources: EntrySource[] = [];
    if (!this.backend.materialized || (await this.hasTimelineGap(userId))) {
      sources.push((page) => this.content.pageByAuthors(authorIds, page));
    } else {
      sources.push((page) => this.backend.timeline(userId, page, authorIds));
      const pulling = await this.graph.pullingAmong(followees);
      if (pulling.length > 0) sources.push((page) => this.content.pulledPageByAuthors(pulling, page));
    }
    const reader: Reader = { id: userId, follows: new Set(authorIds), view };
    return mergeFiltered(sources, request, (candidates) => this.visibleTo(reader, candidates, loads));
  }

  /**
   * The reader and everyone they follow, one list per list of followees this process holds, so
   * what a backend derives from it (the cache's fingerprint) is derived once, not on every page.
   */
  private authorsOf(userId: string, followees: readonly string[]): readonly string[] {
    let authorIds = this.authorLists.get(followees);
    if (authorIds === undefined) {
      authorIds = [userId, ...followees];
      this.authorLists.set(followees, authorIds);
    }
    return authorIds;
  }

  /** The candidates this reader sees, in order (see visibility.ts). */
  private async visibleTo(reader: Reader, candidates: TimelineEntry[], loads: PageLoads): Promise<PostRecord[]> {
    const current = candidates.filter((entry) => passesGraph(entry, reader));
    const authorIds = new Set<string>();
    for (const entry of current) {
      authorIds.add(entry.authorId);
      if (entry.repostOf) authorIds.add(entry.repostOf.authorId);
    }
    const [posts, users] = await Promise.all([loads.posts(current), loads.users([...authorIds])]);
    const present = posts.filter(
      (post): post is PostRecord => post !== null && users.has(post.authorId) && (!post.repostOf || users.has(post.repostOf.authorId)),
    );
    return firstOccurrences(present, reader, (ids, reposters) => this.content.originalsAndReposts(ids, reposters));
  }

  /**
   * Whether a live event belongs in the viewer's timeline: the same rules as `timeline`, for one
   * post. Events come routed by author, so the follow of the author is already known.
   */
  async showsLive(viewerId: string, post: PostRecord): Promise<boolean> {
    const needsFollows = post.replyTo !== null || post.repostOf !== null;
    const [view, followees] = await Promise.all([
      this.readerFilters.of(viewerId),
      needsFollows ? this.graph.followingIds(viewerId) : Promise.resolve([post.authorId]),
    ]);
    const reader: Reader = { id: viewerId, follows: new Set([viewerId, ...followees]), view };
    if (!passesGraph(post, reader)) return false;
    const shown = await firstOccurrences([post], reader, (ids, reposters) => this.content.originalsAndReposts(ids, reposters));
    return shown.length === 1;
  }

  /**
   * A removal is news to the viewer unless they hide its author, or, for a repost, still see the
   * original: directly, or through another repost by someone they follow.
   */
  async showsLiveRemoval(viewerId: string, removal: { postId: ObjectId; authorId: string; originalAuthorId: string | null }): Promise<boolean> {
    const view = await this.readerFilters.of(viewerId);
    if (view.hides(removal.authorId)) return false;
    if (removal.originalAuthorId === null) return true;
    const follows = new Set([viewerId, ...(await this.graph.followingIds(viewerId))]);
    if (follows.has(removal.originalAuthorId)) return false;
    const reposters = [...follows].filter((handle) => !view.hides(handle));
    const { reposts } = await this.content.originalsAndReposts([removal.postId], reposters);
    return reposts.length === 0;
  }

  /** The user's posts and reposts, or nothing when they and the viewer block each other. */
  async postsOf(viewerId: string | null, handle: string, request: PageRequest): Promise<Page<PostRecord>> {
    if (viewerId && viewerId !== handle && (await this.readerFilters.of(viewerId)).isBlockedEitherWay(handle)) {
      return { items: [], hasMore: false };
    }
    return this.content.pageByAuthors([handle], request);
  }

  async mute(viewerId: string, handle: string): Promise<UserRecord> {
    const user = await this.otherUser(viewerId, handle, 'mute');
    await this.readerFilters.mute(viewerId, handle);
    await this.announce({ filters: [viewerId] });
    return user;
  }

  async unmute(viewerId: string, handle: string): Promise<UserRecord> {
    const user = await this.otherUser(viewerId, handle, 'unmute');
    await this.readerFilters.unmute(viewerId, handle);
    await this.announce({ filters: [viewerId] });
    return user;
  }

  async addKeywordFilter(viewerId: string, phrase: string): Promise<KeywordFilterRecord> {
    const filter = await this.readerFilters.addKeywordFilter(viewerId, phrase);
    await this.announce({ filters: [viewerId] });
    return filter;
  }

  async removeKeywordFilter(viewerId: string, id: string): Promise<boolean> {
    const removed = await this.readerFilters.removeKeywordFilter(viewerId, id);
    await this.announce({ filters: [viewerId] });
    return removed;
  }

  /** Every instance forgets what it holds of these users, readers' filters or timelines. */
  async announce(change: Partial<StoredChange>): Promise<void> {
    await this.notify((observer) => observer.changed(fullChange(change)));
  }

  /** Recorded first, so no follow can slip in between; then the follows go both ways. */
  async block(viewerId: string, handle: string): Promise<UserRecord> {
    await this.otherUser(viewerId, handle, 'block');
    await this.readerFilters.block(viewerId, handle);
    await this.announce({ filters: [viewerId, handle] });
    for (const [followerId, followeeId] of [[viewerId, handle], [handle, viewerId]] as const) {
      const { following } = await this.graph.unfollow(followerId, followeeId, this.backend);
      if (!following) await this.notify((observer) => observer.unfollowed(followerId, followeeId));
    }
    return this.freshUser(handle);
  }

  async unblock(viewerId: string, handle: string): Promise<UserRecord> {
    const user = await this.otherUser(viewerId, handle, 'unblock');
    await this.readerFilters.unblock(viewerId, handle);
    await this.announce({ filters: [viewerId, handle] });
    return user;
  }

  private async otherUser(viewerId: string, handle: string, action: string): Promise<UserRecord> {
    if (viewerId === handle) throw badInput(`You cannot ${action} yourself`);
    return this.freshUser(handle);
  }

  /** Returns the followed user with fresh counts. */
  async follow(followerId: string, followeeId: string): Promise<UserRecord> {
    await this.rateLimits.follow(followerId);
    await this.assertNotBlocked(followerId, followeeId, 'follow');
    let { following } = await this.graph.follow(followerId, followeeId, this.backend);
    // A block recorded while this follow was applied wins: its unfollow may have run first.
    const blocked = await this.readerFilters.of(followerId).then((view) => view.isBlockedEitherWay(followeeId));
    if (blocked) ({ following } = await this.graph.unfollow(followerId, followeeId, this.backend));
    await this.notify((observer) => (following ? observer.followed : observer.unfollowed).call(observer, followerId, followeeId));
    if (blocked) throw new AppError('FORBIDDEN', `You cannot follow ${followeeId}: one of you blocked the other`);
    return this.freshUser(followeeId);
  }

  async unfollow(followerId: string, followeeId: string): Promise<UserRecord> {
    await this.rateLimits.follow(followerId);
    const { following } = await this.graph.unfollow(followerId, followeeId, this.backend);
    await this.notify((observer) => (following ? observer.followed : observer.unfollowed).call(observer, followerId, followeeId));
    return this.freshUser(followeeId);
  }

  /**
   * Finishes follows, unfollows, likes, reposts and reply counts whose request died; the fanout
   * workers call this now and then.
   */
  async repairStalled(): Promise<number> {
    const repaired = await Promise.all([
      this.graph.pairs.repairStalled(this.backend).then((pairs) => {
        // Counts and follow lists changed under whatever this process holds.
        if (pairs > 0) this.graph.invalidateAll();
        return pairs;
      }),
      this.interactions.likes.repairStalled(),
      this.interactions.reposts.repairStalled(),
      this.content.repairStalled(),
    ]);
    return repaired.reduce((sum, count) => sum + count, 0);
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
