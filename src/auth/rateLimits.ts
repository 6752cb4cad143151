import { LRUCache } from 'lru-cache';
import type { Db } from 'mongodb';
import { RateLimiterMongo, RateLimiterRes } from 'rate-limiter-flexible';
import type { RateLimitOptions } from '../config.js';
import { AppError } from '../errors.js';
import { noteRateLimit, type RateLimitState, type Scope } from '../observability/requestScope.js';
import { plannedIndexes } from '../db/shardPlan.js';

const collectionName = 'rate_limits';
const hour = 3600;

/** Consecutive failed log-ins allowed before back-off starts. */
export const freeLoginFailures = 5;
/** The back-off doubles from this with each further failure, up to an hour. */
const firstBackoffSeconds = 2;
/** A leased limit takes up to this share of its points at once: 3 of 60 posts, 6 of 120 follows a minute. */
const leaseShare = 1 / 20;
/** Points one lease takes at most, whatever the limit: what another instance may be left without. */
const maxLease = 10;
/** Accounts whose leases one process holds at most; the least recently used is dropped first. */
const heldLeases = 50_000;

/**
 * Rate limits kept in MongoDB (rate-limiter-flexible's RateLimiterMongo), so every instance counts
 * against the same numbers. Log-in failures are counted per handle and per client address: after
 * `freeLoginFailures` in a row for a handle, each further attempt must wait twice as long as the
 * last (2 s, 4 s, … up to an hour), and a success starts over.
 */
export class RateLimits {
  private readonly loginFailuresByHandle: RateLimiterMongo;
  private readonly loginFailuresByAddress: RateLimiterMongo;
  private readonly signUpsByAddress: RateLimiterMongo;
  private readonly postsByAccount: LeasedLimit;
  private readonly followsByAccount: LeasedLimit;
  private readonly uploadsByAccount: RateLimiterMongo;
  private readonly reportsByAccount: RateLimiterMongo;
  private readonly db: Db;

  constructor(db: Db, options: RateLimitOptions) {
    this.db = db;
    const limiter = (keyPrefix: string, points: number, duration: number) =>
      new RateLimiterMongo({ storeClient: db, tableName: collectionName, keyPrefix, points, duration, disableIndexesCreation: true });
    this.loginFailuresByHandle = limiter('login-handle', 10_000, 24 * hour);
    this.loginFailuresByAddress = limiter('login-address', options.loginFailuresPerAddressPerHour, hour);
    this.signUpsByAddress = limiter('signup-address', options.signUpsPerAddressPerHour, hour);
    // Every post and follow passes one of these: their points are leased, not counted one round trip at a time.
    this.postsByAccount = new LeasedLimit(limiter('post-account', options.postsPerAccountPerMinute, 60));
    this.followsByAccount = new LeasedLimit(limiter('follow-account', options.followsPerAccountPerMinute, 60));
    this.uploadsByAccount = limiter('upload-account', options.uploadsPerAccountPerHour, hour);
    this.reportsByAccount = limiter('report-account', options.reportsPerAccountPerHour, hour);
  }

  /** The limiter's own indexes: its documents expire by TTL, and keys are unique. */
  async ensureIndexes(): Promise<void> {
    const limits = this.db.collection(collectionName);
    await plannedIndexes(limits, [
      { key: { expire: -1 }, name: 'expire_ttl', expireAfterSeconds: 0 },
      { key: { key: 1 }, name: 'key_unique', unique: true },
    ]);
  }

  /** Refuses a log-in attempt while the handle or the address is backing off. */
  async assertLoginAllowed(handle: string, address: string, scope: Scope): Promise<void> {
    const [byHandle, byAddress] = await Promise.all([
      this.loginFailuresByHandle.get(handle),
      this.loginFailuresByAddress.get(address),
    ]);
    // The address's failures are the limit a client sees in the RateLimit-* headers of its log-ins.
    const addressState = byAddress ? stateOf(this.loginFailuresByAddress, byAddress) : { limit: this.loginFailuresByAddress.points, remaining: this.loginFailuresByAddress.points, resetSeconds: hour };
    noteRateLimit(scope, addressState);
    if (byHandle && byHandle.consumedPoints >= freeLoginFailures) {
      const backoffMs = backoffSeconds(byHandle.consumedPoints) * 1000;
      // The failure counter's expiry moves with every failure, so it dates the last one.
      const lastFailureAt = Date.now() + byHandle.msBeforeNext - 24 * hour * 1000;
      const waitMs = lastFailureAt + backoffMs - Date.now();
      if (waitMs > 0) {
        // The handle's free failures are used up until the wait is over.
        const handleState = { limit: freeLoginFailures, remaining: 0, resetSeconds: Math.ceil(waitMs / 1000) };
        noteRateLimit(scope, handleState);
        throw rateLimited('Too many failed log-ins for this handle; wait before trying again', waitMs, handleState);
      }
    }
    if (byAddress && byAddress.remainingPoints <= 0) {
      throw rateLimited('Too many failed log-ins from this address; wait before trying again', byAddress.msBeforeNext, addressState);
    }
  }

  async loginFailed(handle: string, address: string, scope: Scope): Promise<void> {
    const [, byAddress] = await Promise.all([
      // Each failure renews the day-long window, so the count is of failures in a row.
      this.loginFailuresByHandle.penalty(handle, 1).then((result) => this.loginFailuresByHandle.set(handle, result.consumedPoints, 24 * hour)),
      this.loginFailuresByAddress.penalty(address, 1),
    ]);
    noteRateLimit(scope, stateOf(this.loginFailuresByAddress, byAddress));
  }

  async loginSucceeded(handle: string): Promise<void> {
    await this.loginFailuresByHandle.delete(handle);
  }

  signUp(address: string, scope: Scope): Promise<void> {
    return consume(this.signUpsByAddress, address, 'Too many sign-ups from this address; wait before trying again', scope);
  }

  post(accountId: string, scope: Scope): Promise<void> {
    return this.postsByAccount.consume(accountId, 'Too many posts; wait before posting again', scope);
  }

  report(accountId: string, scope: Scope): Promise<void> {
    return consume(this.reportsByAccount, accountId, 'Too many reports; wait before reporting again', scope);
  }

  follow(accountId: string, scope: Scope): Promise<void> {
    return this.followsByAccount.consume(accountId, 'Too many follows and unfollows; wait before trying again', scope);
  }

  /**
   * Counts an upload as it starts, so uploads running at once cannot all pass a limit that only
   * one more fits; `refund` takes it back when the upload is refused (refused uploads count against nothing).
   */
  async upload(accountId: string, scope: Scope): Promise<{ refund: () => Promise<void> }> {
    await consume(this.uploadsByAccount, accountId, 'Too many uploads; wait before uploading again', scope);
    return { refund: () => this.uploadsByAccount.reward(accountId, 1).then(() => undefined) };
  }
}

/** Points of one account's window this process has taken from the shared count and not spent yet. */
interface Lease {
  unspent: number;
  /** What the shared count had left when the lease was taken: later leases shrink as it runs low. */
  sharedRemaining: number;
  /** When the shared window ends, and the lease with it. */
  endsAt: number;
}

/**
 * A limit counted in MongoDB whose points this process takes a few at a time: an account's next
 * writes in the window spend them in memory, with no round trip. The shared count holds every point
 * any instance took, so no account ever gets more than the limit on any number of instances; an
 * account whose writes in one window go to several instances may be refused while another instance
 * still holds points it leased. Leases shrink to one point as the window's points run low, so
 * that loss is a few points at most, and none on one instance.
 */
class LeasedLimit {
  private readonly leases = new LRUCache<string, Lease>({ max: heldLeases });
  /** Leases being taken, by account. */
  private readonly leasing = new Map<string, Promise<void>>();
  private readonly leaseSize: number;

  constructor(private readonly limiter: RateLimiterMongo) {
    this.leaseSize = Math.min(maxLease, Math.max(1, Math.floor(limiter.points * leaseShare)));
  }

  async consume(key: string, message: string, scope: Scope): Promise<void> {
    for (;;) {
      const now = Date.now();
      const held = this.heldLease(key, now);
      if (held && held.unspent > 0) {
        held.unspent -= 1;
        noteRateLimit(scope, this.stateOf(held, now));
        return;
      }
      // Requests of one account at once take one lease between them, then spend it; one that
      // finds it spent takes the next (and is refused by the shared count itself when none is left).
      const leasing = this.leasing.get(key);
      if (leasing) await leasing.catch(() => {});
      else await this.takeLease(key, held, message, scope);
    }
  }

  /** Points from the shared count, as many as the window can spare; refuses when it has none left. */
  private takeLease(key: string, held: Lease | undefined, message: string, scope: Scope): Promise<void> {
    const leasing = (async () => {
      const now = Date.now();
      const wanted = held ? Math.min(this.leaseSize, Math.max(1, Math.floor(held.sharedRemaining / this.leaseSize))) : this.leaseSize;
      let taken: RateLimiterRes;
      let granted = wanted;
      try {
        taken = await this.limiter.consume(key, wanted);
      } catch (refusal) {
        if (!(refusal instanceof RateLimiterRes)) throw refusal;
        // The shared count took all `wanted` points; those it had left before are this lease's.
        taken = refusal;
        granted = Math.max(0, Math.min(wanted, this.limiter.points - (refusal.consumedPoints - wanted)));
        if (granted === 0) refuse(this.limiter, refusal, message, scope);
      }
      this.leases.set(key, { unspent: granted, sharedRemaining: Math.max(0, taken.remainingPoints), endsAt: now + taken.msBeforeNext });
    })();
    this.leasing.set(key, leasing);
    return leasing.finally(() => this.leasing.delete(key));
  }

  private heldLease(key: string, now: number): Lease | undefined {
    const lease = this.leases.get(key);
    return lease && lease.endsAt > now ? lease : undefined;
  }

  /** What the headers say: the shared count's points left, and those this process holds. */
  private stateOf(lease: Lease, now: number): RateLimitState {
    return { limit: this.limiter.points, remaining: lease.sharedRemaining + lease.unspent, resetSeconds: Math.max(0, Math.ceil((lease.endsAt - now) / 1000)) };
  }
}

function backoffSeconds(failures: number): number {
  return Math.min(firstBackoffSeconds * 2 ** (failures - freeLoginFailures), hour);
}

async function consume(limiter: RateLimiterMongo, key: string, message: string, scope: Scope): Promise<void> {
  try {
    noteRateLimit(scope, stateOf(limiter, await limiter.consume(key)));
  } catch (refusal) {
    if (!(refusal instanceof RateLimiterRes)) throw refusal;
    refuse(limiter, refusal, message, scope);
  }
}

/** A request the shared count refused: its state noted for the headers, and the error it answers. */
function refuse(limiter: RateLimiterMongo, refusal: RateLimiterRes, message: string, scope: Scope): never {
  const state = stateOf(limiter, refusal);
  noteRateLimit(scope, state);
  throw rateLimited(message, refusal.msBeforeNext, state);
}

/** What the RateLimit-* headers say of a limiter after `result`. */
function stateOf(limiter: RateLimiterMongo, result: RateLimiterRes): RateLimitState {
  return { limit: limiter.points, remaining: Math.max(0, result.remainingPoints), resetSeconds: Math.max(0, Math.ceil(result.msBeforeNext / 1000)) };
}

/** The RateLimit-Limit, -Remaining and -Reset headers (the IETF draft's names) of a limit's state. */
export function rateLimitHeaders(state: RateLimitState): [string, string][] {
  return [
    ['ratelimit-limit', String(state.limit)],
    ['ratelimit-remaining', String(state.remaining)],
    ['ratelimit-reset', String(state.resetSeconds)],
  ];
}

function rateLimited(message: string, waitMs: number, state?: RateLimitState): AppError {
  const retryAfterSeconds = Math.max(1, Math.ceil(waitMs / 1000));
  const headers = new Map([['retry-after', String(retryAfterSeconds)], ...(state ? rateLimitHeaders(state) : [])]);
  return new AppError('RATE_LIMITED', message, { retryAfterSeconds, http: { status: 429, headers } });
}
