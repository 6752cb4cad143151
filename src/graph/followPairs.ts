import { ObjectId, type Collection, type Db } from 'mongodb';
import { isDuplicateKeyError } from '../errors.js';
import { toUserCounts, type EdgeDocument, type UserCounts, type UserDocument } from '../records/users.js';
import { Backoff, findStalled, finishEach, stalledSince } from '../db/stalledWork.js';

/**
 * The state of one (follower, followee) pair: what was last asked for (`want`, versioned by `v`)
 * and which version the edges, counts and timeline reflect (`applied`). Follow and unfollow
 * requests only record their wish here; the one holder of the pair's lease then brings everything
 * else in line with the latest wish, so racing requests of a pair never interleave their writes.
 */
export interface FollowPairDocument {
  /** `<follower> <followee>`: handles contain no space. */
  _id: string;
  f: string;
  t: string;
  want: boolean;
  v: number;
  applied: number;
  /**
   * Whether both users' counts include this pair. Null for a pair written before pairs existed,
   * when an edge and its counts were always written together: the edge tells.
   */
  counted: boolean | null;
  /** A count change under way: its token sits in each user's `pendingCounts` until it is finished. */
  countChange?: { token: string; delta: 1 | -1; applied: boolean };
  lease: { owner: string; until: Date } | null;
  /** True while `applied < v`: a repair sweep finds pairs whose request died. */
  dirty: boolean;
  updatedAt: Date;
}

/** Timeline work that belongs to a follow or unfollow; runs under the pair's lease. */
export interface FollowEffects {
  /** After the edges are written: a backfill must see the edge a concurrent post's fanout missed. */
  followed(followerId: string, followeeId: string): Promise<void>;
  unfollowed(followerId: string, followeeId: string): Promise<void>;
  /**
   * Work that needs only the recorded wish, not the edges (a notification task, which checks the
   * pair's wish when it runs): sent beside the edge and count writes, saving the request a round trip.
   */
  besideEdges?(followerId: string, followeeId: string, want: boolean): Promise<void>;
}

/** Long enough for a reconcile's dozen writes; a crashed holder delays its pair this long. */
const pairLeaseMs = 10_000;
/** A dirty pair untouched this long has lost its request; the sweep finishes it. */
const stalledAfterMs = 2_000;

const pairId = (followerId: string, followeeId: string) => `${followerId} ${followeeId}`;

/**
 * Follows and unfollows, exact under any interleaving and any crash.
 *
 * - Serialised per pair: every request bumps the pair's version, then whoever holds the pair's
 *   lease applies the newest wish until nothing newer is left; the others wait for their version.
 * - Counts change exactly once per transition without transactions: the pair first records the
 *   change and a token, each user's `$inc` is guarded by `pendingCounts: { $ne: token }` and adds
 *   the token in the same write, so a replay after a crash skips the users already counted; the
 *   tokens are removed only after the pair says the change is complete.
 * - A request that dies leaves its pair dirty; the next request for the pair, or the repair sweep
 *   the fanout workers run, finishes it once the lease has run out.
 */
export class FollowPairs {
  readonly pairs: Collection<FollowPairDocument>;

  constructor(
    db: Db,
    private readonly users: Collection<UserDocument>,
    private readonly following: Collection<EdgeDocument>,
    private readonly followers: Collection<EdgeDocument>,
  ) {
    this.pairs = db.collection<FollowPairDocument>('follow_pairs');
  }

  async ensureIndexes(): Promise<void> {
    await this.pairs.createIndexes([
      { key: { dirty: 1, updatedAt: 1 }, name: 'dirty_since' },
      // Every pair of a deleted account, either side.
      { key: { f: 1 }, name: 'follower' },
      { key: { t: 1 }, name: 'followee' },
    ]);
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
  async set(
    followerId: string,
    followeeId: string,
    want: boolean,
    effects: FollowEffects,
    checks: Promise<unknown> = Promise.resolve(),
  ): Promise<{ pair: FollowPairDocument; changed: boolean; followee: UserDocument | null; counts: UserCounts[] }> {
    const id = pairId(followerId, followeeId);
    const owner = new ObjectId().toHexString();
    // A pair seen for the first time may have an edge from before pairs existed: asked beside the
    // checks, the answer is stored with a new pair in the wish's own write.
    const [edgeBeforePairs] = await Promise.all([want ? this.edgeExists(followerId, followeeId) : null, checks]);
    // Recorded with the lease, before it is known to be needed: applied only while the pair's
    // `counted` differs from its direction, so one that turns out needless is simply dropped.
    const countChange = { token: new ObjectId().toHexString(), delta: want ? 1 : -1, applied: false } as const;
    const claim = await this.recordWishAndLease(followerId, followeeId, want, owner, edgeBeforePairs, countChange);
    const changed = (claim.before?.want ?? false) !== want;
    const version = (claim.before?.v ?? 0) + 1;
    if (!claim.leased) return { pair: await this.applyUpTo(id, version, effects), changed, followee: null, counts: [] };
    const leased: FollowPairDocument = {
      ...(claim.before ?? { _id: id, f: followerId, t: followeeId, applied: 0, counted: edgeBeforePairs }),
      want,
      v: version,
      dirty: true,
      countChange,
      lease: { owner, until: claim.leaseUntil },
      updatedAt: claim.leaseUntil,
    };
    const applied = await this.applyUnderLease(leased, owner, effects, true);
    return { ...applied, changed };
  }

  /** Finishes pairs whose request died mid-way. Returns how many it repaired. */
  async repairStalled(effects: FollowEffects, limit = 100): Promise<number> {
    const stalled = await findStalled(this.pairs, { dirty: true, updatedAt: { $lt: stalledSince(stalledAfterMs) } }, { limit, projection: { _id: 1, v: 1 } });
    return finishEach(stalled, (pair) => this.applyUpTo(pair._id, pair.v, effects));
  }

  private async edgeExists(followerId: string, followeeId: string): Promise<boolean> {
    return (await this.following.countDocuments({ _f: followerId, _t: followeeId }, { limit: 1 })) > 0;
  }

  /**
   * One write for the common case: the wish, the pair's lease when nobody holds it, and the count
   * change it may need. When someone holds the lease, or a change a dead request began is still
   * recorded, the filter misses, the upsert collides with the pair's `_id`, and the wish is recorded
   * alone for the holder, or the careful path, to apply.
   */
  private async recordWishAndLease(
    followerId: string,
    followeeId: string,
    want: boolean,
    owner: string,
    edgeBeforePairs: boolean | null,
    countChange: NonNullable<FollowPairDocument['countChange']>,
  ): Promise<{ before: FollowPairDocument | null; leased: boolean; leaseUntil: Date }> {
    const now = new Date();
    const leaseUntil = new Date(now.getTime() + pairLeaseMs);
    try {
      const before = await this.pairs.findOneAndUpdate(
        { _id: pairId(followerId, followeeId), $or: [{ lease: null }, { 'lease.until': { $lt: now } }], countChange: { $exists: false } },
        {
          $set: { want, dirty: true, updatedAt: now, lease: { owner, until: leaseUntil }, countChange },
          $inc: { v: 1 },
          $setOnInsert: { f: followerId, t: followeeId, applied: 0, counted: edgeBeforePairs },
        },
        { upsert: true, returnDocument: 'before' },
      );
      return { before, leased: true, leaseUntil };
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
      return { before: await this.recordWish(followerId, followeeId, want), leased: false, leaseUntil };
    }
  }

  /** The pair as it was before this wish (null for a new pair); this wish's version is one more. */
  private async recordWish(followerId: string, followeeId: string, want: boolean): Promise<FollowPairDocument | null> {
    const _id = pairId(followerId, followeeId);
    for (let attempt = 0; ; attempt++) {
      try {
        const pair = await this.pairs.findOneAndUpdate(
          { _id },
          {
            $set: { want, dirty: true, updatedAt: new Date() },
            $inc: { v: 1 },
            $setOnInsert: { f: followerId, t: followeeId, applied: 0, counted: null, lease: null },
          },
          { upsert: true, returnDocument: 'before' },
        );
        return pair;
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
   * Applies the newest wish, and any that arrive meanwhile, then gives the lease back. `start.counted`
   * may be null (a pair from before pairs existed): it is then read from the edge and stored before
   * any edge is written. `ownChange`: the count change on `start` is the one this request's wish
   * recorded, not one a dead request left.
   */
  private async applyUnderLease(
    start: FollowPairDocument,
    owner: string,
    effects: FollowEffects,
    ownChange: boolean,
  ): Promise<{ pair: FollowPairDocument; followee: UserDocument | null; counts: UserCounts[] }> {
    let pair = start;
    const held = { _id: pair._id, 'lease.owner': owner };
    let followee: UserDocument | null = null;
    let counts: UserCounts[] = [];
    for (;;) {
      const { want, v } = pair;
      let token: string | null = null;
      // Stored before any edge is written, so a replay reads what the edge was, not what this wrote.
      if (pair.counted === null) pair = await this.update(held, { $set: { counted: await this.edgeExists(pair.f, pair.t) } });
      if (pair.countChange && !ownChange) {
        // A change begun by a request that died (a later round finds none: the round before it
        // removed it), finished the careful way, one step at a time.
        await Promise.all([this.writeEdges(pair.f, pair.t, want), effects.besideEdges?.(pair.f, pair.t, want)]);
        pair = await this.settleCounts(pair, held, want);
        await (want ? effects.followed(pair.f, pair.t) : effects.unfollowed(pair.f, pair.t));
      } else {
        ({ pair, followee, counts, token } = await this.applyWish(pair, held, want, effects));
      }
      const finished = await this.pairs.findOneAndUpdate(
        { ...held, v },
        { $set: { applied: v, counted: want, dirty: false, lease: null, updatedAt: new Date() }, $unset: { countChange: '' } },
        { returnDocument: 'after' },
      );
      // Only once the pair says the change is complete may its tokens go; one left behind by a
      // crash guards nothing, since every change has a token of its own.
      const forgetToken = () => (token ? this.users.updateMany({ _id: { $in: [start.f, start.t] } }, { $pull: { pendingCounts: token } }) : null);
      if (finished) {
        await forgetToken();
        return { pair: finished, followee, counts };
      }
      // A newer wish arrived meanwhile: apply it too, still holding the lease.
      pair = await this.update(held, { $set: { applied: v, counted: want }, $unset: { countChange: '' } });
      await forgetToken();
      followee = null;
      counts = [];
    }
  }

  /**
   * The common case, with no change left over by a dead request: the count change (the one the
   * wish's own write recorded, or one recorded here) is applied to both users beside both edges
   * (each write is idempotent, and the token guards the counts on a replay), then the timeline
   * work. The caller's finishing write records the result. Returns the token the users now hold.
   */
  private async applyWish(
    start: FollowPairDocument,
    held: Record<string, unknown>,
    want: boolean,
    effects: FollowEffects,
  ): Promise<{ pair: FollowPairDocument; followee: UserDocument | null; counts: UserCounts[]; token: string | null }> {
    let pair = start;
    let followee: UserDocument | null = null;
    let follower: Pick<UserDocument, '_id' | 'followerCount' | 'followingCount' | 'countVersion'> | null = null;
    let token: string | null = null;
    if (pair.counted === want) {
      // The counts already include the pair exactly when `want` says; the finishing write drops
      // the recorded change, and a replay finds it needless too.
      await Promise.all([this.writeEdges(pair.f, pair.t, want), effects.besideEdges?.(pair.f, pair.t, want)]);
    } else {
      let change = pair.countChange;
      if (change?.delta !== (want ? 1 : -1)) {
        change = { token: new ObjectId().toHexString(), delta: want ? 1 : -1, applied: false };
        pair = await this.update(held, { $set: { countChange: change } });
      }
      const { delta } = change;
      token = change.token;
      [follower, followee] = await Promise.all([
        this.users.findOneAndUpdate(
          { _id: pair.f, pendingCounts: { $ne: token } },
          { $inc: { followingCount: delta, countVersion: 1 }, $push: { pendingCounts: token } },
          { returnDocument: 'after', projection: { followerCount: 1, followingCount: 1, countVersion: 1 } },
        ),
        this.users.findOneAndUpdate(
          { _id: pair.t, pendingCounts: { $ne: token } },
          { $inc: { followerCount: delta, countVersion: 1 }, $push: { pendingCounts: token } },
          { returnDocument: 'after', projection: { passwordHash: 0, pendingCounts: 0 } },
        ),
        this.writeEdges(pair.f, pair.t, want),
        effects.besideEdges?.(pair.f, pair.t, want),
      ]);
    }
    await (want ? effects.followed(pair.f, pair.t) : effects.unfollowed(pair.f, pair.t));
    const counts = [follower, followee].filter((user) => user !== null).map(toUserCounts);
    return { pair, followee, counts, token };
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
  private async settleCounts(
    start: FollowPairDocument,
    held: Record<string, unknown>,
    want: boolean,
  ): Promise<FollowPairDocument> {
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
        this.users.updateOne({ _id: pair.f, pendingCounts: { $ne: token } }, { $inc: { followingCount: delta, countVersion: 1 }, $push: { pendingCounts: token } }),
        this.users.updateOne({ _id: pair.t, pendingCounts: { $ne: token } }, { $inc: { followerCount: delta, countVersion: 1 }, $push: { pendingCounts: token } }),
      ]);
      pair = await this.update(held, { $set: { counted: delta === 1, 'countChange.applied': true } });
    }
    await this.users.updateMany({ _id: { $in: [pair.f, pair.t] } }, { $pull: { pendingCounts: change.token } });
    pair = await this.update(held, { $unset: { countChange: '' } });
    // The unfinished change may have gone the other way than the newest wish.
    return pair.counted === want ? pair : this.settleCounts(pair, held, want);
  }

  /** An update that must still hold the lease; losing it means another holder took over. */
  private async update(held: Record<string, unknown>, update: Record<string, unknown>): Promise<FollowPairDocument> {
    const pair = await this.pairs.findOneAndUpdate(held, update, { returnDocument: 'after' });
    if (!pair) throw new Error(`lost the lease on follow pair "${String(held._id)}"`);
    return pair;
  }
}
