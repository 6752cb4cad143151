import type { Collection, Filter, ObjectId } from 'mongodb';
import { findStalled, finishEach, stalledSince } from '../db/stalledWork.js';
import { byPostId, type ContentDocument, type TombstoneDocument } from '../records/posts.js';
import type { PostCounters } from './postCounters.js';
import { staleChangeMs } from './postCounters.js';
import type { PostLookups } from './postLookups.js';
import { plannedIndexes } from '../db/shardPlan.js';

/**
 * Public quotes counted on the post they quote exactly once, and taken off once when deleted, the
 * way replies are (ReplyCounts): a quote is stored marked as not yet counted (`_qc`), a deleted
 * quote leaves the intent to uncount it on its tombstone (`unquote`), and the repair sweep finishes
 * either when its request died. Limited quotes are never counted: the count is shown to everyone.
 */
export class QuoteCounts {
  constructor(
    private readonly content: Collection<ContentDocument>,
    private readonly tombstones: Collection<TombstoneDocument>,
    private readonly counters: PostCounters,
    private readonly lookups: Pick<PostLookups, 'exists'>,
  ) {}

  async ensureIndexes(): Promise<void> {
    await plannedIndexes(this.content, [{ key: { _qc: 1, _d: 1 }, name: 'quotes_not_counted', partialFilterExpression: { _qc: true } }]);
    await plannedIndexes(this.tombstones, [{ key: { 'unquote.at': 1 }, name: 'quotes_not_uncounted', partialFilterExpression: { 'unquote.at': { $exists: true } } }]);
  }

  /** Counts a stored public quote on the post it quotes, exactly once. */
  count(quoteId: ObjectId, quotedId: ObjectId): Promise<void> {
    return this.counters.change(quotedId, 'quotes', 1, `quote:${quoteId.toHexString()}`, () => this.content.updateOne(byPostId(quoteId), { $unset: { _qc: '' } }));
  }

  /** Takes a deleted quote off its quoted post's count, unless another caller claimed it first. */
  uncountDeleted(id: ObjectId): Promise<void> {
    return this.uncount({ _id: id, 'unquote.state': 'pending' });
  }

  private async uncount(claim: Filter<TombstoneDocument>): Promise<void> {
    const tombstone = await this.tombstones.findOneAndUpdate(claim, { $set: { 'unquote.state': 'applying', 'unquote.at': new Date() } }, { returnDocument: 'after' });
    if (!tombstone?.unquote) return;
    await this.counters.change(tombstone.unquote.p, 'quotes', -1, `unquote:${tombstone._id.toHexString()}`, () =>
      this.tombstones.updateOne({ _id: tombstone._id }, { $unset: { unquote: '' } }),
    );
  }

  /** Finishes quote counts whose request died. Returns how many it finished. */
  async repairStalled(limit = 100): Promise<number> {
    const before = stalledSince(staleChangeMs);
    const [uncounted, tombstones] = await Promise.all([
      findStalled(this.content, { _qc: true, _d: { $lt: before } }, { limit, projection: { _q: 1 } }),
      findStalled(this.tombstones, { 'unquote.at': { $lt: before } }, { limit }),
    ]);
    const counted = await finishEach(uncounted, async (quote) => {
      if (quote._q) await this.count(quote._id, quote._q._id);
    });
    const uncountedAgain = await finishEach(tombstones, async (tombstone) => {
      if (await this.lookups.exists(tombstone._id)) return;
      await this.uncount({ _id: tombstone._id, 'unquote.at': tombstone.unquote!.at });
    });
    return counted + uncountedAgain;
  }
}
