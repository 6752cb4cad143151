import type { Db } from 'mongodb';
import { RateLimiterMongo, RateLimiterRes } from 'rate-limiter-flexible';
import type { RateLimitOptions } from '../config.js';
import { AppError } from '../errors.js';
import { noteRateLimit, type RateLimitState } from '../observability/requestScope.js';
import { plannedIndexes } from '../db/shardPlan.js';

const collectionName = 'rate_limits';
const hour = 3600;

/** Consecutive failed log-ins allowed before back-off starts. */
export const freeLoginFailures = 5;
/** The back-off doubles from this with each further failure, up to an hour. */
const firstBackoffSeconds = 2;

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
  private readonly postsByAccount: RateLimiterMongo;
  private readonly followsByAccount: RateLimiterMongo;
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
    this.postsByAccount = limiter('post-account', options.postsPerAccountPerMinute, 60);
    this.followsByAccount = limiter('follow-account', options.followsPerAccountPerMinute, 60);
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
  async assertLoginAllowed(handle: string, address: string): Promise<void> {
    const [byHandle, byAddress] = await Promise.all([
      this.loginFailuresByHandle.get(handle),
      this.loginFailuresByAddress.get(address),
    ]);
    // The address's failures are the limit a client sees in the RateLimit-* headers of its log-ins.
    const addressState = byAddress ? stateOf(this.loginFailuresByAddress, byAddress) : { limit: this.loginFailuresByAddress.points, remaining: this.loginFailuresByAddress.points, resetSeconds: hour };
    noteRateLimit(addressState);
    if (byHandle && byHandle.consumedPoints >= freeLoginFailures) {
      const backoffMs = backoffSeconds(byHandle.consumedPoints) * 1000;
      // The failure counter's expiry moves with every failure, so it dates the last one.
      const lastFailureAt = Date.now() + byHandle.msBeforeNext - 24 * hour * 1000;
      const waitMs = lastFailureAt + backoffMs - Date.now();
      if (waitMs > 0) {
        // The handle's free failures are used up until the wait is over.
        const handleState = { limit: freeLoginFailures, remaining: 0, resetSeconds: Math.ceil(waitMs / 1000) };
        noteRateLimit(handleState);
        throw rateLimited('Too many failed log-ins for this handle; wait before trying again', waitMs, handleState);
      }
    }
    if (byAddress && byAddress.remainingPoints <= 0) {
      throw rateLimited('Too many failed log-ins from this address; wait before trying again', byAddress.msBeforeNext, addressState);
    }
  }

  async loginFailed(handle: string, address: string): Promise<void> {
    const [, byAddress] = await Promise.all([
      // Each failure renews the day-long window, so the count is of failures in a row.
      this.loginFailuresByHandle.penalty(handle, 1).then((result) => this.loginFailuresByHandle.set(handle, result.consumedPoints, 24 * hour)),
      this.loginFailuresByAddress.penalty(address, 1),
    ]);
    noteRateLimit(stateOf(this.loginFailuresByAddress, byAddress));
  }

  async loginSucceeded(handle: string): Promise<void> {
    await this.loginFailuresByHandle.delete(handle);
  }

  signUp(address: string): Promise<void> {
    return consume(this.signUpsByAddress, address, 'Too many sign-ups from this address; wait before trying again');
  }

  post(accountId: string): Promise<void> {
    return consume(this.postsByAccount, accountId, 'Too many posts; wait before posting again');
  }

  report(accountId: string): Promise<void> {
    return consume(this.reportsByAccount, accountId, 'Too many reports; wait before reporting again');
  }

  follow(accountId: string): Promise<void> {
    return consume(this.followsByAccount, accountId, 'Too many follows and unfollows; wait before trying again');
  }

  /**
   * Counts an upload as it starts, so uploads running at once cannot all pass a limit that only
   * one more fits; `refund` takes it back when the upload is refused (refused uploads count against nothing).
   */
  async upload(accountId: string): Promise<{ refund: () => Promise<void> }> {
    await consume(this.uploadsByAccount, accountId, 'Too many uploads; wait before uploading again');
    return { refund: () => this.uploadsByAccount.reward(accountId, 1).then(() => undefined) };
  }
}

function backoffSeconds(failures: number): number {
  return Math.min(firstBackoffSeconds * 2 ** (failures - freeLoginFailures), hour);
}

async function consume(limiter: RateLimiterMongo, key: string, message: string): Promise<void> {
  try {
    noteRateLimit(stateOf(limiter, await limiter.consume(key)));
  } catch (refusal) {
    if (!(refusal instanceof RateLimiterRes)) throw refusal;
    const state = stateOf(limiter, refusal);
    noteRateLimit(state);
    throw rateLimited(message, refusal.msBeforeNext, state);
  }
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
