import type { Collection, Filter, ObjectId } from 'mongodb';
import { findStalled, finishEach, stalledSince } from '../db/stalledWork.js';
import { byPostId, type ContentDocument, type TombstoneDocument } from '../records/posts.js';
import type { PostCounters } from './postCounters.js';
import { staleChangeMs } from './postCounters.js';
import type { PostLookups } from './postLookups.js';
import { plannedIndexes } from '../db/shardPlan.js';

/**
 * Replies counted on their parent exactly once, and taken off again when deleted: a reply is
 * stored marked as not yet counted (`_cq`), a deleted reply leaves a tombstone with the intent to
 * uncount it, and the repair sweep finishes either when its request died.
 */
export class ReplyCounts {
  constructor(
    private readonly content: Collection<ContentDocument>,
    readonly tombstones: Collection<TombstoneDocument>,
    private readonly counters: PostCounters,
    private readonly lookups: Pick<PostLookups, 'exists'>,
  ) {}

  async ensureIndexes(): Promise<void> {
    await plannedIndexes(this.content, [{ key: { _cq: 1, _d: 1 }, name: 'replies_not_counted', partialFilterExpression: { _cq: true } }]);
    await plannedIndexes(this.tombstones, [
      { key: { at: 1 }, name: 'tombstone_ttl', expireAfterSeconds: 24 * 3600 },
      { key: { 'uncount.at': 1 }, name: 'replies_not_uncounted', partialFilterExpression: { 'uncount.at': { $exists: true } } },
    ]);
  }

  /**
   * Written before a post is deleted and kept for a day, so background work can tell a deleted post
   * from one whose request has not stored it yet; for a reply, with the intent to uncount it.
   */
  async recordDeletion(id: ObjectId): Promise<{ quoted: boolean }> {
    const doc = await this.content.findOne(byPostId(id), { projection: { _r: 1, _v: 1, _q: 1, _o: 1 } });
    const now = new Date();
    // Only public replies are counted on their parent (see ContentService.storePost), public quotes on what they quote.
    const intent = doc?._r && !doc._v ? { uncount: { p: doc._r._id, state: 'pending' as const, at: now } } : {};
    const quoted = doc?._q && !doc._v && !doc._o ? { unquote: { p: doc._q._id, state: 'pending' as const, at: now } } : {};
    await this.tombstones.updateOne({ _id: id }, { $setOnInsert: { at: now, ...intent, ...quoted } }, { upsert: true });
    return { quoted: 'unquote' in quoted };
  }

  /** Takes a deleted reply off its parent's count, unless another caller claimed it first. */
  uncountDeleted(id: ObjectId): Promise<void> {
    return this.uncountReply({ _id: id, 'uncount.state': 'pending' });
  }

  /** Counts a stored reply on its parent, exactly once. */
  count(replyId: ObjectId, parentId: ObjectId): Promise<void> {
    return this.counters.change(parentId, 'replies', 1, `reply:${replyId.toHexString()}`, () =>
      this.content.updateOne(byPostId(replyId), { $unset: { _cq: '' } }),
    );
  }

  /** Takes a deleted reply off its parent's count, if this caller claims the intent. */
  private async uncountReply(claim: Filter<TombstoneDocument>): Promise<void> {
    const tombstone = await this.tombstones.findOneAndUpdate(
      claim,
      { $set: { 'uncount.state': 'applying', 'uncount.at': new Date() } },
      { returnDocument: 'after' },
    );
    if (!tombstone?.uncount) return;
    await this.counters.change(tombstone.uncount.p, 'replies', -1, `unreply:${tombstone._id.toHexString()}`, () =>
      this.tombstones.updateOne({ _id: tombstone._id }, { $unset: { uncount: '' } }),
    );
  }

  /** Finishes reply counts whose request died. Returns how many it finished. */
  async repairStalled(limit = 100): Promise<number> {
    const before = stalledSince(staleChangeMs);
    const [uncounted, tombstones] = await Promise.all([
      findStalled(this.content, { _cq: true, _d: { $lt: before } }, { limit, projection: { _r: 1 } }),
      findStalled(this.tombstones, { 'uncount.at': { $lt: before } }, { limit }),
    ]);
    const counted = await finishEach(uncounted, async (reply) => {
      if (reply._r) await this.count(reply._id, reply._r._id);
    });
    const uncountedAgain = await finishEach(tombstones, async (tombstone) => {
      // A reply deleted only in intent (its request died first) is deleted by its retraction.
      if (await this.lookups.exists(tombstone._id)) return;
      await this.uncountReply({ _id: tombstone._id, 'uncount.at': tombstone.uncount!.at });
    });
    return counted + uncountedAgain;
  }
}
