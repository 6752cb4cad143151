import { randomUUID } from 'node:crypto';
import type { Collection } from 'mongodb';
import { findStalled } from '../db/stalledWork.js';
import type { UserDocument } from '../records/users.js';
import { existingUsers as live, type UserDirectory } from './userDirectory.js';

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
    await this.users.createIndex({ deletedAt: 1 }, { name: 'being_deleted', partialFilterExpression: { deletedAt: { $exists: true } } });
  }

  async getCredentials(handle: string): Promise<{ passwordHash: string; accountId: string | null } | null> {
    const doc = await this.users.findOne({ _id: handle, ...live }, { projection: { passwordHash: 1, accountId: 1 } });
    return doc && { passwordHash: doc.passwordHash, accountId: doc.accountId ?? null };
  }

  /** The account id of `handle`, given one first if an older version created the user without. */
  async accountIdOf(handle: string): Promise<string | null> {
    await this.users.updateOne({ _id: handle, accountId: { $exists: false } }, { $set: { accountId: randomUUID() } });
    return (await this.users.findOne({ _id: handle, ...live }, { projection: { accountId: 1 } }))?.accountId ?? null;
  }

  /** Whether the account a token names still exists under that handle: held in this process. */
  async accountExists(handle: string, accountId: string): Promise<boolean> {
    return (await this.directory.cached([handle])).get(handle)?.accountId === accountId;
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
