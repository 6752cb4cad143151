import type { Collection, Db } from 'mongodb';
import { ReadThroughCache } from '../cache/readThrough.js';
import { heldCaches } from '../config.js';
import { toUserRecord, type UserCounts, type UserDocument, type UserRecord } from '../records/users.js';
import { plannedCollection } from '../db/shardPlan.js';

const noTags: readonly string[] = Object.freeze([]);

/** Users that still exist: an account being deleted is gone for every read from the start. */
export const existingUsers = { deletedAt: { $exists: false } } as const;

/** What this process keeps of a user: the public record, and what token checks and pages need. */
export interface CachedUser {
  record: UserRecord;
  accountId: string;
  /** The generation of tokens that still work (see UserDocument.tokenGeneration). */
  tokenGeneration: number;
  pulls: boolean;
  followersOnly: boolean;
  inbox: boolean;
  /** The tags the user follows (UserDocument.followedTags). */
  followedTags: readonly string[];
  /** The version of `record`'s counts (UserDocument.countVersion). */
  countVersion: number;
  /** How many times whom the user follows changed (UserDocument.followingVersion). */
  followingVersion: number;
}

/**
 * The `users` collection and the users this process holds in front of it (see ReadThroughCache).
 * Accounts, the follow graph and the feed state kept on users all read users through here, so a
 * change any of them makes is forgotten in one place.
 */
export class UserDirectory {
  readonly users: Collection<UserDocument>;
  private readonly cache = new ReadThroughCache<string, CachedUser>('users', heldCaches.users);

  constructor(db: Db) {
    this.users = plannedCollection<UserDocument>(db, 'users');
  }

  async getUser(handle: string): Promise<UserRecord | null> {
    return (await this.getUsers([handle]))[0] ?? null;
  }

  /** At most one query for any number of handles, none when all are held; unknown handles are absent. */
  async getUsers(handles: readonly string[]): Promise<UserRecord[]> {
    return [...(await this.cached(handles)).values()].map((user) => user.record);
  }

  /** What this process holds of these users, loading the missing ones in one query. */
  cached(handles: readonly string[]): Promise<Map<string, CachedUser>> {
    if (handles.length === 0) return Promise.resolve(new Map());
    return this.cache.getMany([...new Set(handles)], async (missing) => {
      const docs = await this.users
        // A suspended account is left out of every read, like one being deleted (moderation/suspensions.ts).
        .find({ _id: { $in: missing }, ...existingUsers, suspended: { $exists: false } }, { projection: { passwordHash: 0, pendingCounts: 0, readAt: 0, timelineGap: 0, timelineMarker: 0, hidden: 0 } })
        .toArray();
      return new Map(
        docs.map((doc) => [
          doc._id,
          {
            record: toUserRecord(doc),
            accountId: doc.accountId,
            tokenGeneration: doc.tokenGeneration ?? 0,
            pulls: doc.pulls === true,
            followersOnly: doc.followersOnly === true,
            inbox: doc.inbox === true,
            followedTags: doc.followedTags ?? noTags,
            countVersion: doc.countVersion ?? 0,
            followingVersion: doc.followingVersion ?? 0,
          },
        ]),
      );
    });
  }

  /**
   * Counts as a follow left them: a held user takes them when they are newer than what it holds,
   * so a count change costs no other read of the user, and announcements arriving out of order
   * never take a count back.
   */
  applyCounts(counts: readonly UserCounts[]): void {
    for (const { handle, followerCount, followingCount, version, followingVersion } of counts) {
      this.cache.update(handle, (held) =>
        held.countVersion >= version ? held : { ...held, countVersion: version, followingVersion, record: { ...held.record, followerCount, followingCount } },
      );
    }
  }

  forget(handles: readonly string[]): void {
    this.cache.invalidate(handles);
  }

  forgetAll(): void {
    this.cache.clear();
  }

  stats() {
    return this.cache.stats();
  }
}
