/**
 * graph/ owns users and their relations: the user directory and its cache (UserDirectory),
 * accounts' credentials and deletion (UserAccounts), the feed state kept on users (UserFeedState),
 * readers' filters (ReaderFilters: mutes, blocks, keywords), and who follows whom (here, with
 * FollowPairs keeping follows exact).
 */
import { randomUUID } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import { AppError, badInput, isDuplicateKeyError, notFound } from '../errors.js';
import { ReadThroughCache } from '../cache/readThrough.js';
import { FollowPairs, type FollowEffects, type FollowMode, type RequestPage, type RequestPosition } from './followPairs.js';
import { inListOrder, type ListPageRequest } from '../records/pages.js';
import { assertHandle, searchableName, toUserRecord, withoutCounts, type EdgeDocument, type HandlePage, type UserCounts, type UserDocument, type UserRecord } from '../records/users.js';
import { heldCaches } from '../config.js';
import { existingUsers as live, type UserDirectory } from './userDirectory.js';
import { UserLists } from './userLists.js';
import { plannedCollection, plannedIndexes } from '../db/shardPlan.js';

/** What changed, for the in-process tier of every instance to forget. */
export interface GraphChange {
  users?: readonly string[];
  following?: readonly string[];
}

const edgeIndex = { key: { _f: 1, _t: 1 }, name: 'from_to', unique: true } as const;
const idsOnly = { _id: 0, _t: 1 } as const;

/** Followers of one account with handles in `(after, upTo]`; null is open-ended. */
export interface FollowerRange {
  after: string | null;
  upTo: string | null;
}

/** Where a follow or unfollow left the pair, and whether this request's wish changed it. */
export interface FollowResult {
  following: boolean;
  changed: boolean;
  /** The followed user as this request's count change left them; null when it changed no count. */
  followee: UserRecord | null;
  /** Both users' counts as this request's change left them; empty when it changed none. */
  counts: UserCounts[];
  /** The followee approves its followers: the follow waits as a request, since `requestedAt`. */
  requested: boolean;
  requestedAt: Date | null;
}

/**
 * Users and who follows whom (Socialite's user graph service): the edges live in two collections,
 * one per direction, so both lists are single-index reads and each could be sharded by `_f`.
 * Follows are exact under any interleaving (FollowPairs).
 */
export class UserGraphService {
  readonly followers: Collection<EdgeDocument>;
  readonly following: Collection<EdgeDocument>;
  readonly pairs: FollowPairs;
  /** Lists of followed accounts, kept on the `following` edges (see UserLists). */
  readonly lists: UserLists;
  private readonly users: Collection<UserDocument>;
  /** Follow lists held in this process (see ReadThroughCache); every change invalidates them. */
  private readonly followingCache = new ReadThroughCache<string, { ids: string[] }>('following', heldCaches.following);

  constructor(
    db: Db,
    private readonly directory: UserDirectory,
  ) {
    this.users = directory.users;
    this.followers = plannedCollection<EdgeDocument>(db, 'followers');
    this.following = plannedCollection<EdgeDocument>(db, 'following');
    this.pairs = new FollowPairs(db, this.users, this.following, this.followers);
    this.lists = new UserLists(db, this.following);
  }

  async ensureIndexes(): Promise<void> {
    await Promise.all([
      plannedIndexes(this.followers, [edgeIndex]),
      plannedIndexes(this.following, [edgeIndex]),
      this.pairs.ensureIndexes(),
      this.lists.ensureIndexes(),
    ]);
  }

  async createUser(input: { handle: string; displayName: string | null; passwordHash: string }): Promise<UserRecord> {
    const doc: UserDocument = {
      _id: input.handle,
      accountId: randomUUID(),
      displayName: input.displayName,
      nameLower: searchableName(input.displayName),
      bio: null,
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
      this.directory.forget([input.handle]);
    } catch (error) {
      if (isDuplicateKeyError(error)) {
        const going = await this.users.countDocuments({ _id: input.handle, deletedAt: { $exists: true } }, { limit: 1 });
        throw new AppError('CONFLICT', going ? `The handle "${input.handle}" is being freed; try again in a minute` : `The handle "${input.handle}" is taken`);
      }
      throw error;
    }
    return toUserRecord(doc);
  }

  /** Forgets what this process holds about these users and follow lists. */
  invalidate(change: GraphChange): void {
    this.directory.forget(change.users ?? []);
    this.followingCache.invalidate(change.following ?? []);
    // A list holds only followed accounts: an unfollow may have emptied a place in any of them.
    this.lists.forgetOwners(change.following ?? []);
  }

  /** Counts as a follow left them, for the users held here (see UserDirectory.applyCounts). */
  applyCounts(counts: readonly UserCounts[]): void {
    this.directory.applyCounts(counts);
  }

  invalidateAll(): void {
    this.directory.forgetAll();
    this.followingCache.clear();
    this.lists.forgetAll();
  }

  follow(followerId: string, followeeId: string, effects: FollowEffects, checks?: Promise<unknown>): Promise<FollowResult> {
    if (followerId === followeeId) throw badInput('You cannot follow yourself');
    return this.setFollow(followerId, followeeId, true, effects, checks);
  }

  unfollow(followerId: string, followeeId: string, effects: FollowEffects, checks?: Promise<unknown>): Promise<FollowResult> {
    if (followerId === followeeId) throw badInput('You cannot unfollow yourself');
    return this.setFollow(followerId, followeeId, false, effects, checks);
  }

  /**
   * `checks` are the caller's own (rate limits, blocks): run beside the existence check, all before
   * any write. A follow reads the followee from the database, so no follow reaches an account whose
   * deletion has begun on another instance; an unfollow, which can only take an edge away, asks the
   * users this process holds.
   */
  private async setFollow(
    followerId: string,
    followeeId: string,
    want: boolean,
    effects: FollowEffects,
    checks: Promise<unknown> = Promise.resolve(),
  ): Promise<FollowResult> {
    const existing = want ? this.assertUserExists(followeeId) : this.assertUserHeld(followeeId).then(() => ({ locked: false }));
    const allChecks = Promise.all([existing, checks]);
    // The followee's own read tells whether it approves its followers: a follow of it becomes a request.
    const asks = existing.then((followee) => followee.locked, () => false);
    return this.applied(followerId, followeeId, await this.pairs.set(followerId, followeeId, want, effects, allChecks, { asks }));
  }

  private applied(followerId: string, followeeId: string, result: Awaited<ReturnType<FollowPairs['set']>>): FollowResult {
    const { pair, changed, followee, counts, requested } = result;
    this.settled(followerId, followeeId, counts);
    return { following: pair.want, changed, followee: followee && toUserRecord(followee), counts, requested, requestedAt: requested ? pair.rq! : null };
  }

  /**
   * The followee approves a request: a follow like any other, recorded only while the request
   * stands (NOT_FOUND otherwise: never approved, rejected, or taken back by its requester).
   */
  async approve(followeeId: string, followerId: string, effects: FollowEffects): Promise<FollowResult> {
    assertHandle(followerId);
    const mode: FollowMode = { approving: true };
    return this.applied(followerId, followeeId, await this.pairs.set(followerId, followeeId, true, effects, this.assertUserExists(followerId), mode));
  }

  /** The followee rejects a request: it goes without a trace. NOT_FOUND when there was none. */
  async reject(followeeId: string, followerId: string): Promise<void> {
    assertHandle(followerId);
    if (!(await this.pairs.dropRequest(followerId, followeeId))) throw notFound(`No follow request from "${followerId}"`);
  }

  /** The requests waiting for `followeeId`, oldest first. */
  requestsOf(followeeId: string, request: ListPageRequest<RequestPosition>): Promise<RequestPage> {
    return this.pairs.requestsOf(followeeId, request);
  }

  /** Whether `handle` approves its followers now, read from the database (not what this process holds). */
  async isLocked(handle: string): Promise<boolean> {
    const user = await this.users.findOne({ _id: handle, ...live }, { projection: { locked: 1 } });
    return user?.locked === true;
  }

  /** Ends a follow of an account being deleted (which no longer counts as existing). */
  async endFollow(followerId: string, followeeId: string, effects: FollowEffects): Promise<void> {
    const { counts } = await this.pairs.set(followerId, followeeId, false, effects);
    this.settled(followerId, followeeId, counts);
  }

  /** What this process holds after a follow or unfollow: fresh counts in place, the follow list forgotten. */
  private settled(followerId: string, followeeId: string, counts: readonly UserCounts[]): void {
    this.applyCounts(counts);
    this.invalidate({ users: withoutCounts([followerId, followeeId], counts), following: [followerId] });
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
   * `handle`'s followers cut into ranges of `size` in handle order, each found by skipping `size`
   * keys of the covered `{ _f, _t }` index: the ranges of a large audience are known without
   * reading its handles, and each sub-task reads its own range, one chunk range of `followers`.
   */
  async *followerRanges(handle: string, size: number): AsyncGenerator<FollowerRange> {
    let after: string | null = null;
    for (;;) {
      // The range's last follower and the next one: without a next, this range is the last.
      const [last, next] = await this.followers
        .find({ _f: handle, ...(after === null ? {} : { _t: { $gt: after } }) }, { projection: idsOnly })
        .sort({ _f: 1, _t: 1 })
        .skip(size - 1)
        .limit(2)
        .toArray();
      // The last range is open: it also reaches whoever follows with a later handle by the time it runs.
      if (!last || !next) return yield { after, upTo: null };
      yield { after, upTo: last._t };
      after = last._t;
    }
  }

  /** The followers of `handle` in one range of `followerRanges`, as they are now. */
  async followerIdsIn(handle: string, { after, upTo }: FollowerRange): Promise<string[]> {
    const bounds = { ...(after === null ? {} : { $gt: after }), ...(upTo === null ? {} : { $lte: upTo }) };
    const edges = await this.followers
      .find({ _f: handle, ...(Object.keys(bounds).length > 0 ? { _t: bounds } : {}) }, { projection: idsOnly })
      .sort({ _f: 1, _t: 1 })
      .toArray();
    return edges.map((edge) => edge._t);
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
   * The followers of each of these authors whose audience fits `limit`, all in one query over the
   * covered `{ _f, _t }` index; an author with more (by the count held here, or by what the query
   * finds) is absent, for their followers to be split into sub-tasks instead.
   */
  async smallAudiences(authorIds: readonly string[], limit: number): Promise<Map<string, string[]>> {
    if (authorIds.length === 0) return new Map();
    const authors = await this.directory.cached(authorIds);
    const small = [...authors.values()].filter((author) => author.record.followerCount <= limit).map((author) => author.record.handle);
    const audiences = new Map<string, string[]>(small.map((handle) => [handle, []]));
    if (small.length === 0) return audiences;
    // Counts held here may be a moment old: read a little past them, and leave out any author found to have more.
    const expected = small.reduce((sum, handle) => sum + authors.get(handle)!.record.followerCount, 0);
    const edges = await this.followers
      .find({ _f: small.length === 1 ? small[0]! : { $in: small } }, { projection: { _id: 0, _f: 1, _t: 1 } })
      .limit(expected + 10 * small.length + 1)
      .toArray();
    for (const edge of edges) audiences.get(edge._f)?.push(edge._t);
    const cutShort = edges.length > expected + 10 * small.length;
    for (const [handle, followers] of audiences) if (cutShort || followers.length > limit) audiences.delete(handle);
    return audiences;
  }

  /** Which of `handles` the viewer follows: one query for a whole page of users. */
  async followedAmong(viewerId: string, handles: readonly string[]): Promise<Set<string>> {
    if (handles.length === 0) return new Set();
    const edges = await this.following
      .find({ _f: viewerId, _t: { $in: [...handles] } }, { projection: idsOnly })
      .toArray();
    return new Set(edges.map((edge) => edge._t));
  }

  listFollowers(handle: string, page: ListPageRequest<string>): Promise<HandlePage> {
    return this.listEdges(this.followers, handle, page);
  }

  listFollowing(handle: string, page: ListPageRequest<string>): Promise<HandlePage> {
    return this.listEdges(this.following, handle, page);
  }

  /** By handle, either way from a handle, on the `{ _f, _t }` index. */
  private async listEdges(edges: Collection<EdgeDocument>, handle: string, page: ListPageRequest<string>): Promise<HandlePage> {
    const forward = page.direction === 'forward';
    const filter = page.from === null ? { _f: handle } : { _f: handle, _t: { [forward ? '$gt' : '$lt']: page.from } };
    const order = forward ? 1 : -1;
    const docs = await edges
      .find(filter, { projection: idsOnly })
      .sort({ _f: order, _t: order })
      .limit(page.limit + 1)
      .toArray();
    const { items, hasMore } = inListOrder(page.direction, docs.map((edge) => edge._t), page.limit);
    return { handles: items, hasMore };
  }

  private async assertUserHeld(handle: string): Promise<void> {
    assertHandle(handle);
    if (!(await this.directory.getUser(handle))) throw notFound(`No user with handle "${handle}"`);
  }

  private async assertUserExists(handle: string): Promise<{ locked: boolean }> {
    assertHandle(handle);
    // A suspended account exists for no one: nobody follows it, nor does it approve anyone, meanwhile.
    const exists = await this.users.findOne({ _id: handle, ...live, suspended: { $exists: false } }, { projection: { _id: 1, locked: 1 } });
    if (!exists) throw notFound(`No user with handle "${handle}"`);
    return { locked: exists.locked === true };
  }
}
