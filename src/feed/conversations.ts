import type { Filter, ObjectId } from 'mongodb';
import { changed, type ChangePublisher } from '../changes/events.js';
import type { ContentService } from '../content/contentService.js';
import type { Pins } from '../content/pins.js';
import type { Page, PageRequest } from '../content/position.js';
import { AppError, notFound } from '../errors.js';
import type { ReaderFilters } from '../graph/readerFilters.js';
import type { ListPageRequest } from '../records/pages.js';
import { maxAncestors, parsePostId, type ContentDocument, type PostRecord } from '../records/posts.js';
import type { PostVisibility } from './postVisibility.js';

export interface ConversationDependencies {
  content: ContentService;
  visibility: PostVisibility;
  readerFilters: Pick<ReaderFilters, 'of'>;
  pins: Pins;
  changes: ChangePublisher;
}

/**
 * Conversations as a reader sees them: a post's ancestors and the reply tree below it, its quotes,
 * and pinned posts. Every list applies who may see what (PostVisibility) and blocks either way,
 * in the query where a list is paged, so no page comes back short.
 */
export class Conversations {
  constructor(private readonly deps: ConversationDependencies) {}

  /** Root first, those the viewer may see: a deleted or hidden one ends the chain (the posts above it are left out). One read. */
  async ancestors(viewerId: string | null, post: PostRecord): Promise<PostRecord[]> {
    const chain = await this.deps.content.threads.ancestors(post);
    const present = chain.filter((ancestor): ancestor is PostRecord => ancestor !== null);
    const [seen, view] = await Promise.all([this.deps.visibility.canSee(viewerId, present), viewerId === null ? null : this.deps.readerFilters.of(viewerId)]);
    const shown = new Set(present.filter((ancestor, index) => seen[index] && !(ancestor.authorId !== viewerId && view?.isBlockedEitherWay(ancestor.authorId))));
    const kept: PostRecord[] = [];
    for (let index = chain.length - 1; index >= 0; index--) {
      const ancestor = chain[index];
      if (!ancestor || !shown.has(ancestor)) break;
      kept.unshift(ancestor);
    }
    return kept.slice(-maxAncestors);
  }

  /** The reply tree below `post` in reading order, either way from a cursor's key: one query per page. */
  async descendants(viewerId: string | null, post: PostRecord, request: ListPageRequest<string>): Promise<Page<PostRecord>> {
    return this.deps.content.threads.descendants(post, request, await this.shownTo(viewerId));
  }

  /** Public quotes of a post the viewer may see, newest first: one query per page. */
  async quotes(viewerId: string | null, postId: ObjectId, request: PageRequest): Promise<Page<PostRecord>> {
    return this.deps.content.threads.quotes(postId, request, await this.shownTo(viewerId));
  }

  /** Pins one of the viewer's own posts (FORBIDDEN for another's); at most 5, idempotent. */
  async pin(viewerId: string, id: string): Promise<void> {
    const post = await this.ownPost(viewerId, id);
    await this.pinStored(viewerId, post.id);
    await this.pinsChanged(viewerId);
  }

  private async pinStored(viewerId: string, postId: ObjectId): Promise<void> {
    try {
      await this.deps.pins.pin(viewerId, postId);
    } catch (error) {
      // A deleted post leaves the pins: it is let go of here, when its place is wanted, rather than by every deletion.
      if (!(error instanceof AppError) || error.code !== 'BAD_USER_INPUT') throw error;
      const pinned = (await this.deps.pins.of([viewerId])).get(viewerId) ?? [];
      const existing = await this.deps.content.lookups.existing(pinned);
      const gone = pinned.filter((pinnedId) => !existing.has(pinnedId.toHexString()));
      if (gone.length === 0) throw error;
      for (const pinnedId of gone) await this.deps.pins.unpin(viewerId, pinnedId);
      await this.deps.pins.pin(viewerId, postId);
    }
  }

  async unpin(viewerId: string, id: string): Promise<void> {
    const postId = parsePostId(id);
    const post = postId && (await this.deps.content.lookups.getPost(postId));
    // A deleted post has left the pins already; unpinning it again changes nothing.
    if (!post) {
      if (postId) await this.deps.pins.unpin(viewerId, postId);
    } else {
      if (post.authorId !== viewerId) throw new AppError('FORBIDDEN', 'Only the author can unpin a post');
      await this.deps.pins.unpin(viewerId, post.id);
    }
    await this.pinsChanged(viewerId);
  }

  /** Every instance forgets the pins it holds of the author: pins are part of what others see of them. */
  private pinsChanged(authorId: string): Promise<void> {
    return this.deps.changes.publish(changed({ users: [authorId] }));
  }

  /** Authors' pinned post ids, through the in-process tier. */
  pinsOf(authorIds: readonly string[]): Promise<Map<string, ObjectId[]>> {
    return this.deps.pins.heldOf(authorIds);
  }

  /** Whether an edit of this post is news to the viewer live: they may see it and do not hide its author. */
  async showsLiveEdit(viewerId: string, postId: ObjectId): Promise<boolean> {
    const [post] = await this.deps.content.lookups.cachedPosts([postId]);
    if (!post) return false;
    const [[seen], view] = await Promise.all([this.deps.visibility.canSee(viewerId, [post]), this.deps.readerFilters.of(viewerId)]);
    return seen === true && (post.authorId === viewerId || !view.hides(post.authorId));
  }

  private async ownPost(viewerId: string, id: string): Promise<PostRecord> {
    const postId = parsePostId(id);
    const post = postId && (await this.deps.content.lookups.getPost(postId));
    if (!post || !(await this.deps.visibility.canSee(viewerId, [post]))[0]) throw notFound(`No post with id "${id}"`);
    if (post.authorId !== viewerId) throw new AppError('FORBIDDEN', 'Only the author can pin a post');
    return post;
  }

  /** What a list shows the viewer, as a filter: the visibility rule, and nobody blocked either way. */
  private async shownTo(viewerId: string | null): Promise<Filter<ContentDocument>> {
    const [visible, view] = await Promise.all([this.deps.visibility.filterFor(viewerId), viewerId === null ? null : this.deps.readerFilters.of(viewerId)]);
    const hidden = view ? [...view.blocked, ...view.blockedBy] : [];
    return hidden.length === 0 ? visible : { $and: [visible, { _a: { $nin: hidden } }] };
  }
}
