import type { Collection, Db } from 'mongodb';
import type { AuditDocument } from '../records/moderation.js';
import { plannedCollection, plannedIndexes } from '../db/shardPlan.js';

/**
 * Every staff action, written once: who, what, when, on which account, post and report. Nothing
 * in the API changes or removes an entry; each is named by what it records, so an action repeated
 * after a crash (every action is) is recorded once, at its first attempt.
 */
export class AuditLog {
  readonly entries: Collection<AuditDocument>;

  constructor(db: Db) {
    this.entries = plannedCollection<AuditDocument>(db, 'audit_log');
  }

  async ensureIndexes(): Promise<void> {
    await plannedIndexes(this.entries, [{ key: { at: -1 }, name: 'newest_first' }]);
  }

  /** Records an action before it is carried out; recording it again changes nothing. */
  async record(entry: Omit<AuditDocument, 'at'>): Promise<void> {
    const { _id, ...fields } = entry;
    await this.entries.updateOne({ _id }, { $setOnInsert: { ...fields, at: new Date() } }, { upsert: true }).catch((error: unknown) => {
      // Two first attempts at once: one insert wins, and the entry is there.
      if ((error as { code?: unknown }).code !== 11000) throw error;
    });
  }

  /** The newest entries, for the staff command. */
  newest(limit: number): Promise<AuditDocument[]> {
    return this.entries.find().sort({ at: -1 }).limit(limit).toArray();
  }
}
