import type { ObjectId } from 'mongodb';
import type { ContentService } from '../content/contentService.js';
import type { Page, PageRequest, PostPosition } from '../content/position.js';
import type { ReaderFilters } from '../graph/readerFilters.js';
import type { UserFeedState } from '../graph/userFeedState.js';
import type { UserGraphService } from '../graph/userGraphService.js';
import type { HeldList } from '../graph/userLists.js';
import { visibleTo, type PostRecord, type Visibility } from '../records/posts.js';
import { inListOrder, type ListPage, type ListPageRequest } from '../records/pages.js';
import type { FeedBackend } from './feedBackend.js';
import type { PostVisibility } from './postVisibility.js';
import { mergeFiltered, type EntrySource } from './pageMerge.js';
import type { InteractionStores } from './publishing.js';
import type { ReaderActivity } from './readerActivity.js';
import type { PageLoads, TimelineEntry } from './timelineEntry.js';
import { firstOccurrences, passesGraph, passesTags, type Reader } from './visibility.js';

/** What a removal event says of the post that went. */
export interface LiveRemoval {
  postId: ObjectId;
  authorId: string;
  originalAuthorId: string | null;
  visibility: Visibility;
  audience: readonly string[];
}

/** What a reader sees: their timeline, an author's posts, and whether a live event belongs in it. */
export interface TimelineReader {
  timeline(userId: string, request: PageRequest, loads: PageLoads): Promise<Page<PostRecord>>;
  postsOf(viewerId: string | null, handle: string, request: PageRequest): Promise<Page<PostRecord>>;
  /** Replies the viewer may see, oldest first, paged either way. */
  repliesTo(viewerId: string | null, parentId: ObjectId, request: ListPageRequest<PostPosition>, loads: Pick<PageLoads, 'users'>): Promise<ListPage<PostRecord>>;
  showsLive(viewerId: string, post: PostRecord): Promise<boolean>;
  showsLiveRemoval(viewerId: string, removal: LiveRemoval): Promise<boolean>;
  viewerLikes(userId: string, postIds: readonly PostRecord['id'][]): Promise<Set<string>>;
  viewerReposts(userId: string, postIds: readonly PostRecord['id'][]): Promise<Set<string>>;
}

export interface TimelineReadingDependencies {
  graph: Pick<UserGraphService, 'followingIds'>;
  feedState: Pick<UserFeedState, 'readerSources' | 'limitedMarks'>;
  visibility: PostVisibility;
  content: ContentService;
  backend: FeedBackend;
  readerFilters: Pick<ReaderFilters, 'of'>;
  interactions: InteractionStores;
  activity: ReaderActivity;
  /** The followed tags' public posts (content/discoveryScans.ts). */
  tagPosts: Pick<ContentService['discovery'], 'tagPage'>;
}

/**
 * The read side of timelines: merges the reader's materialized timeline (public posts only) with
 * the posts of the high-follower authors they follow (pulled from `content` at read time) and the
 * reader's inbox (the limited posts they may see, see ContentService.inboxPage), and keeps only
 * entries of authors the reader follows now, so a delivery that raced an unfollow never shows.
 * Live events pass the same rules, one post at a time (visibility.ts holds them).
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
    const { pulling, inbox, followingVersion, followedTags } = await this.deps.feedState.readerSources(userId, followees);
    if (!this.backend.materialized || (await this.activity.hasTimelineGap(userId))) {
      sources.push((page) => this.content.pageByAuthors(authorIds, page));
    } else {
      sources.push((page) => this.backend.timeline(userId, page, authorIds, followingVersion));
      // The reader's own public posts are never delivered to their timeline: their outbox, held in
      // this process and changed in place by each post, has every one, pulled ones included.
      sources.push((page) => this.content.pageByAuthors([userId], page));
      if (pulling.length > 0) sources.push((page) => this.content.pulledPageByAuthors(pulling, page));
    }
    // Limited posts never enter timelines or outboxes: whoever may see one finds it here, so its
    // followers-only audience is whoever follows its author at this read.
    if (inbox.addressed || inbox.followersOnlyAuthors.length > 0) sources.push((page) => this.content.inboxPage(inbox, page));
    // Followed tags are pulled like high-follower authors: one query for all of them, never a write per follower.
    if (followedTags.length > 0) sources.push((page) => this.deps.tagPosts.tagPage(followedTags, page));
    const reader: Reader = { id: userId, follows: new Set(authorIds), view, tags: new Set(followedTags) };
    return mergeFiltered(sources, request, (candidates) => this.visibleTo(reader, candidates, loads));
  }

  /**
   * A page of one of the owner's lists: its members' posts and reposts (fanout on read over the
   * members, from their outboxes or one `content` query), through the same filters as `timeline`
   * with the members in place of the followees. Its cost follows the list's size, never the
   * owner's follows.
   */
  async listTimeline(ownerId: string, list: HeldList, request: PageRequest, loads: PageLoads): Promise<Page<PostRecord>> {
    const [view, { inbox }] = await Promise.all([this.readerFilters.of(ownerId), this.deps.feedState.readerSources(ownerId, list.members)]);
    const reader: Reader = { id: ownerId, follows: list.memberSet, view };
    const sources: EntrySource[] = [(page) => this.content.pageByAuthors(list.members, page)];
    // The members' limited posts the owner may see, as the home timeline's inbox finds them, but of members only.
    const followersOnlyAuthors = inbox.followersOnlyAuthors.filter((authorId) => list.memberSet.has(authorId));
    if (inbox.addressed || followersOnlyAuthors.length > 0) {
      sources.push((page) => this.content.listInboxPage(ownerId, list.members, { addressed: inbox.addressed, followersOnlyAuthors }, page));
    }
    return mergeFiltered(sources, request, (candidates) => this.visibleTo(reader, candidates, loads));
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
    const current = candidates.filter((entry) => passesGraph(entry, reader) || passesTags(entry, reader));
    const authorIds = new Set<string>();
    for (const entry of current) {
      authorIds.add(entry.authorId);
      if (entry.repostOf) authorIds.add(entry.repostOf.authorId);
    }
    const [posts, users] = await Promise.all([loads.posts(current), loads.users([...authorIds])]);
    const present = posts.filter(
      (post): post is PostRecord => post !== null && users.has(post.authorId) && (!post.repostOf || users.has(post.repostOf.authorId)),
    );
    // What a reader is shown is what they like next: held, a like or repost of it reads nothing.
    this.content.lookups.hold(present);
    return firstOccurrences(present, reader, (ids, reposters) => this.content.scans.originalsAndReposts(ids, reposters));
  }

  /**
   * Whether a live event belongs in the viewer's timeline: the same rules as `timeline`, for one
   * post. Events come routed by author, so the follow of the author is already known.
   */
  async showsLive(viewerId: string, post: PostRecord): Promise<boolean> {
    // A tagged post may come routed by a followed tag rather than by its author.
    const tagged = post.body.tags.length > 0;
    const needsFollows = post.replyTo !== null || post.repostOf !== null || tagged;
    const [view, followees, tags] = await Promise.all([
      this.readerFilters.of(viewerId),
      needsFollows ? this.graph.followingIds(viewerId) : Promise.resolve([post.authorId]),
      tagged ? this.deps.feedState.readerSources(viewerId, []).then((sources) => sources.followedTags) : [],
    ]);
    const reader: Reader = { id: viewerId, follows: new Set([viewerId, ...followees]), view, tags: new Set(tags) };
    return this.showsOne(reader, post);
  }

  /** The page rules for one live post: what `visibleTo` decides for a candidate. */
  private async showsOne(reader: Reader, post: PostRecord): Promise<boolean> {
    if (!passesGraph(post, reader) && !passesTags(post, reader)) return false;
    const shown = await firstOccurrences([post], reader, (ids, reposters) => this.content.scans.originalsAndReposts(ids, reposters));
    return shown.length === 1;
  }

  /**
   * A removal is news to the viewer unless they hide its author, or, for a repost, still see the
   * original: directly, or through another repost by someone they follow.
   */
  async showsLiveRemoval(viewerId: string, removal: LiveRemoval): Promise<boolean> {
    const view = await this.readerFilters.of(viewerId);
    if (view.hides(removal.authorId)) return false;
    // Routed to the author's followers too: only its audience ever saw a mentioned-only post.
    if (!visibleTo(removal.authorId, removal, viewerId, () => true)) return false;
    if (removal.originalAuthorId === null) return true;
    const follows = new Set([viewerId, ...(await this.graph.followingIds(viewerId))]);
    if (follows.has(removal.originalAuthorId)) return false;
    const reposters = [...follows].filter((handle) => !view.hides(handle));
    const { reposts } = await this.content.scans.originalsAndReposts([removal.postId], reposters);
    return reposts.length === 0;
  }

  /**
   * The user's posts and reposts that the viewer may see, or nothing when they and the viewer
   * block each other. Limited posts are asked for only when the author ever wrote one the viewer
   * could see, so a public profile costs what it did.
   */
  async postsOf(viewerId: string | null, handle: string, request: PageRequest): Promise<Page<PostRecord>> {
    if (viewerId && viewerId !== handle && (await this.readerFilters.of(viewerId)).isBlockedEitherWay(handle)) {
      return { items: [], hasMore: false };
    }
    const limited = viewerId === null ? null : await this.limitedAccess(viewerId, handle);
    if (!limited) return this.content.pageByAuthors([handle], request);
    const sources: EntrySource[] = [
      (page) => this.content.pageByAuthors([handle], page),
      (page) => this.content.limitedPageBy(handle, limited, page),
    ];
    return mergeFiltered(sources, request, async (candidates) => candidates as PostRecord[]);
  }

  /** Which of `handle`'s limited posts the viewer may see; null when none can exist. */
  private async limitedAccess(viewerId: string, handle: string): Promise<{ id: string; follows: boolean; addressed: boolean } | null> {
    const marks = await this.deps.feedState.limitedMarks([handle, viewerId]);
    const author = marks.get(handle);
    if (!author || (!author.followersOnly && !author.inbox)) return null;
    if (viewerId === handle) return { id: viewerId, follows: true, addressed: true };
    const addressed = author.inbox && marks.get(viewerId)?.inbox === true;
    const follows = author.followersOnly && (await this.graph.followingIds(viewerId)).includes(handle);
    return follows || addressed ? { id: viewerId, follows, addressed } : null;
  }

  /**
   * Replies to a post that the viewer may see, oldest first. Replies across a block, either way,
   * and those whose author's account is being removed are left out, as in timelines; the page
   * reads on past them instead of coming back short.
   */
  async repliesTo(viewerId: string | null, parentId: ObjectId, request: ListPageRequest<PostPosition>, loads: Pick<PageLoads, 'users'>): Promise<ListPage<PostRecord>> {
    const [visible, view] = await Promise.all([this.deps.visibility.filterFor(viewerId), viewerId === null ? null : this.readerFilters.of(viewerId)]);
    const { direction } = request;
    // One reply more than the page, so that `hasMore` says whether one the viewer may see follows;
    // nearest to the cursor first, whichever way the page goes.
    const kept: PostRecord[] = [];
    for (let from = request.from; ; ) {
      const page = await this.content.scans.replies(parentId, { direction, from, limit: request.limit + 1 - kept.length }, visible);
      const authors = await loads.users([...new Set(page.items.map((reply) => reply.authorId))]);
      kept.push(...page.items.filter((reply) => authors.has(reply.authorId) && !(reply.authorId !== viewerId && view?.isBlockedEitherWay(reply.authorId))));
      const last = page.items.at(-1);
      if (kept.length > request.limit || !page.hasMore || !last) return inListOrder(direction, kept, request.limit);
      from = last;
    }
  }
}
