import { ObjectId, type Collection, type Db } from 'mongodb';
import { assertDisplayableText, graphemeLength } from '../content/text.js';
import { ReadThroughCache } from '../cache/readThrough.js';
import { AppError, badInput, isDuplicateKeyError } from '../errors.js';
import { ReaderView, type KeywordFilterRecord, type ReaderFiltersDocument } from './readerView.js';
import { heldCaches } from '../config.js';
import { plannedCollection, plannedIndexes } from '../db/shardPlan.js';

export const maxKeywordFilters = 100;
export const maxKeywordLength = 100;
/** Mutes and blocks each: the whole list is read with every page, so it stays bounded. */
export const maxMutedOrBlocked = 5_000;

/** Mutes, blocks and keyword filters, stored per reader (see ReaderFiltersDocument). */
export class ReaderFilters {
  readonly filters: Collection<ReaderFiltersDocument>;
  /** Each reader's filters held in this process: every change invalidates them here and, through live events, elsewhere. */
  private readonly views = new ReadThroughCache<string, ReaderView>('reader filters', heldCaches.readerFilters);

  constructor(db: Db) {
    this.filters = plannedCollection<ReaderFiltersDocument>(db, 'reader_filters');
  }

  invalidate(readerIds: readonly string[]): void {
    this.views.invalidate(readerIds);
  }

  invalidateAll(): void {
    this.views.clear();
  }

  async ensureIndexes(): Promise<void> {
    // Who mutes or blocks a handle: for taking a deleted account out of everyone's lists.
    await plannedIndexes(this.filters, [
      { key: { muted: 1 }, name: 'muted' },
      { key: { blocked: 1 }, name: 'blocked' },
      { key: { blockedBy: 1 }, name: 'blocked_by' },
    ]);
  }

  async of(readerId: string): Promise<ReaderView> {
    return (await this.views.get(readerId, async () => new ReaderView(await this.filters.findOne({ _id: readerId }))))!;
  }

  /** Refuses `action` between two users when either blocks the other; acting on oneself is never blocked. */
  async assertNotBlocked(userId: string, otherId: string, action: string): Promise<void> {
    if (userId === otherId) return;
    const view = await this.of(userId);
    if (view.isBlockedEitherWay(otherId)) throw new AppError('FORBIDDEN', `You cannot ${action} ${otherId}: one of you blocked the other`);
  }

  async mute(readerId: string, handle: string): Promise<void> {
    await this.assertRoomIn(readerId, 'muted', handle);
    await upsertRetryingDuplicate(() => this.filters.updateOne({ _id: readerId }, { $addToSet: { muted: handle } }, { upsert: true }));
    this.invalidate([readerId]);
  }

  async unmute(readerId: string, handle: string): Promise<void> {
    await this.filters.updateOne({ _id: readerId }, { $pull: { muted: handle } });
    this.invalidate([readerId]);
  }

  /** The blocked side first: a crash in between leaves a block that hides more, never less. */
  async block(readerId: string, handle: string): Promise<void> {
    await this.assertRoomIn(readerId, 'blocked', handle);
    await upsertRetryingDuplicate(() => this.filters.updateOne({ _id: handle }, { $addToSet: { blockedBy: readerId } }, { upsert: true }));
    await upsertRetryingDuplicate(() => this.filters.updateOne({ _id: readerId }, { $addToSet: { blocked: handle } }, { upsert: true }));
    this.invalidate([readerId, handle]);
  }

  async unblock(readerId: string, handle: string): Promise<void> {
    await this.filters.updateOne({ _id: readerId }, { $pull: { blocked: handle } });
    await this.filters.updateOne({ _id: handle }, { $pull: { blockedBy: readerId } });
    this.invalidate([readerId, handle]);
  }

  async keywordFilters(readerId: string): Promise<KeywordFilterRecord[]> {
    const doc = await this.filters.findOne({ _id: readerId }, { projection: { keywords: 1 } });
    return (doc?.keywords ?? []).map((keyword) => ({ id: keyword._id.toHexString(), phrase: keyword.phrase }));
  }

  /** Adding a phrase the reader already filters (in any case) returns the existing filter. */
  async addKeywordFilter(readerId: string, phrase: string): Promise<KeywordFilterRecord> {
    const normalized = phrase.trim().replace(/\s+/gu, ' ');
    const length = graphemeLength(normalized);
    if (length < 1 || length > maxKeywordLength) {
      throw badInput(`A keyword filter must be 1 to ${maxKeywordLength} characters after trimming`);
    }
    assertDisplayableText(normalized, 'A keyword filter', { multiline: false });
    await this.ensureKeywordList(readerId);
    const key = normalized.toLocaleLowerCase();
    const keyword = { _id: new ObjectId(), phrase: normalized, key };
    // One atomic write: racing adds can neither pass the limit nor add a phrase twice.
    const written = await this.filters.updateOne(
      { _id: readerId, [`keywords.${maxKeywordFilters - 1}`]: { $exists: false }, 'keywords.key': { $ne: key } },
      { $push: { keywords: keyword } },
    );
    if (written.modifiedCount === 1) {
      this.invalidate([readerId]);
      return { id: keyword._id.toHexString(), phrase: normalized };
    }
    const existing = (await this.filters.findOne({ _id: readerId }, { projection: { keywords: 1 } }))?.keywords ?? [];
    const same = existing.find((filter) => filter.key === key);
    if (same) return { id: same._id.toHexString(), phrase: same.phrase };
    throw badInput(`You can have at most ${maxKeywordFilters} keyword filters`);
  }

  private async ensureKeywordList(readerId: string): Promise<void> {
    await upsertRetryingDuplicate(() => this.filters.updateOne({ _id: readerId }, { $setOnInsert: { keywords: [] } }, { upsert: true }));
    await this.filters.updateOne({ _id: readerId, keywords: { $exists: false } }, { $set: { keywords: [] } });
  }

  async removeKeywordFilter(readerId: string, id: string): Promise<boolean> {
    if (!/^[0-9a-f]{24}$/i.test(id)) return false;
    const result = await this.filters.updateOne({ _id: readerId }, { $pull: { keywords: { _id: new ObjectId(id) } } });
    this.invalidate([readerId]);
    return result.modifiedCount === 1;
  }

  /** Takes a deleted account out of every list and drops its own filters. */
  async forget(handle: string): Promise<void> {
    await this.filters.updateMany(
      { $or: [{ muted: handle }, { blocked: handle }, { blockedBy: handle }] },
      { $pull: { muted: handle, blocked: handle, blockedBy: handle } },
    );
    await this.filters.deleteOne({ _id: handle });
    this.invalidateAll();
  }

  private async assertRoomIn(readerId: string, list: 'muted' | 'blocked', handle: string): Promise<void> {
    const view = await this.of(readerId);
    if (!view[list].has(handle) && view[list].size >= maxMutedOrBlocked) {
      throw badInput(`You can ${list === 'muted' ? 'mute' : 'block'} at most ${maxMutedOrBlocked} users`);
    }
  }
}

/** Two first writes for one `_id` upsert at once: one inserts, the other fails and is sent again as an update. */
async function upsertRetryingDuplicate(write: () => Promise<unknown>): Promise<void> {
  try {
    await write();
  } catch (error) {
    if (!isDuplicateKeyError(error)) throw error;
    await write();
  }
}
