import type { Filter } from 'mongodb';
import type { UserDirectory } from '../graph/userDirectory.js';
import type { UserFeedState } from '../graph/userFeedState.js';
import type { UserGraphService } from '../graph/userGraphService.js';
import { publicOnly, visibleTo, type ContentDocument, type PostRecord } from '../records/posts.js';

/** The fields a visibility decision reads. */
export type VisibilityOf = Pick<PostRecord, 'authorId' | 'body'>;

export interface PostVisibilityDependencies {
  graph: Pick<UserGraphService, 'followingIds'>;
  feedState: Pick<UserFeedState, 'inboxSources'>;
  /** Which authors exist for readers: neither being deleted nor suspended (held in this process). */
  users: Pick<UserDirectory, 'getUsers'>;
}

/**
 * Who may see which post, for every path that hands a post to a reader: pages, `post(id)`,
 * `replyTo`, replies, interactions, and the features built on them. A post a viewer may not see
 * does not exist for them. The rule itself is `visibleTo` (records/posts.ts); this adds what it
 * needs to know: whom the viewer follows now, from the follow list this process holds.
 */
export class PostVisibility {
  constructor(private readonly deps: PostVisibilityDependencies) {}

  /**
   * Which of `posts` the viewer (null: nobody signed in) may see, aligned with them. Reads the
   * viewer's follow list only when a followers-only post of someone else is among them.
   */
  async canSee(viewerId: string | null, posts: readonly VisibilityOf[]): Promise<boolean[]> {
    const needsFollows = viewerId !== null && posts.some((post) => post.body.visibility === 'FOLLOWERS' && post.authorId !== viewerId);
    const follows = needsFollows ? new Set(await this.deps.graph.followingIds(viewerId)) : null;
    return posts.map((post) => visibleTo(post.authorId, post.body, viewerId, (authorId) => follows?.has(authorId) ?? false));
  }

  /**
   * Whether the viewer may act on this post (like, repost, reply, quote, bookmark): they may see
   * it and its author exists for readers. A suspended or departing author's posts are shown
   * nowhere, so they take no new likes, reposts, replies, quotes or bookmarks either. The author is
   * read through the user directory, which holds the authors of what the viewer was shown.
   */
  async mayActOn(viewerId: string, post: VisibilityOf): Promise<boolean> {
    const [[seen], authors] = await Promise.all([this.canSee(viewerId, [post]), this.deps.users.getUsers([post.authorId])]);
    return seen === true && authors.length === 1;
  }

  /** The posts of `posts` the viewer may see, in order. */
  async visible<T extends VisibilityOf>(viewerId: string | null, posts: readonly T[]): Promise<T[]> {
    const seen = await this.canSee(viewerId, posts);
    return posts.filter((_, index) => seen[index]);
  }

  /**
   * The same rule as a filter on `content`, for lists read by query (replies): public posts, the
   * viewer's own, those addressed to them, and the followers-only posts of whom they follow now.
   * Only followees who ever posted for followers only are named, so the filter stays small.
   */
  async filterFor(viewerId: string | null): Promise<Filter<ContentDocument>> {
    if (viewerId === null) return publicOnly;
    const sources = await this.deps.feedState.inboxSources(viewerId, await this.deps.graph.followingIds(viewerId));
    const clauses: Filter<ContentDocument>[] = [publicOnly, { _a: viewerId }];
    if (sources.addressed) clauses.push({ _to: viewerId });
    const followees = sources.followersOnlyAuthors.filter((authorId) => authorId !== viewerId);
    if (followees.length > 0) clauses.push({ _v: 'f', _a: { $in: followees } });
    return { $or: clauses };
  }
}
