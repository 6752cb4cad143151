import { randomUUID } from 'node:crypto';
import type { Collection } from 'mongodb';
import { findStalled } from '../db/stalledWork.js';
import type { UserDocument } from '../records/users.js';
import { existingUsers as live, type UserDirectory } from './userDirectory.js';
import { plannedIndexes } from '../db/shardPlan.js';

/**
 * Accounts: credentials, the account id tokens name, and the steps of deleting an account (marked,
 * then removed once everything else is gone).
 */
export class UserAccounts {
  private readonly users: Collection<UserDocument>;

  constructor(private readonly directory: UserDirectory) {
    this.users = directory.users;
  }

  async ensureIndexes(): Promise<void> {
    await plannedIndexes(this.users, [{ key: { deletedAt: 1 }, name: 'being_deleted', partialFilterExpression: { deletedAt: { $exists: true } } }]);
  }

  async getCredentials(handle: string): Promise<{ passwordHash: string; accountId: string | null; suspended: boolean } | null> {
    const doc = await this.users.findOne({ _id: handle, ...live }, { projection: { passwordHash: 1, accountId: 1, suspended: 1 } });
    return doc && { passwordHash: doc.passwordHash, accountId: doc.accountId ?? null, suspended: doc.suspended !== undefined };
  }

  /** The account id of `handle`, given one first if an older version created the user without. */
  async accountIdOf(handle: string): Promise<string | null> {
    return (await this.tokenIdentity(handle))?.accountId ?? null;
  }

  /** What a new token of `handle` names: the account and its current token generation. */
  async tokenIdentity(handle: string): Promise<{ accountId: string; generation: number } | null> {
    await this.users.updateOne({ _id: handle, accountId: { $exists: false } }, { $set: { accountId: randomUUID() } });
    const doc = await this.users.findOne({ _id: handle, ...live }, { projection: { accountId: 1, tokenGeneration: 1 } });
    return doc && { accountId: doc.accountId, generation: doc.tokenGeneration ?? 0 };
  }

  /**
   * Whether the account a token names still exists under that handle and the token's generation
   * is still the current one: held in this process.
   */
  async accountExists(handle: string, accountId: string, generation = 0): Promise<boolean> {
    const user = (await this.directory.cached([handle])).get(handle);
    return user?.accountId === accountId && user.tokenGeneration === generation;
  }

  /**
   * Ends every token of the account issued so far, setting `passwordHash` too when given: one
   * conditional update, so a password changed meanwhile (`expectedHash` no longer stored) changes
   * nothing. Returns the new generation, or null when nothing was changed.
   */
  async revokeTokens(handle: string, accountId: string, change: { expectedHash?: string; passwordHash?: string } = {}): Promise<number | null> {
    const filter = { _id: handle, accountId, ...live, ...(change.expectedHash ? { passwordHash: change.expectedHash } : {}) };
    const doc = await this.users.findOneAndUpdate(
      filter,
      { $inc: { tokenGeneration: 1 }, ...(change.passwordHash ? { $set: { passwordHash: change.passwordHash } } : {}) },
      { returnDocument: 'after', projection: { tokenGeneration: 1 } },
    );
    this.directory.forget([handle]);
    return doc ? doc.tokenGeneration ?? 0 : null;
  }

  /**
   * Stores a new hash of the same password (at today's cost) in place of `expectedHash`; nothing
   * when the password was changed meanwhile. Tokens stay valid: the password is the same.
   */
  async upgradePasswordHash(handle: string, expectedHash: string, passwordHash: string): Promise<void> {
    await this.users.updateOne({ _id: handle, ...live, passwordHash: expectedHash }, { $set: { passwordHash } });
  }

  /** Starts deleting the account: true when this call did, false when it was gone or going already. */
  async markDeleted(handle: string, accountId: string): Promise<boolean> {
    const result = await this.users.updateOne({ _id: handle, accountId, ...live }, { $set: { deletedAt: new Date() } });
    this.directory.forget([handle]);
    return result.modifiedCount === 1;
  }

  async isBeingDeleted(handle: string, accountId: string): Promise<boolean> {
    return (await this.users.countDocuments({ _id: handle, accountId, deletedAt: { $exists: true } }, { limit: 1 })) > 0;
  }

  /** Accounts whose deletion started before `before` and is not finished. */
  async deletionsStartedBefore(before: Date, limit: number): Promise<{ handle: string; accountId: string }[]> {
    const docs = await findStalled(this.users, { deletedAt: { $lt: before } }, { limit, projection: { accountId: 1 } });
    return docs.map((doc) => ({ handle: doc._id, accountId: doc.accountId }));
  }

  /** The last step of deleting an account: the handle is free again. */
  async removeDeletedUser(handle: string, accountId: string): Promise<void> {
    await this.users.deleteOne({ _id: handle, accountId, deletedAt: { $exists: true } });
  }
}
