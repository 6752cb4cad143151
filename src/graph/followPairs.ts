import { ObjectId, type AnyBulkWriteOperation, type Collection, type Db } from 'mongodb';
import { isDuplicateKeyError, notFound } from '../errors.js';
import { groupTokens, type GroupActor, type GroupMember, type GroupMemberSource, type GroupMembership, type GroupTokens, type NotificationRecord, type TokenToPrune } from '../records/notifications.js';
import { toUserCounts, type EdgeDocument, type FollowKey, type UserCounts, type UserDocument } from '../records/users.js';
import { carriedEventsField, followChange, notificationAdded, type CarriedEvents, type ChangeEvent, type ChangePublisher } from '../changes/events.js';
import { sweepQuery } from '../db/connect.js';
import { Backoff, findStalled, finishEach, stalledSince } from '../db/stalledWork.js';
import { plannedCollection, plannedIndexes } from '../db/shardPlan.js';
import { inListOrder, type ListPageRequest } from '../records/pages.js';

/**
 * The state of one (follower, followee) pair: what was last asked for (`want`, versioned by `v`)
 * and which version the edges, counts and timeline reflect (`applied`). Follow and unfollow
 * requests only record their wish here; the one holder of the pair's lease then brings everything
 * else in line with the latest wish, so racing requests of a pair never interleave their writes.
 * The pair is also the follower's membership of the followee's FOLLOW notification group.
 */
export interface FollowPairDocument extends GroupMembership {
  /** `<follower> <followee>`: handles contain no space. */
  _id: string;
  f: string;
  t: string;
  want: boolean;
  v: number;
  applied: number;
  /** Whether both users' counts include this pair. */
  counted: boolean;
  /**
   * A count change under way: its token sits in each user's `pendingCounts`. The same token
   * guards the group change (`gc`) recorded with it.
   */
  countChange?: { token: string; delta: 1 | -1; applied: boolean };
  lease: { owner: string; until: Date } | null;
  /** True while `applied < v`: a repair sweep finds pairs whose request died. */
  dirty: boolean;
  updatedAt: Date;
  /** Tokens finished changes left on both users (and group `g`), to be pruned (`pruneSettled`). */
  prune?: TokenToPrune[];
  /** Set while `prune` holds anything, or `ro`: what the pruning sweep looks for. */
  tp?: true;
  /**
   * An applied unfollow whose followee's entries are still in the follower's timeline: the sweep
   * takes them out, a second later and in batches (`pruneSettled`), unless a follow back comes first.
   */
  ro?: true;
  /**
   * A follow request waiting for the followee's approval, since when: only on a pair not wanted.
   * Every wish (an approval, an unfollow, a follow once the account is unlocked) removes it in the
   * same write that records the wish, so a request and a follow never stand side by side.
   */
  rq?: Date;
}

/** The notification group a follow counts in: handed down by notifications/ (see GroupMemberships). */
export interface FollowGroupEffects {
  /** The group a new follow joins: null when it tells the followee nothing. Asked with the request's checks. */
  groupOf(followerId: string, followeeId: string): Promise<string | null>;
  /** When a follow joins its group. */
  now(): Date;
  /** Applies a recorded join once; returns the group as it is now (null when applied before). */
  join(change: { group: string; token: string; at: Date }, followerId: string, followeeId: string): Promise<NotificationRecord | null>;
  leave(change: { group: string; token: string }, followerId: string, followeeId: string, members: GroupMemberSource): Promise<void>;
  /** Whether the followee's group holds the change with this token (applied, and not pruned yet). */
  applied(group: string, followeeId: string, token: string): Promise<boolean>;
  pruneGroupTokens(tokensByGroup: GroupTokens): Promise<void>;
}

/** Work that belongs to a follow or unfollow; runs under the pair's lease. */
export interface FollowEffects {
  /** After the edges are written: a backfill must see the edge a concurrent post's fanout missed. */
  followed(followerId: string, followeeId: string): Promise<void>;
  /**
   * Takes unfollowed followees' entries out of their followers' timelines in one bulk write, where
   * timelines keep them (FeedBackend.removeUnfollowed). An unfollow's request leaves it to the sweep.
   */
  removeUnfollowed?(unfollows: readonly FollowKey[]): Promise<void>;
  /** The followee's notification group; none for a follow that tells no one (an account's removal). */
  group?: FollowGroupEffects;
  /**
   * Where each applied follow or unfollow is announced, by the pair's write that records it as
   * applied (see ChangePublisher.publishWithin): whoever applies it, the request or the sweep.
   */
  announcer: Pick<ChangePublisher, 'publishWithin'>;
}

/** What a follow or unfollow request left: see `FollowPairs.set`. */
export interface PairResult {
  pair: FollowPairDocument;
  changed: boolean;
  followee: UserDocument | null;
  counts: UserCounts[];
  /** The follow was recorded as a request for the followee to approve (`pair.rq` says since when). */
  requested: boolean;
}

/** How `FollowPairs.set` records a follow: as a request when `asks` resolves true, or as an approval of one. */
export interface FollowMode {
  /** Whether the followee approves its followers; asked beside the checks. */
  asks?: Promise<boolean>;
  /** The followee approves a request: the follow is recorded only while the request stands (NOT_FOUND otherwise). */
  approving?: boolean;
}

/** A request's place in its account's list: when it was asked, then the requester's handle. */
export interface RequestPosition {
  since: Date;
  followerId: string;
}

/** A page of the requests waiting for one account, oldest first. */
export interface RequestPage {
  requests: { followerId: string; since: Date }[];
  hasMore: boolean;
  /** Every request waiting, this page's and the others. */
  totalCount: number;
}

/** Long enough for a reconcile's dozen writes; a crashed holder delays its pair this long. */
const pairLeaseMs = 10_000;
/** A dirty pair untouched this long has lost its request; the sweep finishes it. */
const stalledAfterMs = 2_000;
/** Up to this many settled pairs' tokens are pruned by one pass of the sweep. */
const pruneBatch = 500;

const pairId = (followerId: string, followeeId: string) => `${followerId} ${followeeId}`;

/** What an approval's wish is recorded under: the request still stands (no unfollow or rejection came first). */
const standingRequest = { rq: { $exists: true } } as const;

/** The group change a wish records with its lease: into the day's group for a follow, out of any for an unfollow. */
const groupChangeOf = (token: string, want: boolean, group: string | null, at: Date): NonNullable<GroupMembership['gc']> => ({ t: token, to: want ? group : null, at });

/**
 * Follows and unfollows, exact under any interleaving and any crash.
 *
 * - Serialised per pair: every request bumps the pair's version, then whoever holds the pair's
 *   lease applies the newest wish until nothing newer is left; the others wait for their version.
 * - Counts change exactly once per transition without transactions: the pair first records the
 *   change and a token, each user's `$inc` is guarded by `pendingCounts: { $ne: token }` and adds
 *   the token in the same write, so a replay after a crash skips the users already counted. The
 *   follower's membership of the followee's FOLLOW group changes under the same token (see
 *   notifications/notificationGroups.ts). Tokens are pruned in batches once the pair is finished.
 * - A request that dies leaves its pair dirty; the next request for the pair, or the repair sweep
 *   the fanout workers run, finishes it once the lease has run out.
 */
export class FollowPairs implements GroupMemberSource {
  readonly pairs: Collection<FollowPairDocument>;

  constructor(
    db: Db,
    private readonly users: Collection<UserDocument>,
    private readonly following: Collection<EdgeDocument>,
    private readonly followers: Collection<EdgeDocument>,
  ) {
    this.pairs = plannedCollection<FollowPairDocument>(db, 'follow_pairs');
  }

  async ensureIndexes(): Promise<void> {
    await plannedIndexes(this.pairs, [
      { key: { dirty: 1, updatedAt: 1 }, name: 'dirty_since' },
      // Every pair of a deleted account, either side.
      { key: { f: 1 }, name: 'follower' },
      { key: { t: 1 }, name: 'followee' },
      { key: { tp: 1 }, name: 'tokens_to_prune', partialFilterExpression: { tp: true } },
      // A FOLLOW group's members in the order it shows them, and those joining it.
      { key: { g: 1, ga: -1, f: -1 }, name: 'group_members', partialFilterExpression: { g: { $exists: true } } },
      { key: { 'gc.to': 1 }, name: 'group_changes', partialFilterExpression: { 'gc.to': { $exists: true } } },
      // An account's follow requests, oldest first.
      { key: { t: 1, rq: 1, f: 1 }, name: 'follow_requests', partialFilterExpression: { rq: { $exists: true } } },
    ]);
  }

  /**
   * Pairs for follow edges written before pairs existed, so that every edge has one: settled, as
   * the edge and its counts were always written together. Idempotent; run at start until it has
   * gone through once (see `prepareDatabase`).
   */
  async pairEveryEdge(): Promise<number> {
    let created = 0;
    let batch: EdgeDocument[] = [];
    const flush = async () => {
      if (batch.length === 0) return;
      const now = new Date();
      const result = await this.pairs.bulkWrite(
        batch.map(({ _f, _t }) => ({
          updateOne: {
            filter: { _id: pairId(_f, _t) },
            update: { $setOnInsert: { f: _f, t: _t, want: true, v: 1, applied: 1, counted: true, lease: null, dirty: false, updatedAt: now } },
            upsert: true,
          },
        })),
        { ordered: false },
      );
      created += result.upsertedCount;
      batch = [];
    };
    for await (const edge of this.following.find({}, { projection: { _id: 0, _f: 1, _t: 1 } })) {
      batch.push(edge);
      if (batch.length === 1000) await flush();
    }
    await flush();
    return created;
  }

  /** Forgets the finished pairs of a deleted account, so a new account under the handle starts clean. */
  async forget(handle: string): Promise<void> {
    await this.pairs.deleteMany({ $or: [{ f: handle }, { t: handle }], dirty: false });
  }

  /** Which of these follows are wanted now (a missing pair is not), in one query. */
  async wanted(follows: readonly (readonly [followerId: string, followeeId: string])[]): Promise<(followerId: string, followeeId: string) => boolean> {
    const ids = follows.map(([followerId, followeeId]) => pairId(followerId, followeeId));
    const found = ids.length === 0 ? [] : await this.pairs.find({ _id: { $in: ids }, want: true }, { projection: { _id: 1 } }).toArray();
    const wanted = new Set(found.map((pair) => pair._id));
    return (followerId, followeeId) => wanted.has(pairId(followerId, followeeId));
  }

  /**
   * Records the wish and returns once it, or a newer wish for the pair, is fully applied, with
   * whether this wish changed what was asked for before it. Of racing follows of one pair exactly
   * one changes it, so a follow or an unfollow is announced once however often it is asked for.
   * `followee` is the followed user's document as the request's own count change left it (fresh
   * counts without another read), or null when this request changed no count; `counts`, both
   * users' counts as that change left them (empty when it changed none). `checks` (the
   * caller's own: rate limits, blocks, the followee's existence) must pass before anything is written.
   */
  async set(followerId: string, followeeId: string, want: boolean, effects: FollowEffects, checks: Promise<unknown> = Promise.resolve(), mode: FollowMode = {}): Promise<PairResult> {
    const id = pairId(followerId, followeeId);
    const owner = new ObjectId().toHexString();
    // Which group a follow would join is asked beside the checks and recorded with the wish.
    const [group, , asks] = await Promise.all([want && effects.group ? effects.group.groupOf(followerId, followeeId) : null, checks, want ? mode.asks : false]);
    if (asks) return this.recordRequest(followerId, followeeId);
    const approving = mode.approving === true;
    // Recorded with the lease, before it is known to be needed: applied only while the pair's
    // `counted` (or its group) differs from the wish, so one that turns out needless is dropped.
    const token = new ObjectId().toHexString();
    const countChange = { token, delta: want ? 1 : -1, applied: false } as const;
    const groupChange = groupChangeOf(token, want, group, effects.group?.now() ?? new Date());
    const claim = await this.recordWishAndLease(followerId, followeeId, want, owner, countChange, groupChange, approving);
    const changed = (claim.before?.want ?? false) !== want;
    const version = (claim.before?.v ?? 0) + 1;
    if (!claim.leased) return { pair: await this.applyUpTo(id, version, effects), changed, followee: null, counts: [], requested: false };
    const leased: FollowPairDocument = {
      ...(claim.before ?? { _id: id, f: followerId, t: followeeId, applied: 0, counted: false }),
      want,
      v: version,
      dirty: true,
      countChange,
      gc: groupChange,
      lease: { owner, until: claim.leaseUntil },
      updatedAt: claim.leaseUntil,
    };
    const applied = await this.applyUnderLease(leased, owner, effects, true);
    return { ...applied, changed, requested: false };
  }

  /**
   * A follow of an account that approves its followers: one write records the request on the pair
   * (kept from its first asking), unless the pair is wanted already, which the upsert's collision on
   * `_id` tells. No edge, count or group changes. `changed`: this request made it.
   */
  private async recordRequest(followerId: string, followeeId: string): Promise<PairResult> {
    const _id = pairId(followerId, followeeId);
    const now = new Date();
    const answer = (pair: FollowPairDocument, requested: boolean, changed: boolean): PairResult => ({ pair, changed, followee: null, counts: [], requested });
    for (let attempt = 0; ; attempt++) {
      try {
        const pair = await this.pairs.findOneAndUpdate(
          { _id, want: { $ne: true } },
          { $min: { rq: now }, $setOnInsert: { f: followerId, t: followeeId, want: false, v: 0, applied: 0, counted: false, lease: null, dirty: false, updatedAt: now } },
          { upsert: true, returnDocument: 'after' },
        );
        return answer(pair!, true, pair!.rq!.getTime() === now.getTime());
      } catch (error) {
        if (!isDuplicateKeyError(error)) throw error;
        // Followed already (or two first requests for a new pair: one insert wins, the other is asked again).
        const pair = await this.pairs.findOne({ _id });
        if (pair?.want) return answer(pair, false, false);
        if (attempt > 2) throw error;
      }
    }
  }

  /** Takes a request back without a follow (a rejection). False when there was none. */
  async dropRequest(followerId: string, followeeId: string): Promise<boolean> {
    const dropped = await this.pairs.findOneAndUpdate({ _id: pairId(followerId, followeeId), rq: { $exists: true } }, { $unset: { rq: '' } }, { projection: { _id: 1 } });
    return dropped !== null;
  }

  /** The requests waiting for `followeeId`, oldest first, either way from `request.from` (exclusive). */
  async requestsOf(followeeId: string, request: ListPageRequest<RequestPosition>): Promise<RequestPage> {
    const { from, limit } = request;
    const [beyond, order] = request.direction === 'forward' ? (['$gt', 1] as const) : (['$lt', -1] as const);
    const after = from === null ? {} : { $or: [{ rq: { [beyond]: from.since } }, { rq: from.since, f: { [beyond]: from.followerId } }] };
    const [docs, totalCount] = await Promise.all([
      this.pairs
        .find({ t: followeeId, rq: { $exists: true }, ...after }, { projection: { f: 1, rq: 1 } })
        .sort({ t: order, rq: order, f: order })
        .limit(limit + 1)
        .toArray(),
      this.requestCount(followeeId),
    ]);
    const { items, hasMore } = inListOrder(request.direction, docs.map((doc) => ({ followerId: doc.f, since: doc.rq! })), limit);
    return { requests: items, hasMore, totalCount };
  }

  /** How many requests wait for `followeeId`: a count on the `follow_requests` index. */
  requestCount(followeeId: string): Promise<number> {
    return this.pairs.countDocuments({ t: followeeId, rq: { $exists: true } });
  }

  /** Of `followeeIds`, those `followerId` asked to follow and waits for: one query for a page of users. */
  async requestedAmong(followerId: string, followeeIds: readonly string[]): Promise<Set<string>> {
    if (followeeIds.length === 0) return new Set();
    const found = await this.pairs.find({ _id: { $in: followeeIds.map((followeeId) => pairId(followerId, followeeId)) }, rq: { $exists: true } }, { projection: { t: 1 } }).toArray();
    return new Set(found.map((pair) => pair.t));
  }

  /**
   * Takes the follower out of the followee's FOLLOW group, leaving the follow: the followee muted
   * them. Under the pair's lease; a no-op for a pair in no group.
   */
  async leaveGroup(followerId: string, followeeId: string, group: FollowGroupEffects): Promise<void> {
    const id = pairId(followerId, followeeId);
    for (const backoff = new Backoff(); ; await backoff.wait()) {
      const current = await this.pairs.findOne({ _id: id }, { projection: { g: 1, dirty: 1 } });
      if (!current?.g) return;
      const owner = new ObjectId().toHexString();
      const now = new Date();
      const leased = await this.pairs.findOneAndUpdate(
        { _id: id, dirty: false, g: current.g, $or: [{ lease: null }, { 'lease.until': { $lt: now } }] },
        { $set: { lease: { owner, until: new Date(now.getTime() + pairLeaseMs) } } },
        { returnDocument: 'after' },
      );
      if (!leased) continue;
      const held = { _id: id, 'lease.owner': owner };
      const token = new ObjectId().toHexString();
      await this.update(held, { $set: { gc: { t: token, to: null, at: now } } });
      await group.leave({ group: current.g, token }, followerId, followeeId, this);
      await this.update(held, { $set: { lease: null, tp: true }, $unset: { g: '', ga: '', gc: '' }, $push: { prune: { t: token, g: current.g, left: true } } });
      return;
    }
  }

  /** Finishes pairs whose request died mid-way. Returns how many it repaired. */
  async repairStalled(effects: FollowEffects, limit = 100): Promise<number> {
    const stalled = await findStalled(this.pairs, { dirty: true, updatedAt: { $lt: stalledSince(stalledAfterMs) } }, { limit, projection: { _id: 1, v: 1 } });
    return finishEach(stalled, (pair) => this.applyUpTo(pair._id, pair.v, effects));
  }

  /**
   * One pass of the sweep that drops the tokens finished follows left on users and groups, and
   * takes the entries of the unfollows it finds out of timelines: three writes for up to
   * `pruneBatch` pairs, three more where some are unfollows. Returns how many pairs it pruned.
   */
  async pruneSettled({ group, removeUnfollowed }: Pick<FollowEffects, 'group' | 'removeUnfollowed'>): Promise<number> {
    const settled = await findStalled(this.pairs, { tp: true }, { limit: pruneBatch, projection: { prune: 1, f: 1, t: 1, ro: 1 } });
    if (settled.length === 0) return 0;
    const byUser = new Map<string, string[]>();
    for (const pair of settled) {
      for (const { t } of pair.prune ?? []) for (const user of [pair.f, pair.t]) byUser.set(user, [...(byUser.get(user) ?? []), t]);
    }
    const byGroup = groupTokens(settled.map((pair) => ({ recipient: pair.t, prune: pair.prune })));
    const owed = removeUnfollowed ? settled.filter((pair) => pair.ro) : [];
    const [removal] = await Promise.all([
      this.removeUnfollowedEntries(owed, removeUnfollowed),
      byUser.size > 0 &&
        this.users.bulkWrite(
          [...byUser].map(([user, tokens]) => ({ updateOne: { filter: { _id: user }, update: { $pull: { pendingCounts: { $in: tokens } } } } })),
          { ordered: false, ...sweepQuery },
        ),
      group?.pruneGroupTokens(byGroup),
    ]);
    await this.pairs.bulkWrite(
      settled.flatMap((pair): AnyBulkWriteOperation<FollowPairDocument>[] => {
        const tokens = (pair.prune ?? []).map(({ t }) => t);
        const pruned = { $pull: { prune: { t: { $in: tokens } } } };
        const removed = removal?.removed.has(pair._id) === true;
        // An unfollow whose entries another holder of its pair kept this pass from: the tokens go, the pair stays for the next.
        if (removeUnfollowed && pair.ro && !removed) return [{ updateOne: { filter: { _id: pair._id }, update: pruned } }];
        // Its entries are out: its lease and mark go in the write that prunes it. (Only then: a mark
        // set since the read is a newer unfollow's, whose token keeps the first write below off it.)
        const held = removed ? { 'lease.owner': removal!.owner } : {};
        const released = removed ? { $set: { lease: null } } : {};
        return [
          // Nothing finished since the read but what is pruned now (by this pass or a racing one): the pair is clean.
          // The events its last write carried go too: heard long since. (A mark left by another strategy goes too.)
          {
            updateOne: {
              filter: { _id: pair._id, ...held, prune: { $not: { $elemMatch: { t: { $nin: tokens } } } } },
              update: { $unset: { tp: '' as const, prune: '' as const, ro: '' as const, [carriedEventsField]: '' as const }, ...released },
            },
          },
          // Something did: only what was pruned leaves, the newer tokens wait for the next pass.
          { updateOne: { filter: { _id: pair._id, ...held, tp: true as const }, update: { ...pruned, ...released, ...(removed ? { $unset: { ro: '' as const } } : {}) } } },
        ];
      }),
      { ordered: true, ...sweepQuery },
    );
    return settled.length;
  }

  /**
   * The entries of these unfollows leave their followers' timelines, each pair under a lease the
   * sweep takes for them all at once: a follow back waits for it, as its backfill must not be taken
   * out with them (it takes a marked pair's entries out itself when it comes first). A pair whose
   * lease someone holds, or that is followed again, waits for a later pass. Three commands.
   */
  private async removeUnfollowedEntries(owed: readonly FollowPairDocument[], removeUnfollowed: FollowEffects['removeUnfollowed']): Promise<{ owner: string; removed: Set<string> } | null> {
    if (owed.length === 0 || !removeUnfollowed) return null;
    const owner = new ObjectId().toHexString();
    const now = new Date();
    const ids = owed.map((pair) => pair._id);
    await this.pairs.updateMany(
      { _id: { $in: ids }, ro: true, counted: false, $or: [{ lease: null }, { 'lease.until': { $lt: now } }] },
      { $set: { lease: { owner, until: new Date(now.getTime() + pairLeaseMs) } } },
      sweepQuery,
    );
    const held = await this.pairs.find({ _id: { $in: ids }, 'lease.owner': owner }, { projection: { f: 1, t: 1 }, ...sweepQuery }).toArray();
    if (held.length > 0) await removeUnfollowed(held.map((pair) => ({ followerId: pair.f, followeeId: pair.t })));
    return { owner, removed: new Set(held.map((pair) => pair._id)) };
  }

  /** A FOLLOW group's members after `below`, in the order the group shows them (see GroupMemberSource). */
  async *membersAfter(group: string, below: GroupActor): AsyncIterable<GroupMember> {
    const pairs = this.pairs
      .find({ g: group, $or: [{ ga: { $lt: below.at } }, { ga: below.at, f: { $lt: below.u } }] }, { projection: { f: 1, g: 1, ga: 1, gc: 1 } })
      .sort({ g: 1, ga: -1, f: -1 })
      .batchSize(50);
    for await (const pair of pairs) yield asMember(pair);
  }

  async membersJoining(group: string): Promise<GroupMember[]> {
    return (await this.pairs.find({ 'gc.to': group }, { projection: { f: 1, g: 1, ga: 1, gc: 1 } }).toArray()).map(asMember);
  }

  /**
   * One write for the common case: the wish, the pair's lease when nobody holds it, and the count
   * and group changes it may need. When someone holds the lease, or a change a dead request began
   * is still recorded, the filter misses, the upsert collides with the pair's `_id`, and the wish
   * is recorded alone for the holder, or the careful path, to apply.
   */
  private async recordWishAndLease(
    followerId: string,
    followeeId: string,
    want: boolean,
    owner: string,
    countChange: NonNullable<FollowPairDocument['countChange']>,
    groupChange: NonNullable<FollowPairDocument['gc']>,
    approving: boolean,
  ): Promise<{ before: FollowPairDocument | null; leased: boolean; leaseUntil: Date }> {
    const now = new Date();
    const leaseUntil = new Date(now.getTime() + pairLeaseMs);
    try {
      const before = await this.pairs.findOneAndUpdate(
        { _id: pairId(followerId, followeeId), $or: [{ lease: null }, { 'lease.until': { $lt: now } }], countChange: { $exists: false }, ...(approving ? standingRequest : {}) },
        {
          $set: { want, dirty: true, updatedAt: now, lease: { owner, until: leaseUntil }, countChange, gc: groupChange },
          $inc: { v: 1 },
          $unset: { rq: '' },
          $setOnInsert: { f: followerId, t: followeeId, applied: 0, counted: false },
        },
        // An approval never makes a pair: without a standing request it misses and asks the careful way.
        { upsert: !approving, returnDocument: 'before' },
      );
      if (before || !approving) return { before, leased: true, leaseUntil };
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
    }
    return { before: await this.recordWish(followerId, followeeId, want, approving), leased: false, leaseUntil };
  }

  /** The pair as it was before this wish (null for a new pair); this wish's version is one more. */
  private async recordWish(followerId: string, followeeId: string, want: boolean, approving = false): Promise<FollowPairDocument | null> {
    const _id = pairId(followerId, followeeId);
    for (let attempt = 0; ; attempt++) {
      try {
        const before = await this.pairs.findOneAndUpdate(
          { _id, ...(approving ? standingRequest : {}) },
          {
            $set: { want, dirty: true, updatedAt: new Date() },
            $inc: { v: 1 },
            $unset: { rq: '' },
            $setOnInsert: { f: followerId, t: followeeId, applied: 0, counted: false, lease: null },
          },
          { upsert: !approving, returnDocument: 'before' },
        );
        if (approving && !before) throw notFound(`No follow request from "${followerId}"`);
        return before;
      } catch (error) {
        // Two first requests for a new pair: one insert wins, the other becomes an update.
        if (!isDuplicateKeyError(error) || attempt > 0) throw error;
      }
    }
  }

  private async applyUpTo(id: string, version: number, effects: FollowEffects): Promise<FollowPairDocument> {
    const backoff = new Backoff();
    for (;;) {
      const owner = new ObjectId().toHexString();
      const now = new Date();
      // Only a pair that still lacks this version is leased: a lease taken to find it applied would
      // have to be given back, and a crash in between would hold the settled pair for a lease's length.
      const leased = await this.pairs.findOneAndUpdate(
        { _id: id, applied: { $lt: version }, $or: [{ lease: null }, { 'lease.until': { $lt: now } }] },
        { $set: { lease: { owner, until: new Date(now.getTime() + pairLeaseMs) } } },
        { returnDocument: 'after' },
      );
      if (leased) return (await this.applyUnderLease(leased, owner, effects, false)).pair;
      // Applied already, or someone else is applying: their loop takes our wish too unless they die.
      const current = await this.pairs.findOne({ _id: id });
      if (!current || current.applied >= version) return current!;
      await backoff.wait();
    }
  }

  /**
   * Applies the newest wish, and any that arrive meanwhile, then gives the lease back. `ownChange`:
   * the changes on `start` are the ones this request's wish recorded, not ones a dead request left.
   */
  private async applyUnderLease(start: FollowPairDocument, owner: string, effects: FollowEffects, ownChange: boolean): Promise<Omit<PairResult, 'changed' | 'requested'>> {
    let pair = start;
    const held = { _id: pair._id, 'lease.owner': owner };
    for (;;) {
      const { want, v } = pair;
      let result: Omit<PairResult, 'changed' | 'requested'> = { pair, followee: null, counts: [] };
      let outcome: Outcome = { membership: 'unchanged', prune: null, announced: [], removalOwed: false };
      if ((pair.countChange || pair.gc) && !ownChange) {
        // Changes begun by a request that died (a later round finds none: the round before it
        // removed them), finished the careful way, one step at a time, each recording its tokens.
        // Its announcement died with it: the write that records the round announces it.
        const unfinished = pair.countChange !== undefined || pair.counted !== want;
        if (unfinished) outcome = { ...outcome, announced: [followChange(want, pair.f, pair.t)] };
        await this.writeEdges(pair.f, pair.t, want);
        pair = await this.settleCounts(pair, held, want);
        pair = await this.settleGroup(pair, held, want, effects);
        // The timeline too, at once: a dead request's unfollow, or a follow back over entries an unfollow left.
        if (!want || pair.ro) await effects.removeUnfollowed?.([{ followerId: pair.f, followeeId: pair.t }]);
        if (want) await effects.followed(pair.f, pair.t);
        result = { ...result, pair };
      } else {
        ({ outcome, ...result } = await this.applyWish(pair, held, want, effects));
        pair = result.pair;
      }
      let finished: FollowPairDocument | null = null;
      await effects.announcer.publishWithin(outcome.announced, async (carried) => {
        const applied = appliedUpdate(v, want, outcome, carried);
        finished = await this.pairs.findOneAndUpdate({ ...held, v }, { ...applied, $set: { ...applied.$set, lease: null, dirty: false } }, { returnDocument: 'after' });
        // A newer wish arrived meanwhile: this round is recorded, and the loop applies that one too, still holding the lease.
        if (!finished) pair = await this.update(held, applied);
      });
      if (finished) return { ...result, pair: finished };
      ownChange = true;
    }
  }

  /**
   * The common case, with no change left over by a dead request: the count change (the one the
   * wish's own write recorded, or one recorded here) is applied to both users beside both edges
   * and the group change (each write is idempotent, and the token guards the counts and the group
   * on a replay), then the timeline work. The caller's finishing write records the outcome.
   */
  private async applyWish(
    start: FollowPairDocument,
    held: Record<string, unknown>,
    want: boolean,
    effects: FollowEffects,
  ): Promise<Omit<PairResult, 'changed' | 'requested'> & { outcome: Outcome }> {
    let pair = start;
    const delta = want ? 1 : -1;
    const countsChange = pair.counted !== want;
    // In for a new follow that tells the followee (its recorded change names a group), out for an unfollow.
    const groupChange = want ? !pair.g && !pair.counted : pair.g !== undefined;
    if ((countsChange || groupChange) && (pair.countChange?.delta !== delta || pair.gc?.t !== pair.countChange.token)) {
      // A later round of the loop: this wish recorded nothing of its own yet.
      const token = new ObjectId().toHexString();
      const group = want && effects.group ? await effects.group.groupOf(pair.f, pair.t) : null;
      const gc = groupChangeOf(token, want, group, effects.group?.now() ?? new Date());
      pair = await this.update(held, { $set: { countChange: { token, delta, applied: false }, gc } });
    }
    const token = pair.countChange?.token;
    const joining = groupChange && want && pair.gc?.to ? pair.gc : null;
    const leaving = groupChange && !want ? pair.g! : null;
    const [follower, followee, notified] = await Promise.all([
      countsChange
        ? this.users.findOneAndUpdate(
            { _id: pair.f, pendingCounts: { $ne: token } },
            { $inc: { followingCount: delta, countVersion: 1, followingVersion: 1 }, $push: { pendingCounts: token! } },
            { returnDocument: 'after', projection: { followerCount: 1, followingCount: 1, countVersion: 1, followingVersion: 1 } },
          )
        : null,
      countsChange
        ? this.users.findOneAndUpdate(
            { _id: pair.t, pendingCounts: { $ne: token } },
            { $inc: { followerCount: delta, countVersion: 1 }, $push: { pendingCounts: token! } },
            { returnDocument: 'after', projection: { passwordHash: 0, pendingCounts: 0 } },
          )
        : null,
      joining && effects.group ? effects.group.join({ group: joining.to!, token: joining.t, at: joining.at }, pair.f, pair.t) : null,
      leaving && effects.group ? effects.group.leave({ group: leaving, token: pair.gc!.t }, pair.f, pair.t, this).then(() => null) : null,
      // At rest the edges exist exactly when the pair is counted: a wish that changes no count changes no edge.
      countsChange ? this.writeEdges(pair.f, pair.t, want) : null,
    ]);
    if (want) {
      // A follow back before the sweep took the last unfollow's entries out takes them out first
      // (a post deleted meanwhile left its entry there), so the backfill starts as a follow's does.
      if (pair.ro) await effects.removeUnfollowed?.([{ followerId: pair.f, followeeId: pair.t }]);
      await effects.followed(pair.f, pair.t);
    }
    const counts = [follower, followee].filter((user) => user !== null).map(toUserCounts);
    const touched = countsChange || joining !== null || leaving !== null;
    const outcome: Outcome = {
      membership: joining ? { g: joining.to!, ga: joining.at } : leaving ? 'left' : 'unchanged',
      prune: touched ? { t: token!, ...(joining ? { g: joining.to! } : leaving ? { g: leaving, left: true as const } : {}) } : null,
      announced: countsChange ? [followChange(want, pair.f, pair.t, counts), ...(notified ? [notificationAdded(notified)] : [])] : [],
      // The unfollowed followee's entries are left for the sweep, which takes a second's out in one write.
      removalOwed: !want && effects.removeUnfollowed !== undefined && (countsChange || pair.ro === true),
    };
    return { pair, followee, counts, outcome };
  }

  private async writeEdges(followerId: string, followeeId: string, exists: boolean): Promise<void> {
    const edges: [Collection<EdgeDocument>, string, string][] = [
      [this.following, followerId, followeeId],
      [this.followers, followeeId, followerId],
    ];
    await Promise.all(
      edges.map(async ([collection, from, to]) => {
        if (!exists) return collection.deleteOne({ _f: from, _t: to });
        try {
          return await collection.updateOne({ _f: from, _t: to }, { $setOnInsert: { _f: from, _t: to } }, { upsert: true });
        } catch (error) {
          if (!isDuplicateKeyError(error)) throw error;
        }
      }),
    );
  }

  /**
   * Makes both counts include the pair exactly when `want` says so. An unfinished change found on
   * the pair (its request died) is finished first; the token guard skips users it already counted.
   * A change recorded with a wish that turned out not to need it (the pair's `counted` already
   * went its way) is dropped unapplied.
   */
  private async settleCounts(start: FollowPairDocument, held: Record<string, unknown>, want: boolean): Promise<FollowPairDocument> {
    let pair = start;
    if (!pair.countChange && pair.counted !== want) {
      const countChange = { token: new ObjectId().toHexString(), delta: want ? 1 : -1, applied: false } as const;
      pair = await this.update(held, { $set: { countChange } });
    }
    const change = pair.countChange;
    if (!change) return pair;
    if (!change.applied && pair.counted !== (change.delta === 1)) {
      const { token, delta } = change;
      await Promise.all([
        this.users.updateOne({ _id: pair.f, pendingCounts: { $ne: token } }, { $inc: { followingCount: delta, countVersion: 1, followingVersion: 1 }, $push: { pendingCounts: token } }),
        this.users.updateOne({ _id: pair.t, pendingCounts: { $ne: token } }, { $inc: { followerCount: delta, countVersion: 1 }, $push: { pendingCounts: token } }),
      ]);
      pair = await this.update(held, { $set: { counted: delta === 1, 'countChange.applied': true } });
    }
    // Its token may sit on either user (applied before a crash, or just now): the sweep prunes it.
    pair = await this.update(held, { $set: { tp: true }, $unset: { countChange: '' }, $push: { prune: { t: change.token } } });
    // The unfinished change may have gone the other way than the newest wish.
    return pair.counted === want ? pair : this.settleCounts(pair, held, want);
  }

  /**
   * The group's counterpart of `settleCounts`: a group change a dead request recorded is finished
   * (a join only while the pair is in no group and still wanted, or already applied; a leave
   * always), then an unfollow leaves a group the pair is still in.
   */
  private async settleGroup(start: FollowPairDocument, held: Record<string, unknown>, want: boolean, effects: FollowEffects): Promise<FollowPairDocument> {
    let pair = start;
    const group = effects.group;
    const change = pair.gc;
    if (change && group) {
      const joins = change.to !== null && !pair.g && (want || (await group.applied(change.to, pair.t, change.t)));
      const leaves = change.to === null && pair.g !== undefined;
      if (joins) {
        await group.join({ group: change.to!, token: change.t, at: change.at }, pair.f, pair.t);
        pair = await this.update(held, { $set: { g: change.to!, ga: change.at, tp: true }, $unset: { gc: '' }, $push: { prune: { t: change.t, g: change.to! } } });
      } else if (leaves) {
        await group.leave({ group: pair.g!, token: change.t }, pair.f, pair.t, this);
        pair = await this.update(held, { $set: { tp: true }, $unset: { g: '', ga: '', gc: '' }, $push: { prune: { t: change.t, g: pair.g!, left: true } } });
      } else {
        pair = await this.update(held, { $unset: { gc: '' } });
      }
    }
    if (!want && pair.g && group) {
      pair = await this.update(held, { $set: { gc: { t: new ObjectId().toHexString(), to: null, at: new Date() } } });
      return this.settleGroup(pair, held, want, effects);
    }
    return pair;
  }

  /** An update that must still hold the lease; losing it means another holder took over. */
  private async update(held: Record<string, unknown>, update: Record<string, unknown>): Promise<FollowPairDocument> {
    const pair = await this.pairs.findOneAndUpdate(held, update, { returnDocument: 'after' });
    if (!pair) throw new Error(`lost the lease on follow pair "${String(held._id)}"`);
    return pair;
  }
}

const asMember = (pair: Pick<FollowPairDocument, 'f' | 'g' | 'ga' | 'gc'>): GroupMember => ({ u: pair.f, g: pair.g, ga: pair.ga, gc: pair.gc });

/**
 * What applying a wish did to the pair's group, the token it left on the users and the group, and
 * what the write recording it announces: the follow or unfollow it made, with the group it joined.
 */
interface Outcome {
  membership: { g: string; ga: Date } | 'left' | 'unchanged';
  prune: TokenToPrune | null;
  announced: ChangeEvent[];
  /** The follower's timeline still holds the unfollowed followee's entries (`ro`). */
  removalOwed: boolean;
}

/** The write that records a wish as applied: the version, the counts, the group, the tokens to prune, the announcement. */
function appliedUpdate(version: number, want: boolean, { membership, prune, removalOwed }: Outcome, carried: CarriedEvents | undefined) {
  return {
    $set: {
      applied: version,
      counted: want,
      updatedAt: new Date(),
      ...(typeof membership === 'object' ? membership : {}),
      ...(prune || removalOwed ? { tp: true as const } : {}),
      ...(removalOwed ? { ro: true as const } : {}),
      ...(carried ? { [carriedEventsField]: carried } : {}),
    },
    $unset: {
      countChange: '' as const,
      gc: '' as const,
      ...(membership === 'left' ? { g: '' as const, ga: '' as const } : {}),
      ...(removalOwed ? {} : { ro: '' as const }),
    },
    ...(prune ? { $push: { prune } } : {}),
  };
}
