import type { ObjectId } from 'mongodb';
import type { ContentService } from '../content/contentService.js';
import type { Page, PageRequest } from '../content/position.js';
import type { ReaderFilters } from '../graph/readerFilters.js';
import type { UserFeedState } from '../graph/userFeedState.js';
import type { UserGraphService } from '../graph/userGraphService.js';
import type { HeldList } from '../graph/userLists.js';
import type { PostRecord } from '../records/posts.js';
import type { FeedBackend } from './feedBackend.js';
import { mergeFiltered, type EntrySource } from './pageMerge.js';
import type { InteractionStores } from './publishing.js';
import type { ReaderActivity } from './readerActivity.js';
import type { PageLoads, TimelineEntry } from './timelineEntry.js';
import { firstOccurrences, passesGraph, type Reader } from './visibility.js';

/** What a reader sees: their timeline, an author's posts, and whether a live event belongs in it. */
export interface TimelineReader {
  timeline(userId: string, request: PageRequest, loads: PageLoads): Promise<Page<PostRecord>>;
  postsOf(viewerId: string | null, handle: string, request: PageRequest): Promise<Page<PostRecord>>;
  showsLive(viewerId: string, post: PostRecord): Promise<boolean>;
  showsLiveRemoval(viewerId: string, removal: { postId: ObjectId; authorId: string; originalAuthorId: string | null }): Promise<boolean>;
  viewerLikes(userId: string, postIds: readonly PostRecord['id'][]): Promise<Set<string>>;
  viewerReposts(userId: string, postIds: readonly PostRecord['id'][]): Promise<Set<string>>;
}

export interface TimelineReadingDependencies {
  graph: Pick<UserGraphService, 'followingIds'>;
  feedState: Pick<UserFeedState, 'pullingAmong'>;
  content: ContentService;
  backend: FeedBackend;
  readerFilters: Pick<ReaderFilters, 'of'>;
  interactions: InteractionStores;
  activity: ReaderActivity;
}

/**
 * The read side of timelines: merges the reader's materialized timeline with the posts of the
 * high-follower authors they follow (pulled from `content` at read time), and keeps only entries of
 * authors the reader follows now, so a delivery that raced an unfollow never shows. Live events
 * pass the same rules, one post at a time (visibility.ts holds them).
 */
export class TimelineReading implements TimelineReader {
  readonly backend: FeedBackend;
  private readonly graph: TimelineReadingDependencies['graph'];
  private readonly content: ContentService;
  private readonly readerFilters: TimelineReadingDependencies['readerFilters'];
  private readonly activity: ReaderActivity;
  private readonly authorLists = new WeakMap<readonly string[], readonly string[]>();

  constructor(private readonly deps: TimelineReadingDependencies) {
    this.backend = deps.backend;
    this.graph = deps.graph;
    this.content = deps.content;
    this.readerFilters = deps.readerFilters;
    this.activity = deps.activity;
  }

  /** Which of these posts the viewer likes / has reposted: one query each for a whole page. */
  viewerLikes(userId: string, postIds: readonly PostRecord['id'][]): Promise<Set<string>> {
    return this.deps.interactions.likes.among(userId, postIds);
  }

  viewerReposts(userId: string, postIds: readonly PostRecord['id'][]): Promise<Set<string>> {
    return this.deps.interactions.reposts.among(userId, postIds);
  }

  /**
   * A page of the viewer's timeline, hydrated, filtered by their mutes, blocks and keyword filters,
   * each post once, and never short while older (or newer) posts exist.
   */
  async timeline(userId: string, request: PageRequest, loads: PageLoads): Promise<Page<PostRecord>> {
    const [followees, view] = await Promise.all([this.graph.followingIds(userId), this.readerFilters.of(userId)]);
    const authorIds = this.authorsOf(userId, followees);
    const sources: EntrySource[] = [];
    if (!this.backend.materialized || (await this.activity.hasTimelineGap(userId))) {
      sources.push((page) => this.content.pageByAuthors(authorIds, page));
    } else {
      sources.push((page) => this.backend.timeline(userId, page, authorIds));
      const pulling = await this.deps.feedState.pullingAmong(followees);
      if (pulling.length > 0) sources.push((page) => this.content.pulledPageByAuthors(pulling, page));
    }
    const reader: Reader = { id: userId, follows: new Set(authorIds), view };
    return mergeFiltered(sources, request, (candidates) => this.visibleTo(reader, candidates, loads));
  }

  /**
   * A page of one of the owner's lists: its members' posts and reposts (fanout on read over the
   * members, from their outboxes or one `content` query), through the same filters as `timeline`
   * with the members in place of the followees. Its cost follows the list's size, never the
   * owner's follows.
   */
  async listTimeline(ownerId: string, list: HeldList, request: PageRequest, loads: PageLoads): Promise<Page<PostRecord>> {
    const reader: Reader = { id: ownerId, follows: list.memberSet, view: await this.readerFilters.of(ownerId) };
    return mergeFiltered([(page) => this.content.pageByAuthors(list.members, page)], request, (candidates) => this.visibleTo(reader, candidates, loads));
  }

  /** Whether a live event belongs in the list's timeline: the rules of `listTimeline`, for one post. */
  async showsInListLive(ownerId: string, list: HeldList, post: PostRecord): Promise<boolean> {
    const reader: Reader = { id: ownerId, follows: list.memberSet, view: await this.readerFilters.of(ownerId) };
    return this.showsOne(reader, post);
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
    return firstOccurrences(present, reader, (ids, reposters) => this.content.scans.originalsAndReposts(ids, reposters));
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
    return this.showsOne(reader, post);
  }

  /** The page rules for one live post: what `visibleTo` decides for a candidate. */
  private async showsOne(reader: Reader, post: PostRecord): Promise<boolean> {
    if (!passesGraph(post, reader)) return false;
    const shown = await firstOccurrences([post], reader, (ids, reposters) => this.content.scans.originalsAndReposts(ids, reposters));
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
    const { reposts } = await this.content.scans.originalsAndReposts([removal.postId], reposters);
    return reposts.length === 0;
  }

  /** The user's posts and reposts, or nothing when they and the viewer block each other. */
  async postsOf(viewerId: string | null, handle: string, request: PageRequest): Promise<Page<PostRecord>> {
    if (viewerId && viewerId !== handle && (await this.readerFilters.of(viewerId)).isBlockedEitherWay(handle)) {
      return { items: [], hasMore: false };
    }
    return this.content.pageByAuthors([handle], request);
  }
}
