import type { ObjectId } from 'mongodb';
import type { RateLimits } from '../auth/rateLimits.js';
import type { Bookmarks } from '../content/bookmarks.js';
import type { ContentService } from '../content/contentService.js';
import type { Interactions } from '../content/interactions.js';
import { postText } from '../content/text.js';
import { AppError, badInput, notFound } from '../errors.js';
import type { ReaderFilters } from '../graph/readerFilters.js';
import type { UserDirectory } from '../graph/userDirectory.js';
import type { MediaService } from '../media/mediaService.js';
import { maxMediaPerPost } from '../records/media.js';
import { narrowerVisibility, newBody, parsePostId, type PostBody, type PostCounts, type PostRecord, type Visibility } from '../records/posts.js';
import type { PostDelivery } from './postDelivery.js';
import type { PostVisibility } from './postVisibility.js';
import { noRequest, type Scope } from '../observability/requestScope.js';

/** The likes and reposts kept by ContentService's interactions. */
export interface InteractionStores {
  likes: Interactions;
  reposts: Interactions;
}

/** What a user does to posts: write, delete, like and repost them. */
export interface PostPublishing {
  post(authorId: string, text: string, scope: Scope, replyToId?: string | null, visibility?: Visibility, mediaIds?: readonly string[], quoteOfId?: string | null): Promise<PostRecord>;
  deletePost(viewerId: string, id: string, scope: Scope): Promise<boolean>;
  likePost(userId: string, id: string, scope: Scope): Promise<PostRecord>;
  unlikePost(userId: string, id: string, scope: Scope): Promise<PostRecord>;
  repost(userId: string, id: string, scope: Scope): Promise<PostRecord>;
  undoRepost(userId: string, id: string, scope: Scope): Promise<PostRecord>;
}

export interface PublishingDependencies {
  delivery: PostDelivery;
  content: ContentService;
  interactions: InteractionStores;
  rateLimits: RateLimits;
  readerFilters: Pick<ReaderFilters, 'assertNotBlocked'>;
  users: Pick<UserDirectory, 'getUsers'>;
  visibility: Pick<PostVisibility, 'mayActOn'>;
  bookmarks: Pick<Bookmarks, 'forgetPost' | 'forgetUser'>;
  media: Pick<MediaService, 'claim' | 'markGone' | 'deleteGone'>;
}

/**
 * Posts, deletes, likes and reposts: the checks a user's action must pass (rate limits, blocks,
 * authorship), then the delivery (PostDelivery) or the interaction that carries it out.
 */
export class Publishing implements PostPublishing {
  private readonly delivery: PostDelivery;
  private readonly content: ContentService;
  private readonly interactions: InteractionStores;

  constructor(private readonly deps: PublishingDependencies) {
    this.delivery = deps.delivery;
    this.content = deps.content;
    this.interactions = deps.interactions;
  }

  /**
   * Returns as soon as the post is stored (its author's pages show it from their outbox) and
   * queued for everyone else, whatever the audience. The fanout task is queued before the post is
   * stored, so no crash can leave a stored post without its delivery; a task whose post never
   * arrives is dropped.
   */
  async post(
    authorId: string,
    text: string,
    scope: Scope,
    replyToId: string | null = null,
    visibility: Visibility = 'PUBLIC',
    mediaIds: readonly string[] = [],
    quoteOfId: string | null = null,
  ): Promise<PostRecord> {
    // Bad text or too many images cost nothing against the rate limit; with images, text may be empty.
    const message = postText(text, { mayBeEmpty: mediaIds.length > 0 });
    if (mediaIds.length > maxMediaPerPost) throw badInput(`A post takes at most ${maxMediaPerPost} images`);
    // What the post needs to read (its author, the post it answers) is read beside the rate
    // limit's write, not after it: a reply waits on one round trip before it is stored, not two.
    const [, authorPulled, replyTo, quoted] = await Promise.all([
      this.deps.rateLimits.post(authorId, scope),
      this.delivery.isPulled(authorId),
      replyToId === null ? null : this.existingPost(authorId, replyToId),
      quoteOfId === null ? null : this.existingPost(authorId, quoteOfId),
    ]);
    if (replyTo) await this.deps.readerFilters.assertNotBlocked(authorId, replyTo.authorId, 'reply to');
    if (quoted) {
      // A quote shows the quoted post to the quote's readers: only a post everyone may see, as for reposts.
      if (quoted.body.visibility !== 'PUBLIC') throw new AppError('FORBIDDEN', 'Only public posts can be quoted');
      await this.deps.readerFilters.assertNotBlocked(authorId, quoted.authorId, 'quote');
    }
    // A reply is never seen by more people than its parent: a wider reply is narrowed to the parent's.
    const shownTo = replyTo ? narrowerVisibility(visibility, replyTo.body.visibility) : visibility;
    const said = newBody(message, undefined, undefined, quoted ? { id: quoted.id, authorId: quoted.authorId } : null);
    const body: PostBody = shownTo === 'MENTIONED' ? { ...said, visibility: shownTo, audience: await this.audienceOf(authorId, said, replyTo) } : { ...said, visibility: shownTo };
    // Limited posts are never pulled: readers' inbox queries find them instead.
    const pulled = shownTo === 'PUBLIC' && authorPulled;
    const prepared = this.content.preparePost(authorId, body, { pulled, replyTo });
    // The images are claimed for the post's id before it is stored; a post that never is stored
    // gives them back through the media sweep, so nothing here undoes a claim.
    const media = mediaIds.length === 0 ? [] : await this.deps.media.claim(authorId, mediaIds, prepared.id);
    const post = media.length === 0 ? prepared : { ...prepared, body: { ...body, media } };
    // Its tags are counted for trends by the queue (feed/trendCounting.ts), queued with its delivery.
    await this.delivery.publish(post, scope);
    return post;
  }

  /**
   * A mentioned-only post is for the existing accounts its text mentions when it is posted, and a
   * reply also for the author it answers; later accounts with those handles never see it.
   */
  private async audienceOf(authorId: string, body: PostBody, replyTo: PostRecord | null): Promise<string[]> {
    const handles = new Set(body.mentions);
    if (replyTo) handles.add(replyTo.authorId);
    handles.delete(authorId);
    return (await this.deps.users.getUsers([...handles])).map((user) => user.handle);
  }

  /**
   * The retraction is queued first, then the post leaves `content` and the author's own timeline;
   * workers take it out of followers' timelines. A delivery still running checks `content` after
   * writing and removes what it wrote, so a deleted post never lingers. Of racing deletes, the one
   * that removed the post answers true; the others find it gone, as a later delete would.
   */
  async deletePost(viewerId: string, id: string, scope: Scope): Promise<boolean> {
    const post = await this.existingPost(viewerId, id);
    if (post.authorId !== viewerId) throw new AppError('FORBIDDEN', 'Only the author can delete a post');
    if (!(await this.removePost(post, scope))) throw notFound(`No post with id "${id}"`);
    return true;
  }

  async likePost(userId: string, id: string, scope: Scope): Promise<PostRecord> {
    const post = await this.existingPost(userId, id, { held: true });
    await this.deps.readerFilters.assertNotBlocked(userId, post.authorId, 'like');
    return this.withCounts(post, id, await this.interactions.likes.add(post, userId, scope));
  }

  async unlikePost(userId: string, id: string, scope: Scope): Promise<PostRecord> {
    const post = await this.existingPost(userId, id, { held: true });
    return this.withCounts(post, id, await this.interactions.likes.remove(post.id, userId, scope));
  }

  /** The repost's own entry is made by the transition's effects (PostDelivery), so a crash is finished by the sweep. */
  async repost(userId: string, id: string, scope: Scope): Promise<PostRecord> {
    const post = await this.existingPost(userId, id, { held: true });
    if (post.authorId === userId) throw new AppError('FORBIDDEN', 'You cannot repost your own post');
    // A repost shows the post to the reposter's followers: only a post everyone may see can go there.
    if (post.body.visibility !== 'PUBLIC') throw new AppError('FORBIDDEN', 'Only public posts can be reposted');
    await this.deps.readerFilters.assertNotBlocked(userId, post.authorId, 'repost');
    await this.deps.rateLimits.post(userId, scope);
    return this.withCounts(post, id, await this.interactions.reposts.add(post, userId, scope));
  }

  async undoRepost(userId: string, id: string, scope: Scope): Promise<PostRecord> {
    const post = await this.existingPost(userId, id, { held: true });
    return this.withCounts(post, id, await this.interactions.reposts.remove(post.id, userId, scope));
  }

  /**
   * The post with the counts its like or repost left, read only when another request made the
   * change; a post deleted meanwhile no longer exists for the viewer.
   */
  private async withCounts(post: PostRecord, id: string, counts: PostCounts | null): Promise<PostRecord> {
    const current = counts ?? (await this.content.lookups.countsOf([post.id])).get(post.id.toHexString());
    if (!current) throw notFound(`No post with id "${id}"`);
    return { ...post, counts: current };
  }

  /** A post or repost of an account being deleted (by the queued removal, so for no request). */
  async removeAuthored(post: PostRecord): Promise<void> {
    if (!post.repostOf) {
      await this.removePost(post, noRequest);
      return;
    }
    await this.interactions.reposts.remove(post.repostOf.id, post.authorId, noRequest);
    // A repost whose original is gone has no edge left to undo.
    if (await this.content.lookups.exists(post.id)) await this.delivery.retract(post, noRequest);
  }

  /** Takes back up to `limit` of the user's likes and reposts, and drops their bookmarks; returns how many it found. */
  async undoInteractionsOf(userId: string, limit: number): Promise<number> {
    let found = await this.deps.bookmarks.forgetUser(userId);
    for (const kind of [this.interactions.likes, this.interactions.reposts]) {
      const edges = await kind.ofUser(userId, limit);
      for (const edge of edges) await kind.remove(edge.p, userId, noRequest);
      found += edges.length;
    }
    return found;
  }

  /** The last traces of a deleted account's likes and reposts, once each is taken back. */
  async forgetInteractionsOf(userId: string): Promise<void> {
    await Promise.all([this.interactions.likes.forgetUser(userId), this.interactions.reposts.forgetUser(userId)]);
  }

  /**
   * Staff remove a post (moderation/): exactly the author's deletion. The post this call removed;
   * null when it was gone already (removed by a racing call, or by its author).
   */
  async removeModerated(postId: ObjectId, scope: Scope): Promise<PostRecord | null> {
    const post = await this.content.lookups.getPost(postId);
    if (!post || post.repostOf) return null;
    return (await this.removePost(post, scope)) ? post : null;
  }

  /** A post goes with its reposts, likes and bookmarks; replies stay, their `replyTo` now null. Whether this call removed it. */
  private async removePost(post: PostRecord, scope: Scope): Promise<boolean> {
    // Its images stop answering first: no URL of them works once the deletion has begun.
    const images = post.body.media.map((image) => image.id);
    await this.deps.media.markGone(images);
    if (!(await this.delivery.retract(post, scope))) return false;
    for (const repost of await this.content.scans.allRepostsOf(post.id)) await this.interactions.reposts.remove(post.id, repost.authorId, scope);
    await this.interactions.likes.forgetPost(post.id);
    await this.interactions.reposts.forgetPost(post.id);
    await this.deps.bookmarks.forgetPost(post.id);
    // A crash before this leaves them marked gone, which the media sweep deletes.
    await this.deps.media.deleteGone(images);
    return true;
  }

  /**
   * A post the viewer may see, by an author readers see: one they may not does not exist for them. `held`: through the
   * in-process tier, for a like or repost, whose own write finds out if the post was deleted meanwhile.
   */
  private async existingPost(viewerId: string, id: string, { held = false } = {}): Promise<PostRecord> {
    const postId = parsePostId(id);
    const post = postId && (held ? (await this.content.lookups.cachedPosts([postId])).find((found) => !found.repostOf) : await this.content.lookups.getPost(postId));
    if (!post || !(await this.deps.visibility.mayActOn(viewerId, post))) throw notFound(`No post with id "${id}"`);
    return post;
  }
}
