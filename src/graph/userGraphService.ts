import { randomUUID } from 'node:crypto';
import type { Collection, Db, ObjectId } from 'mongodb';
import { AppError, badInput, isDuplicateKeyError, notFound } from '../errors.js';
import { ReadThroughCache } from '../cache/readThrough.js';
import { FollowPairs, type FollowEffects } from './followPairs.js';
import { sweepQuery } from '../db/connect.js';
import { assertHandle, toUserRecord, type EdgeDocument, type HandlePage, type UserDocument, type UserRecord } from '../records/users.js';
import { heldCaches } from '../config.js';

const live = { deletedAt: { $exists: false } } as const;

/** What this process keeps of a user: the public record, and what token checks and pages need. */
interface CachedUser {
  record: UserRecord;
  accountId: string;
  pulls: boolean;
}

/** What changed, for the in-process tier of every instance to forget. */
export interface GraphChange {
  users?: readonly string[];
  following?: readonly string[];
}

const edgeIndex = { key: { _f: 1, _t: 1 }, name: 'from_to', unique: true } as const;
const idsOnly = { _id: 0, _t: 1 } as const;

/**
 * Users and who follows whom (Socialite's user graph service): the edges live in two collections,
 * one per direction, so both lists are single-index reads and each could be sharded by `_f`.
 */
export class UserGraphService {
  readonly users: Collection<UserDocument>;
  readonly followers: Collection<EdgeDocument>;
  readonly following: Collection<EdgeDocument>;
  readonly pairs: FollowPairs;
  /** Users and follow lists held in this process (see ReadThroughCache); every change invalidates them. */
  private readonly userCache = new ReadThroughCache<string, CachedUser>('users', heldCaches.users);
  private readonly followingCache = new ReadThroughCache<string, { ids: string[] }>('following', heldCaches.following);

  constructor(db: Db) {
    this.users = db.collection<UserDocument>('users');
    this.followers = db.collection<EdgeDocument>('followers');
    this.following = db.collection<EdgeDocument>('following');
    this.pairs = new FollowPairs(db, this.users, this.following, this.followers);
  }

  async ensureIndexes(): Promise<void> {
    await Promise.all([
      this.followers.createIndexes([edgeIndex]),
      this.following.createIndexes([edgeIndex]),
      this.users.createIndex({ readAt: 1 }, { name: 'read_at' }),
      this.users.createIndex({ deletedAt: 1 }, { name: 'being_deleted', partialFilterExpression: { deletedAt: { $exists: true } } }),
      this.pairs.ensureIndexes(),
    ]);
  }

  async createUser(input: { handle: string; displayName: string | null; passwordHash: string }): Promise<UserRecord> {
    const doc: UserDocument = {
      _id: input.handle,
      accountId: randomUUID(),
      displayName: input.displayName,
      passwordHash: input.passwordHash,
      createdAt: new Date(),
      followerCount: 0,
      followingCount: 0,
      // Someone who just signed up is about to read: fanout includes them from the start.
      readAt: new Date(),
    };
    try {
      await this.users.insertOne(doc);
      // A handle held here for an account that was removed behind this process's back.
      this.invalidate({ users: [input.handle] });
    } catch (error) {
      if (isDuplicateKeyError(error)) {
        const going = await this.users.countDocuments({ _id: input.handle, deletedAt: { $exists: true } }, { limit: 1 });
        throw new AppError('CONFLICT', going ? `The handle "${input.handle}" is being freed; try again in a minute` : `The handle "${input.handle}" is taken`);
      }
      throw error;
    }
    return toUserRecord(doc);
  }

  async getUser(handle: string): Promise<UserRecord | null> {
    return (await this.getUsers([handle]))[0] ?? null;
  }

  /** At most one query for any number of handles, none when all are held; unknown handles are absent. */
  async getUsers(handles: readonly string[]): Promise<UserRecord[]> {
    return [...(await this.cachedUsers(handles)).values()].map((user) => user.record);
  }

  /** Which of `handles` have posts that readers pull. */
  async pullingAmong(handles: readonly string[]): Promise<string[]> {
    return [...(await this.cachedUsers(handles)).values()].filter((user) => user.pulls).map((user) => user.record.handle);
  }

  /** Marks the author as one whose posts readers pull, before the first such post is stored. */
  async markPulling(handle: string): Promise<boolean> {
    const result = await this.users.updateOne({ _id: handle, pulls: { $exists: false } }, { $set: { pulls: true } });
    if (result.modifiedCount === 0) return false;
    this.invalidate({ users: [handle] });
    return true;
  }

  /** Forgets what this process holds about these users and follow lists. */
  invalidate(change: GraphChange): void {
    this.userCache.invalidate(change.users ?? []);
    this.followingCache.invalidate(change.following ?? []);
  }

  invalidateAll(): void {
    this.userCache.clear();
    this.followingCache.clear();
  }

  cacheStats() {
    return [this.userCache.stats(), this.followingCache.stats()];
  }

  private cachedUsers(handles: readonly string[]): Promise<Map<string, CachedUser>> {
    if (handles.length === 0) return Promise.resolve(new Map());
    return this.userCache.getMany([...new Set(handles)], async (missing) => {
      const docs = await this.users
        .find({ _id: { $in: missing }, ...live }, { projection: { passwordHash: 0, pendingCounts: 0, readAt: 0, timelineGap: 0 } })
        .toArray();
      return new Map(docs.map((doc) => [doc._id, { record: toUserRecord(doc), accountId: doc.accountId, pulls: doc.pulls === true }]));
    });
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
    return (await this.cachedUsers([handle])).get(handle)?.accountId === accountId;
  }

  /** Starts deleting the account: true when this call did, false when it was gone or going already. */
  async markDeleted(handle: string, accountId: string): Promise<boolean> {
    const result = await this.users.updateOne({ _id: handle, accountId, ...live }, { $set: { deletedAt: new Date() } });
    this.invalidate({ users: [handle] });
    return result.modifiedCount === 1;
  }

  async isBeingDeleted(handle: string, accountId: string): Promise<boolean> {
    return (await this.users.countDocuments({ _id: handle, accountId, deletedAt: { $exists: true } }, { limit: 1 })) > 0;
  }

  /** Accounts whose deletion started before `before` and is not finished. */
  async deletionsStartedBefore(before: Date, limit: number): Promise<{ handle: string; accountId: string }[]> {
    const docs = await this.users.find({ deletedAt: { $lt: before } }, { projection: { accountId: 1 }, ...sweepQuery }).limit(limit).toArray();
    return docs.map((doc) => ({ handle: doc._id, accountId: doc.accountId }));
  }

  /** The last step of deleting an account: the handle is free again. */
  async removeDeletedUser(handle: string, accountId: string): Promise<void> {
    await this.users.deleteOne({ _id: handle, accountId, deletedAt: { $exists: true } });
  }

  /**
   * Idempotent and exact under any interleaving or crash: the pair's own state document serialises
   * racing requests (see FollowPairs). Returns whether the pair ends up followed.
   */
  async follow(followerId: string, followeeId: string, effects: FollowEffects): Promise<{ following: boolean }> {
    if (followerId === followeeId) throw badInput('You cannot follow yourself');
    await this.assertUserExists(followeeId);
    const pair = await this.pairs.set(followerId, followeeId, true, effects);
    this.invalidate({ users: [followerId, followeeId], following: [followerId] });
    return { following: pair.want };
  }

  async unfollow(followerId: string, followeeId: string, effects: FollowEffects): Promise<{ following: boolean }> {
    if (followerId === followeeId) throw badInput('You cannot unfollow yourself');
    await this.assertUserExists(followeeId);
    const pair = await this.pairs.set(followerId, followeeId, false, effects);
    this.invalidate({ users: [followerId, followeeId], following: [followerId] });
    return { following: pair.want };
  }

  /** Ends a follow of an account being deleted (which no longer counts as existing). */
  async endFollow(followerId: string, followeeId: string, effects: FollowEffects): Promise<void> {
    await this.pairs.set(followerId, followeeId, false, effects);
    this.invalidate({ users: [followerId, followeeId], following: [followerId] });
  }

  /** Everyone `handle` follows, from the covered `{ _f, _t }` index, held in this process. */
  async followingIds(handle: string): Promise<string[]> {
    const list = await this.followingCache.get(handle, async () => {
      const edges = await this.following.find({ _f: handle }, { projection: idsOnly }).toArray();
      return { ids: edges.map((edge) => edge._t) };
    });
    return list!.ids;
  }

  /**
   * Everyone following `handle`, in handle order (the covered `{ _f, _t }` index's own order), in
   * batches, so a large audience is never held in memory at once.
   */
  async *followerIdBatches(handle: string, batchSize: number): AsyncGenerator<string[]> {
    let batch: string[] = [];
    for await (const edge of this.followers.find({ _f: handle }, { projection: idsOnly, batchSize }).sort({ _f: 1, _t: 1 })) {
      batch.push(edge._t);
      if (batch.length === batchSize) {
        yield batch;
        batch = [];
      }
    }
    if (batch.length > 0) yield batch;
  }

  /**
   * Which of `handles` read their timeline at or after `since`: one query per sub-task. A user
   * without `readAt` (written by an older version or a bulk load) counts as active.
   */
  async activeReadersAmong(handles: readonly string[], since: Date): Promise<string[]> {
    if (handles.length === 0) return [];
    const docs = await this.users
      .find({ _id: { $in: [...handles] }, readAt: { $not: { $lt: since } } }, { projection: { _id: 1 } })
      .toArray();
    return docs.map((doc) => doc._id);
  }

  /** What the read path needs to know about a reader's own activity. */
  async readerActivity(handle: string): Promise<Pick<UserDocument, 'readAt' | 'timelineGap'> | null> {
    return this.users.findOne({ _id: handle }, { projection: { readAt: 1, timelineGap: 1 } });
  }

  async markRead(handle: string, at: Date): Promise<void> {
    await this.users.updateOne({ _id: handle }, { $max: { readAt: at } });
  }

  /** Opens a gap unless one is open already (a concurrent read of the same returning reader). */
  async openTimelineGap(handle: string, from: Date): Promise<void> {
    await this.users.updateOne({ _id: handle, timelineGap: { $exists: false } }, { $set: { timelineGap: { from, since: new Date() } } });
  }

  /** Closes the gap that `since` identifies; a newer gap stays open. */
  async closeTimelineGap(handle: string, since: Date): Promise<void> {
    await this.users.updateOne({ _id: handle, 'timelineGap.since': since }, { $unset: { timelineGap: '' } });
  }

  /** Which of `handles` the viewer follows: one query for a whole page of users. */
  async followedAmong(viewerId: string, handles: readonly string[]): Promise<Set<string>> {
    if (handles.length === 0) return new Set();
    const edges = await this.following
      .find({ _f: viewerId, _t: { $in: [...handles] } }, { projection: idsOnly })
      .toArray();
    return new Set(edges.map((edge) => edge._t));
  }

  listFollowers(handle: string, page: { after: string | null; limit: number }): Promise<HandlePage> {
    return this.listEdges(this.followers, handle, page);
  }

  listFollowing(handle: string, page: { after: string | null; limit: number }): Promise<HandlePage> {
    return this.listEdges(this.following, handle, page);
  }

  private async listEdges(
    edges: Collection<EdgeDocument>,
    handle: string,
    page: { after: string | null; limit: number },
  ): Promise<HandlePage> {
    const filter = page.after === null ? { _f: handle } : { _f: handle, _t: { $gt: page.after } };
    const docs = await edges
      .find(filter, { projection: idsOnly })
      .sort({ _f: 1, _t: 1 })
      .limit(page.limit + 1)
      .toArray();
    return { handles: docs.slice(0, page.limit).map((edge) => edge._t), hasMore: docs.length > page.limit };
  }

  private async assertUserExists(handle: string): Promise<void> {
    assertHandle(handle);
    const exists = await this.users.findOne({ _id: handle, ...live }, { projection: { _id: 1 } });
    if (!exists) throw notFound(`No user with handle "${handle}"`);
  }
}
