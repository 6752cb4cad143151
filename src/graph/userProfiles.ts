import type { Collection } from 'mongodb';
import { searchableName, toUserRecord, type UserDocument, type UserRecord } from '../records/users.js';
import { existingUsers as live, type UserDirectory } from './userDirectory.js';
import { plannedIndexes } from '../db/shardPlan.js';

/** A profile change: a field left undefined stays as it is; null clears it. */
export interface ProfileChange {
  displayName?: string | null;
  bio?: string | null;
  /** Whether follows of the account wait for its approval. */
  locked?: boolean;
}

const publicFields = { passwordHash: 0, pendingCounts: 0, readAt: 0, timelineGap: 0, timelineMarker: 0, hidden: 0 } as const;
/** Users given their search field per round of the start-up fill. */
const fillBatch = 500;

/**
 * What a user says about themselves (display name, bio), and finding users by the start of their
 * handle or display name: two range reads, on `_id` and on the `name_prefix` index of the
 * lowercased display name, never a scan.
 */
export class UserProfiles {
  private readonly users: Collection<UserDocument>;

  constructor(private readonly directory: UserDirectory) {
    this.users = directory.users;
  }

  async ensureIndexes(): Promise<void> {
    await plannedIndexes(this.users, [{ key: { nameLower: 1 }, name: 'name_prefix' }]);
    await this.fillSearchNames();
  }

  /**
   * Users stored before search existed have no `nameLower`: found by equality with null on the
   * index (which also matches a missing field), so once they are filled this reads nothing.
   */
  private async fillSearchNames(): Promise<void> {
    for (;;) {
      const docs = await this.users.find({ nameLower: null }, { projection: { displayName: 1 }, limit: fillBatch }).toArray();
      if (docs.length === 0) return;
      await this.users.bulkWrite(
        docs.map((doc) => ({
          updateOne: { filter: { _id: doc._id, nameLower: null }, update: { $set: { nameLower: searchableName(doc.displayName) } } },
        })),
        { ordered: false },
      );
    }
  }

  /** Null when the account does not exist (or is being deleted). Every instance must be told (the caller announces it). */
  async update(handle: string, change: ProfileChange): Promise<UserRecord | null> {
    const set: Partial<UserDocument> = {};
    if (change.displayName !== undefined) {
      set.displayName = change.displayName;
      set.nameLower = searchableName(change.displayName);
    }
    if (change.bio !== undefined) set.bio = change.bio;
    if (change.locked === true) set.locked = true;
    // Unlocked accounts carry no field, as before locking existed.
    const unset = change.locked === false ? { $unset: { locked: '' as const } } : {};
    const doc =
      Object.keys(set).length === 0 && change.locked !== false
        ? await this.users.findOne({ _id: handle, ...live }, { projection: publicFields })
        : await this.users.findOneAndUpdate({ _id: handle, ...live }, { ...(Object.keys(set).length > 0 ? { $set: set } : {}), ...unset }, { returnDocument: 'after', projection: publicFields });
    this.directory.forget([handle]);
    return doc && toUserRecord(doc);
  }

  /**
   * Existing users whose handle or lowercased display name starts with `prefix` (lowercase): handle
   * matches first, by handle, then display-name matches, by display name; at most `limit`.
   */
  async search(prefix: string, limit: number): Promise<UserRecord[]> {
    const range = { $gte: prefix, $lt: nextPrefix(prefix) };
    // A suspended account is found by no one (moderation/suspensions.ts).
    const shown = { ...live, suspended: { $exists: false } };
    const [byHandle, byName] = await Promise.all([
      this.users.find({ _id: range, ...shown }, { projection: publicFields, hint: { _id: 1 } }).sort({ _id: 1 }).limit(limit).toArray(),
      this.users.find({ nameLower: range, ...shown }, { projection: publicFields, hint: 'name_prefix' }).sort({ nameLower: 1 }).limit(limit).toArray(),
    ]);
    const found = new Map<string, UserDocument>();
    for (const doc of [...byHandle, ...byName]) if (!found.has(doc._id)) found.set(doc._id, doc as UserDocument);
    return [...found.values()].slice(0, limit).map(toUserRecord);
  }
}

/**
 * The smallest string after every string starting with `prefix`: its last code point plus one, so
 * the strings that start with `prefix` are exactly those in [prefix, nextPrefix(prefix)) in
 * MongoDB's order (UTF-8 bytes) without a sentinel character.
 */
export function nextPrefix(prefix: string): string {
  const points = [...prefix];
  const last = points.pop()!.codePointAt(0)!;
  // U+D7FF + 1 would be a lone surrogate: the next code point in both orders is U+E000.
  const next = last === 0xd7ff ? 0xe000 : last + 1;
  return points.join('') + String.fromCodePoint(next);
}
