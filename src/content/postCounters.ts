import type { Collection, ObjectId } from 'mongodb';
import type { ContentDocument } from '../records/posts.js';

export type CountName = 'likes' | 'reposts' | 'replies';

const countField: Record<CountName, string> = { likes: 'n.l', reposts: 'n.r', replies: 'n.y' };

/**
 * A change whose request may die half-way is taken over by the repair sweep once it has been
 * still this long: far beyond any request, so the sweep never races a live one.
 */
export const staleChangeMs = 30_000;

/**
 * Exactly-once count changes on a post without transactions (Weibo's counter service, kept on the
 * post). Whoever makes a change first records it durably as an intent: a like in transition, a
 * reply not yet counted, a tombstone of a deleted reply. Then:
 *
 * 1. the post's `$inc` is guarded by `pc: { $ne: token }` and pushes the token in the same write,
 *    so a replay after a crash skips it;
 * 2. the intent is cleared;
 * 3. only then is the token pulled.
 *
 * Only the actor that recorded the intent applies it, or the repair sweep once the intent is
 * older than `staleChangeMs`, so two actors never hold the same token at once.
 */
export class PostCounters {
  constructor(private readonly content: Collection<ContentDocument>) {}

  async change(postId: ObjectId, count: CountName, delta: 1 | -1, token: string, clearIntent: () => Promise<unknown>): Promise<void> {
    await this.content.updateOne(
      { _id: postId, pc: { $ne: token } },
      { $inc: { [countField[count]]: delta }, $push: { pc: token } },
    );
    await clearIntent();
    await this.content.updateOne({ _id: postId }, { $pull: { pc: token } });
  }
}
