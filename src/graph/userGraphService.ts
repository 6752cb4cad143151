import type { Collection, Db, ObjectId } from 'mongodb';
import { AppError, badInput, isDuplicateKeyError, notFound } from '../errors.js';

export interface UserDocument {
  /** The handle: unique, permanent, and a good shard key. */
  _id: string;
  displayName: string | null;
  passwordHash: string;
  createdAt: Date;
  followerCount: number;
  followingCount: number;
}

/**
 * One directed edge. In `followers`, `_f` is the followed user and `_t` one of their followers;
 * in `following`, `_f` is the follower and `_t` someone they follow. Both collections are queried
 * by `_f` alone and covered by their `{ _f: 1, _t: 1 }` index.
 */
export interface EdgeDocument {
  _id?: ObjectId;
  _f: string;
  _t: string;
}

export interface UserRecord {
  handle: string;
  displayName: string | null;
  createdAt: Date;
  followerCount: number;
  followingCount: number;
}

export interface HandlePage {
  handles: string[];
  hasMore: boolean;
}

export const handlePattern = /^[a-z0-9_]{3,30}$/;
export const maxDisplayNameLength = 50;

type CountField = 'followerCount' | 'followingCount';

const publicFields = { passwordHash: 0 } as const;

const toUserRecord = (doc: Omit<UserDocument, 'passwordHash'>): UserRecord => ({
  handle: doc._id,
  displayName: doc.displayName,
  createdAt: doc.createdAt,
  followerCount: doc.followerCount,
  followingCount: doc.followingCount,
});

const edgeIndex = { key: { _f: 1, _t: 1 }, name: 'from_to', unique: true } as const;
const idsOnly = { _id: 0, _t: 1 } as const;

export function assertHandle(handle: string): void {
  if (!handlePattern.test(handle)) {
    throw badInput('Handle must be 3 to 30 characters of a-z, 0-9 and _');
  }
}

/**
 * Users and who follows whom (Socialite's user graph service): the edges live in two collections,
 * one per direction, so both lists are single-index reads and each could be sharded by `_f`.
 */
export class UserGraphService {
  readonly users: Collection<UserDocument>;
  readonly followers: Collection<EdgeDocument>;
  readonly following: Collection<EdgeDocument>;

  constructor(db: Db) {
    this.users = db.collection<UserDocument>('users');
    this.followers = db.collection<EdgeDocument>('followers');
    this.following = db.collection<EdgeDocument>('following');
  }

  async ensureIndexes(): Promise<void> {
    await Promise.all([this.followers.createIndexes([edgeIndex]), this.following.createIndexes([edgeIndex])]);
  }

  async createUser(input: { handle: string; displayName: string | null; passwordHash: string }): Promise<UserRecord> {
    const doc: UserDocument = {
      _id: input.handle,
      displayName: input.displayName,
      passwordHash: input.passwordHash,
      createdAt: new Date(),
      followerCount: 0,
      followingCount: 0,
    };
    try {
      await this.users.insertOne(doc);
    } catch (error) {
      if (isDuplicateKeyError(error)) throw new AppError('CONFLICT', `The handle "${input.handle}" is taken`);
      throw error;
    }
    return toUserRecord(doc);
  }

  async getUser(handle: string): Promise<UserRecord | null> {
    const doc = await this.users.findOne({ _id: handle }, { projection: publicFields });
    return doc && toUserRecord(doc);
  }

  /** One query for any number of handles; unknown handles are absent from the result. */
  async getUsers(handles: readonly string[]): Promise<UserRecord[]> {
    if (handles.length === 0) return [];
    const docs = await this.users.find({ _id: { $in: [...handles] } }, { projection: publicFields }).toArray();
    return docs.map(toUserRecord);
  }

  async getPasswordHash(handle: string): Promise<string | null> {
    const doc = await this.users.findOne({ _id: handle }, { projection: { passwordHash: 1 } });
    return doc?.passwordHash ?? null;
  }

  /**
   * Idempotent. Each edge write that really creates or removes an edge is followed at once by the
   * matching count change, so counts stay exact however many identical calls race (the unique
   * index lets one insert win). The two edges are separate writes (a standalone server has no
   * transactions); if the process dies between them, the next follow or unfollow of the same pair
   * finds the half-written pair and completes or removes the missing side, each with its count.
   */
  async follow(followerId: string, followeeId: string): Promise<{ created: boolean }> {
    if (followerId === followeeId) throw badInput('You cannot follow yourself');
    await this.assertUserExists(followeeId);
    const [created] = await Promise.all([
      this.linkEdge(this.following, followerId, followeeId, 'followingCount'),
      this.linkEdge(this.followers, followeeId, followerId, 'followerCount'),
    ]);
    return { created };
  }

  async unfollow(followerId: string, followeeId: string): Promise<{ removed: boolean }> {
    if (followerId === followeeId) throw badInput('You cannot unfollow yourself');
    await this.assertUserExists(followeeId);
    const [removed] = await Promise.all([
      this.unlinkEdge(this.following, followerId, followeeId, 'followingCount'),
      this.unlinkEdge(this.followers, followeeId, followerId, 'followerCount'),
    ]);
    return { removed };
  }

  /** Everyone `handle` follows, from the covered `{ _f, _t }` index. */
  async followingIds(handle: string): Promise<string[]> {
    const edges = await this.following.find({ _f: handle }, { projection: idsOnly }).toArray();
    return edges.map((edge) => edge._t);
  }

  /** Everyone following `handle`, in batches, so a large audience is never held in memory at once. */
  async *followerIdBatches(handle: string, batchSize: number): AsyncGenerator<string[]> {
    let batch: string[] = [];
    for await (const edge of this.followers.find({ _f: handle }, { projection: idsOnly, batchSize })) {
      batch.push(edge._t);
      if (batch.length === batchSize) {
        yield batch;
        batch = [];
      }
    }
    if (batch.length > 0) yield batch;
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
    const exists = await this.users.findOne({ _id: handle }, { projection: { _id: 1 } });
    if (!exists) throw notFound(`No user with handle "${handle}"`);
  }

  /** True when this call created the edge; a concurrent duplicate loses on the unique index. */
  private async linkEdge(edges: Collection<EdgeDocument>, from: string, to: string, count: CountField) {
    let created: boolean;
    try {
      const result = await edges.updateOne({ _f: from, _t: to }, { $setOnInsert: { _f: from, _t: to } }, { upsert: true });
      created = result.upsertedCount === 1;
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
      created = false;
    }
    if (created) await this.users.updateOne({ _id: from }, { $inc: { [count]: 1 } });
    return created;
  }

  private async unlinkEdge(edges: Collection<EdgeDocument>, from: string, to: string, count: CountField) {
    const removed = (await edges.deleteOne({ _f: from, _t: to })).deletedCount === 1;
    if (removed) await this.users.updateOne({ _id: from }, { $inc: { [count]: -1 } });
    return removed;
  }
}
