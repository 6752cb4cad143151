import type { Collection, ObjectId } from 'mongodb';
import { sweepQuery } from '../db/connect.js';
import { plannedIndexes } from '../db/shardPlan.js';
import { byPostId, toPostCounts, type ContentDocument, type PostCounts } from '../records/posts.js';
import type { PostLookups } from './postLookups.js';

export type CountName = 'likes' | 'reposts' | 'replies' | 'quotes';

const countField: Record<CountName, string> = { likes: 'n.l', reposts: 'n.r', replies: 'n.y', quotes: 'n.q' };

/**
 * A change whose request may die half-way is taken over by the repair sweep once it has been
 * still this long: far beyond any request, so the sweep never races a live one.
 */
export const staleChangeMs = 30_000;

/**
 * Exactly-once count changes on a post without transactions (Weibo's counter service, kept on the
 * post). Whoever makes a change first records it durably as an intent: a like in transition, a
 * reply not yet counted, a tombstone of a deleted reply. Then the post's `$inc` is guarded by
 * `pc: { $ne: token }` and pushes the token in the same write, so a replay after a crash skips it,
 * and the token goes only once the intent is cleared. Every change also bumps `n.v`, so of two
 * copies of a post's counts the newer is known.
 *
 * Only the actor that recorded the intent applies it, or the repair sweep once the intent is
 * older than `staleChangeMs`, so two actors never hold the same token at once.
 */
export class PostCounters {
  constructor(
    private readonly content: Collection<ContentDocument>,
    /** The in-process tier of counts, told at once of every change this process makes. */
    private readonly held: Pick<PostLookups, 'countsChanged'>,
  ) {}

  /** What a suspension's restoring `updateMany` finds: the few posts carrying a suspension's token. */
  async ensureHiddenIndex(): Promise<void> {
    await plannedIndexes(this.content, [{ key: { sh: 1 }, name: 'suspension_hidden', partialFilterExpression: { sh: { $exists: true } } }]);
  }

  /** Leaves a suspended account's like (or repost) out of each of these posts' counts, once per token. */
  async hide(postIds: readonly ObjectId[], count: 'likes' | 'reposts', token: string): Promise<void> {
    if (postIds.length === 0) return;
    await this.content.bulkWrite(
      postIds.map((postId) => ({
        updateOne: { filter: { ...byPostId(postId), sh: { $ne: token } }, update: { $inc: { [countField[count]]: -1, 'n.v': 1 }, $push: { sh: token } } },
      })),
      { ordered: false },
    );
    for (const postId of postIds) this.held.countsChanged(postId, null);
  }

  /**
   * Leaves each of a suspended account's replies (or quotes) out of the count of the post it
   * answers (or quotes), once per token: one token per reply, as one account may answer a post
   * many times.
   */
  async hideEach(hidden: readonly { postId: ObjectId; token: string }[], count: 'replies' | 'quotes'): Promise<void> {
    if (hidden.length === 0) return;
    await this.content.bulkWrite(
      hidden.map(({ postId, token }) => ({
        updateOne: { filter: { ...byPostId(postId), sh: { $ne: token } }, update: { $inc: { [countField[count]]: -1, 'n.v': 1 }, $push: { sh: token } } },
      })),
      { ordered: false },
    );
    for (const { postId } of hidden) this.held.countsChanged(postId, null);
  }

  /** The posts carrying tokens that start with `prefix` (one suspension's per-reply tokens), with those tokens. */
  async carryingPrefixed(prefix: string): Promise<{ postId: ObjectId; token: string }[]> {
    const pattern = new RegExp(`^${prefix}`);
    const posts = await this.content.find({ sh: pattern }, { projection: { _id: 1, sh: 1 } }).toArray();
    return posts.flatMap((post) => (post.sh ?? []).filter((token) => pattern.test(token)).map((token) => ({ postId: post._id, token })));
  }

  /** Puts back, once per token, the counts `hideEach` left out. */
  async restoreEachToken(hidden: readonly { postId: ObjectId; token: string }[], count: 'replies' | 'quotes'): Promise<void> {
    if (hidden.length === 0) return;
    await this.content.bulkWrite(
      hidden.map(({ postId, token }) => ({
        updateOne: { filter: { ...byPostId(postId), sh: token }, update: { $inc: { [countField[count]]: 1, 'n.v': 1 }, $pull: { sh: token } } },
      })),
      { ordered: false },
    );
    for (const { postId } of hidden) this.held.countsChanged(postId, null);
  }

  /** The posts a suspension's token left a count out of. */
  async carrying(token: string): Promise<ObjectId[]> {
    return (await this.content.find({ sh: token }, { projection: { _id: 1 } }).toArray()).map((post) => post._id);
  }

  /** Puts back, once, the count a suspension's token left out of each of these posts. */
  async restoreEach(postIds: readonly ObjectId[], count: 'likes' | 'reposts', token: string): Promise<void> {
    if (postIds.length === 0) return;
    await this.content.bulkWrite(
      postIds.map((postId) => ({
        updateOne: { filter: { ...byPostId(postId), sh: token }, update: { $inc: { [countField[count]]: 1, 'n.v': 1 }, $pull: { sh: token } } },
      })),
      { ordered: false },
    );
    for (const postId of postIds) this.held.countsChanged(postId, null);
  }

  /** Puts back, once, every count a suspension's token left out (the posts that still exist). */
  async restore(count: 'likes' | 'reposts', token: string): Promise<void> {
    const posts = await this.content.find({ sh: token }, { projection: { _id: 1 } }).toArray();
    await this.content.updateMany({ sh: token }, { $inc: { [countField[count]]: 1, 'n.v': 1 }, $pull: { sh: token } });
    for (const post of posts) this.held.countsChanged(post._id, null);
  }

  /**
   * The guarded `$inc`; the caller clears its intent after it and leaves the token to `pruneTokens`.
   * Returns the counts as this change left them: null when it was applied before, or the post is gone.
   */
  async apply(postId: ObjectId, count: CountName, delta: 1 | -1, token: string): Promise<PostCounts | null> {
    const counted = await this.content.findOneAndUpdate(
      { ...byPostId(postId), pc: { $ne: token } },
      { $inc: { [countField[count]]: delta, 'n.v': 1 }, $push: { pc: token } },
      { returnDocument: 'after', projection: { n: 1 } },
    );
    const counts = counted && toPostCounts(counted);
    this.held.countsChanged(postId, counts);
    return counts;
  }

  /** `apply`, the intent cleared, then the token pulled at once: for changes with no sweep to prune them. */
  async change(postId: ObjectId, count: CountName, delta: 1 | -1, token: string, clearIntent: () => Promise<unknown>): Promise<void> {
    await this.content.updateOne({ ...byPostId(postId), pc: { $ne: token } }, { $inc: { [countField[count]]: delta, 'n.v': 1 }, $push: { pc: token } });
    this.held.countsChanged(postId, null);
    await clearIntent();
    await this.content.updateOne(byPostId(postId), { $pull: { pc: token } });
  }

  /** Drops tokens whose intents are cleared: one write for many posts. */
  async pruneTokens(posts: readonly { postId: ObjectId; tokens: readonly string[] }[]): Promise<void> {
    if (posts.length === 0) return;
    await this.content.bulkWrite(
      posts.map(({ postId, tokens }) => ({ updateOne: { filter: byPostId(postId), update: { $pull: { pc: { $in: [...tokens] } } } } })),
      { ordered: false, ...sweepQuery },
    );
  }
}
