import type { ObjectId } from 'mongodb';
import { counted, type ChangePublisher } from '../changes/events.js';
import { decodeBookmarkCursor, encodeBookmarkCursor, type Bookmarks } from '../content/bookmarks.js';
import type { ContentService } from '../content/contentService.js';
import { AppError, notFound } from '../errors.js';
import type { ReaderFilters } from '../graph/readerFilters.js';
import type { PostVisibility } from './postVisibility.js';
import { inListOrder, type ListPage, type ListPageRequest } from '../records/pages.js';
import { parsePostId, type PostRecord } from '../records/posts.js';

/** How a page of bookmarks gets its posts and authors: the request's batched loads. */
export interface BookmarkLoads {
  /** Aligned with `ids`; null for a post that no longer exists. */
  posts(ids: readonly ObjectId[]): Promise<(PostRecord | null)[]>;
  /** Which of `handles` are existing users. */
  users(handles: readonly string[]): Promise<Set<string>>;
}

export interface BookmarkedPost {
  post: PostRecord;
  cursor: string;
}

/**
 * A user's bookmarks: adding and removing them, and reading them, newest bookmark first, without
 * the posts deleted since, whose author's account is gone, or who blocked the reader or was blocked
 * by them (as their posts are everywhere else). A post's deletion removes its bookmarks; one that
 * raced it is dropped by the first page that finds its post gone.
 */
export class Bookmarking {
  constructor(
    private readonly bookmarks: Bookmarks,
    private readonly content: ContentService,
    private readonly readerFilters: Pick<ReaderFilters, 'of' | 'assertNotBlocked'>,
    private readonly visibility: Pick<PostVisibility, 'canSee' | 'mayActOn'>,
    private readonly changes: ChangePublisher,
  ) {}

  ensureIndexes(): Promise<void> {
    return this.bookmarks.ensureIndexes();
  }

  /** Which of these posts the viewer has bookmarked: one query for a page. */
  among(userId: string, postIds: readonly ObjectId[]): Promise<Set<string>> {
    return this.bookmarks.among(userId, postIds);
  }

  async bookmark(userId: string, id: string): Promise<PostRecord> {
    const post = await this.existingPost(id, userId);
    await this.readerFilters.assertNotBlocked(userId, post.authorId, 'bookmark a post of');
    await this.bookmarks.add(post.id, userId);
    // A delete that ran meanwhile removed the post's bookmarks before this one was stored.
    const [stored] = await Promise.all([this.content.lookups.exists(post.id), this.announce(userId, post.id)]);
    if (!stored) {
      await this.bookmarks.remove(post.id, userId);
      throw notFound(`No post with id "${id}"`);
    }
    return post;
  }

  async unbookmark(userId: string, id: string): Promise<PostRecord> {
    const postId = parsePostId(id);
    if (postId) {
      await this.bookmarks.remove(postId, userId);
      await this.announce(userId, postId);
    }
    return this.existingPost(id, userId);
  }

  /** Every instance forgets what it held of the viewer's bookmark of the post. */
  private announce(userId: string, postId: ObjectId): Promise<void> {
    return this.changes.publish(counted(postId, null, { id: userId, state: 'bookmark' }));
  }

  /** One page of `ownerId`'s bookmarks, for them only; never short while more bookmarks exist. */
  async page(
    viewerId: string,
    ownerId: string,
    request: ListPageRequest<string>,
    loads: BookmarkLoads,
  ): Promise<ListPage<BookmarkedPost>> {
    if (viewerId !== ownerId) throw new AppError('FORBIDDEN', 'Bookmarks are visible only to their owner');
    const { direction } = request;
    let from = request.from === null ? null : decodeBookmarkCursor(request.from);
    const view = await this.readerFilters.of(viewerId);
    // Nearest to the cursor first, whichever way the page goes.
    const kept: BookmarkedPost[] = [];
    for (;;) {
      const page = await this.bookmarks.page(ownerId, { direction, from, limit: request.limit + 1 - kept.length });
      const posts = await loads.posts(page.items.map((item) => item.postId));
      const found = posts.filter((post): post is PostRecord => post !== null);
      const [authors, seen] = await Promise.all([loads.users([...new Set(found.map((post) => post.authorId))]), this.visibility.canSee(viewerId, found)]);
      // A followers-only post stays bookmarked but is not shown while its author is not followed.
      const visible = new Set(found.filter((_, index) => seen[index]));
      const missing: ObjectId[] = [];
      page.items.forEach((item, index) => {
        const post = posts[index];
        if (!post) missing.push(item.postId);
        else if (visible.has(post) && authors.has(post.authorId) && !view.isBlockedEitherWay(post.authorId)) kept.push({ post, cursor: encodeBookmarkCursor(item) });
      });
      await this.bookmarks.forgetMissing(ownerId, missing);
      if (kept.length > request.limit || !page.hasMore) return inListOrder(direction, kept, request.limit);
      from = page.items.at(-1)!;
    }
  }

  /** A post the viewer may see, by an author readers see: one they may not does not exist for them. */
  private async existingPost(id: string, viewerId: string): Promise<PostRecord> {
    const postId = parsePostId(id);
    const post = postId && (await this.content.lookups.getPost(postId));
    if (!post || !(await this.visibility.mayActOn(viewerId, post))) throw notFound(`No post with id "${id}"`);
    return post;
  }
}
