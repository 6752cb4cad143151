/**
 * Users as every layer sees them: the stored user and follow-edge documents, the public record,
 * handle rules, and the mapper between them. Types and pure functions only: no service, no I/O.
 */
import type { ObjectId } from 'mongodb';
import { badInput } from '../errors.js';

export interface UserDocument {
  /**
   * The handle: unique among existing accounts, the key every collection names users by, and a good
   * shard key. It is not permanent: once an account is deleted, a new sign-up may take the handle.
   */
  _id: string;
  /**
   * The account's identity: random, fixed at sign-up, never reused. Tokens name it beside the handle,
   * so a token outlives neither its account nor a later account that takes the same handle.
   */
  accountId: string;
  displayName: string | null;
  /**
   * The display name lowercased, for `searchUsers`' prefix range on the `name_prefix` index; ''
   * without a display name. Absent on users stored before search existed (filled at start).
   */
  nameLower?: string | null;
  bio?: string | null;
  passwordHash: string;
  /**
   * Tokens carry the generation they were issued in; changing the password or logging out
   * everywhere increments it, so every earlier token stops working. Absent means 0.
   */
  tokenGeneration?: number;
  /** The timeline read marker (see TimelineMarkers): `k` orders positions as strings do. */
  timelineMarker?: { k: string; at: Date; id: ObjectId; updatedAt: Date };
  createdAt: Date;
  followerCount: number;
  followingCount: number;
  /**
   * Bumped by every change of the counts (absent means 0): an instance that holds the user applies
   * counts announced with a higher version and ignores older ones, whatever order they arrive in.
   */
  countVersion?: number;
  /**
   * Bumped by every change of whom the user follows (absent means 0), so a timeline built for one
   * set of followees is never taken for the same set after an unfollow and a follow back (see
   * the cache strategy's fingerprint).
   */
  followingVersion?: number;
  /** Tokens of count changes under way (see FollowPairs); empty or absent at rest. */
  pendingCounts?: string[];
  /** Last timeline read, at most `activityGranularity` stale; fanout skips readers inactive too long. */
  readAt?: Date;
  /**
   * Set while this reader's materialized timeline misses posts that fanout skipped while they were
   * inactive: the posts from `from` on are being redelivered, and reads are served from content.
   */
  timelineGap?: { from: Date; since: Date };
  /**
   * Set when the account is being deleted: from then on it is gone for reads, sign-in and tokens;
   * the document itself (and with it the handle) goes once everything else is removed.
   */
  deletedAt?: Date;
  /**
   * Set once the user has stored a post that readers pull (they had more than
   * FANOUT_PULL_THRESHOLD followers): only followees with it cost a page the pulled-posts query.
   */
  pulls?: true;
  /** Set once the user has posted for their followers only: only followees with it widen a reader's inbox query. */
  followersOnly?: true;
  /** Set once a mentioned-only post was addressed to or written by the user: only then is their inbox asked for those. */
  inbox?: true;
  /** Set while the account approves its followers: a follow becomes a request (see FollowPairs). */
  locked?: true;
  /** Granted by the staff command: the account may act on reports (beside those STAFF_HANDLES names). */
  staff?: true;
  /**
   * Set while staff suspend the account (`e` names the suspension): every read of users leaves it
   * out, as it leaves out an account being deleted, and log-in is refused.
   */
  suspended?: { e: string; at: Date };
  /** Tokens of suspended accounts whose follow these counts leave out until they are unsuspended. */
  hidden?: string[];
  /** The tags the user follows, in the order they followed them (at most 100): their public posts join the home timeline at read time. */
  followedTags?: string[];
}

/**
 * One directed edge. In `followers`, `_f` is the followed user and `_t` one of their followers;
 * in `following`, `_f` is the follower and `_t` someone they follow. Both collections are queried
 * by `_f` alone and covered by their `{ _f: 1, _t: 1 }` index.
 */
/** One follow, by its two ends. */
export interface FollowKey {
  followerId: string;
  followeeId: string;
}

export interface EdgeDocument {
  _id?: ObjectId;
  _f: string;
  _t: string;
  /**
   * In `following` only: the ids of the follower's lists that hold `_t` (Socialite's annotated
   * edge). Removing the edge on unfollow removes them from every list in the same write.
   */
  _g?: ObjectId[];
}

export interface UserRecord {
  handle: string;
  /** The account's identity (see UserDocument.accountId); null only for users stored before it existed, until their next token. */
  accountId: string | null;
  displayName: string | null;
  bio: string | null;
  createdAt: Date;
  followerCount: number;
  followingCount: number;
  /** Whether a follow of this account is a request it approves. */
  locked: boolean;
  /** Granted staff by the staff command (STAFF_HANDLES names others: see moderation/staff.ts). */
  staff: boolean;
}

/** A user's counts as one count change left them (see UserDocument.countVersion). */
export interface UserCounts {
  handle: string;
  followerCount: number;
  followingCount: number;
  version: number;
  followingVersion: number;
}

export const toUserCounts = (doc: Pick<UserDocument, '_id' | 'followerCount' | 'followingCount' | 'countVersion' | 'followingVersion'>): UserCounts => ({
  handle: doc._id,
  followerCount: doc.followerCount,
  followingCount: doc.followingCount,
  version: doc.countVersion ?? 0,
  followingVersion: doc.followingVersion ?? 0,
});

/** Of `handles`, those whose counts `counts` does not carry: what a follow leaves to read again. */
export const withoutCounts = (handles: readonly string[], counts: readonly UserCounts[]): string[] =>
  handles.filter((handle) => !counts.some((carried) => carried.handle === handle));

export interface HandlePage {
  handles: string[];
  hasMore: boolean;
}

export const handlePattern = /^[a-z0-9_]{3,30}$/;
export const maxDisplayNameLength = 50;
export const maxBioLength = 300;

/** What `searchUsers` compares a display name by. */
export const searchableName = (displayName: string | null): string => (displayName ?? '').toLowerCase();

export const toUserRecord = (doc: Omit<UserDocument, 'passwordHash'>): UserRecord => ({
  handle: doc._id,
  accountId: doc.accountId ?? null,
  displayName: doc.displayName,
  bio: doc.bio ?? null,
  createdAt: doc.createdAt,
  followerCount: doc.followerCount,
  followingCount: doc.followingCount,
  locked: doc.locked === true,
  staff: doc.staff === true,
});

export function assertHandle(handle: string): void {
  if (!handlePattern.test(handle)) {
    throw badInput('Handle must be 3 to 30 characters of a-z, 0-9 and _');
  }
}

/** What signing up or logging in returns: a token for the account, and its user. */
export interface Session {
  token: string;
  user: UserRecord;
}
