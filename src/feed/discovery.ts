import type { ContentService } from '../content/contentService.js';
import type { TagTrend, TagTrends } from '../content/tagTrends.js';
import { assertDisplayableText } from '../content/text.js';
import type { Page, PageRequest } from '../content/position.js';
import type { ChangePublisher } from '../changes/events.js';
import { changed } from '../changes/events.js';
import { badInput } from '../errors.js';
import type { FollowedTags } from '../graph/followedTags.js';
import type { ReaderFilters } from '../graph/readerFilters.js';
import type { ReaderView } from '../graph/readerView.js';
import type { PostRecord } from '../records/posts.js';
import { searchQuery, textMatches, type SearchQuery } from '../records/searchTokens.js';
import { mergeFiltered } from './pageMerge.js';
import type { PostVisibility } from './postVisibility.js';
import type { PageLoads, TimelineEntry } from './timelineEntry.js';

/** Longest search query, in characters (code points). */
export const maxQueryLength = 200;

export interface DiscoveryDependencies {
  content: ContentService;
  trends: TagTrends;
  followedTags: FollowedTags;
  visibility: Pick<PostVisibility, 'filterFor'>;
  readerFilters: Pick<ReaderFilters, 'of'>;
  changes: ChangePublisher;
}

/** A parsed search: what the API's cursors are scoped to, and what the index is asked. */
export interface PostSearch {
  query: SearchQuery;
}

/**
 * Finding posts by what they say: a tag's timeline, post search, trending tags, and the tags a
 * reader follows (whose posts `TimelineReading` merges into the home timeline). Pages are merged
 * and filtered like a timeline's (pageMerge.ts), so the viewer's mutes, blocks and keyword filters
 * apply and pages stay full; posts of accounts gone or being removed are left out at once.
 */
export class Discovery {
  constructor(private readonly deps: DiscoveryDependencies) {}

  /** A tag's public posts, newest first, paged both ways. `tag` is normalised (records/tags.ts). */
  async tagTimeline(viewerId: string | null, tag: string, request: PageRequest, loads: PageLoads): Promise<Page<PostRecord>> {
    const view = viewerId === null ? null : await this.deps.readerFilters.of(viewerId);
    return mergeFiltered([(page) => this.deps.content.discovery.tagPage([tag], page)], request, (candidates) => this.shown(viewerId, view, candidates, loads));
  }

  /** Parses a search query, refusing blank, over-long and undisplayable ones before any read. */
  parseSearch(query: string): PostSearch {
    const text = query.trim();
    if (text === '') throw badInput('query must not be blank');
    if ([...text].length > maxQueryLength) throw badInput(`query must be at most ${maxQueryLength} characters`);
    assertDisplayableText(text, 'query', { multiline: false });
    const parsed = searchQuery(text);
    if (!parsed) throw badInput('query must hold at least one word');
    return { query: parsed };
  }

  /**
   * Posts the viewer may see (records/posts.ts `visibleTo`, as a filter on the query) holding
   * every word of the search, newest first, paged both ways like a timeline.
   */
  async searchPosts(viewerId: string | null, search: PostSearch, request: PageRequest, loads: PageLoads): Promise<Page<PostRecord>> {
    const [visible, view] = await Promise.all([this.deps.visibility.filterFor(viewerId), viewerId === null ? null : this.deps.readerFilters.of(viewerId)]);
    return mergeFiltered([(page) => this.deps.content.discovery.searchPage(search.query, visible, page)], request, (candidates) =>
      this.shown(
        viewerId,
        view,
        candidates.filter((entry) => entry.body !== null && textMatches(entry.body.text, search.query)),
        loads,
      ),
    );
  }

  trendingTags(first: number): Promise<TagTrend[]> {
    return this.deps.trends.trending(first);
  }

  followedTags(userId: string): Promise<readonly string[]> {
    return this.deps.followedTags.of(userId);
  }

  async followTag(userId: string, tag: string): Promise<readonly string[]> {
    const tags = await this.deps.followedTags.follow(userId, tag);
    await this.deps.changes.publish(changed({ users: [userId] }));
    return tags;
  }

  async unfollowTag(userId: string, tag: string): Promise<readonly string[]> {
    const tags = await this.deps.followedTags.unfollow(userId, tag);
    await this.deps.changes.publish(changed({ users: [userId] }));
    return tags;
  }

  /** The candidates a viewer is shown: authors that exist, not hidden either way, no filtered keyword. */
  private async shown(viewerId: string | null, view: ReaderView | null, candidates: TimelineEntry[], loads: PageLoads): Promise<PostRecord[]> {
    const current = candidates.filter((entry) => !view || entry.authorId === viewerId || !view.hides(entry.authorId));
    const [posts, users] = await Promise.all([loads.posts(current), loads.users([...new Set(current.map((entry) => entry.authorId))])]);
    return posts.filter(
      (post): post is PostRecord => post !== null && users.has(post.authorId) && (!view || !view.matchesKeyword(post.body.text)),
    );
  }
}
