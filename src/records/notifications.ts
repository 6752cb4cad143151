/**
 * Notifications as every layer sees them: the one table of kinds, the stored group document, the
 * membership a grouped kind's members carry, the public record and the mappers between them.
 * Types and pure functions only: no service, no I/O.
 */
import type { ObjectId } from 'mongodb';
import { UnreachableCaseError } from '../errors.js';

export type NotificationKind = 'FOLLOW' | 'LIKE' | 'REPOST' | 'REPLY' | 'MENTION' | 'FOLLOW_REQUEST' | 'POST_REMOVED' | 'QUOTE';

/**
 * Every kind, what its documents' ids start with, and whether people are grouped in it. A new
 * kind is one row here and one case in `notificationId`, which the compiler asks for.
 */
export const notificationKindTable = {
  FOLLOW: { prefix: 'f', grouped: true },
  LIKE: { prefix: 'l', grouped: true },
  REPOST: { prefix: 'r', grouped: true },
  REPLY: { prefix: 'y', grouped: false },
  MENTION: { prefix: 'm', grouped: false },
  FOLLOW_REQUEST: { prefix: 'q', grouped: false },
  POST_REMOVED: { prefix: 'x', grouped: false },
  QUOTE: { prefix: 'o', grouped: false },
} as const satisfies Record<NotificationKind, { prefix: string; grouped: boolean }>;

export const notificationKinds = Object.keys(notificationKindTable) as NotificationKind[];

/** The kinds whose notification is a group of people: each of a post's likes and reposts, a day's new followers. */
export type GroupedKind = { [K in NotificationKind]: (typeof notificationKindTable)[K]['grouped'] extends true ? K : never }[NotificationKind];

/** What a notification is about, which names its document: every writer of one group meets in it. */
export type NotificationSubject =
  | { kind: 'LIKE' | 'REPOST'; postId: ObjectId; period: number }
  | { kind: 'FOLLOW'; recipient: string; day: string }
  | { kind: 'REPLY'; replyId: ObjectId }
  | { kind: 'MENTION'; postId: ObjectId; recipient: string }
  /** One per request: `since` is when it was asked, so a request made again after a rejection tells again. */
  | { kind: 'FOLLOW_REQUEST'; recipient: string; requester: string; since: Date }
  /** Staff removed the recipient's post: one per post. */
  | { kind: 'POST_REMOVED'; postId: ObjectId }
  | { kind: 'QUOTE'; quoteId: ObjectId };

export function notificationId(subject: NotificationSubject): string {
  const prefix = notificationKindTable[subject.kind].prefix;
  switch (subject.kind) {
    case 'LIKE':
    case 'REPOST':
      return `${prefix}:${subject.postId.toHexString()}:${subject.period}`;
    case 'FOLLOW':
      return `${prefix}:${subject.recipient}:${subject.day}`;
    case 'REPLY':
      return `${prefix}:${subject.replyId.toHexString()}`;
    case 'MENTION':
      return `${prefix}:${subject.postId.toHexString()}:${subject.recipient}`;
    case 'FOLLOW_REQUEST':
      return `${prefix}:${subject.recipient}:${subject.requester}:${subject.since.getTime()}`;
    case 'POST_REMOVED':
      return `${prefix}:${subject.postId.toHexString()}`;
    case 'QUOTE':
      return `${prefix}:${subject.quoteId.toHexString()}`;
    default:
      throw new UnreachableCaseError(subject);
  }
}

/**
 * Likes and reposts of one post group by retention period (NOTIFICATION_RETENTION_DAYS, counted
 * from the epoch): a group takes members only in its own period, so the group retention removes
 * (its newest event a whole period old) is never one a new member would join.
 */
export const groupPeriod = (at: Date, retentionMs: number) => Math.floor(at.getTime() / retentionMs);

/** Follows group by the UTC day they were made. */
export const followDay = (at: Date) => at.toISOString().slice(0, 10);

/** The newest actors a group shows, newest first; `n` counts them all. */
export const maxActorsShown = 20;

/** One actor shown in a group: who, and when they joined it. */
export interface GroupActor {
  u: string;
  at: Date;
}

/** The order of a group's actors: newest first, then by handle, so every writer sorts alike. */
export const actorOrder = { at: -1, u: -1 } as const;

export function compareActors(a: GroupActor, b: GroupActor): number {
  return b.at.getTime() - a.at.getTime() || (a.u < b.u ? 1 : a.u > b.u ? -1 : 0);
}

/**
 * One notification in `notifications`: a group (LIKE and REPOST of one post, FOLLOW of one UTC
 * day) or a single event (REPLY, MENTION), under the id `notificationId` gives it.
 *
 * A group's count, its shown actors and its time change together, in one write per member who
 * joins or leaves, so every read sees `a` hold exactly the newest `min(n, 20)` members.
 */
export interface NotificationDocument {
  _id: string;
  /** The recipient. */
  r: string;
  k: NotificationKind;
  /** Time of the newest event (a group's newest actor's): the page order, with `_id`, and what the read marker compares. */
  at: Date;
  /** Everyone currently in the group, exact. */
  n: number;
  /** The newest actors, in `actorOrder`, at most `maxActorsShown`. */
  a: GroupActor[];
  /** LIKE/REPOST: the recipient's post; REPLY/MENTION/QUOTE: the reply, mentioning post or quote. */
  p?: ObjectId;
  /** Bumped by every write of the group: of two states of one group, the higher is the newer. */
  v: number;
  /**
   * Tokens of the membership changes applied to this group whose member has not dropped its
   * record of them yet (see GroupMembership); removed in batches once it has.
   */
  tk?: string[];
  /** POST_REMOVED: the reason of the report staff acted on. */
  why?: string;
  /** Tokens of suspensions whose actor `n` leaves out until unsuspended (moderation/suspensions.ts). */
  sh?: string[];
}

/**
 * What a member of a grouped kind carries on its own document (a like or repost edge, a follow
 * pair): the group that counts it, and the change of that under way. A change is recorded with a
 * token before the group is written, the group's write is guarded by the token and keeps it, and
 * the member drops the change once the group is written: so a replay after a crash applies a
 * change once, and the members of a group can always be told from the group's tokens
 * (`countedIn`).
 */
export interface GroupMembership {
  /** The group that counts this member now. */
  g?: string;
  /** When the member joined `g`: its place among the group's actors. */
  ga?: Date;
  /** A change of group under way: to `to` (null: out of every group), joined at `at`. */
  gc?: { t: string; to: string | null; at: Date };
}

/** Whether `member` counts in `group`, whose tokens are `tokens`. */
export function countedIn(member: GroupMembership, group: string, tokens: readonly string[]): boolean {
  const change = member.gc;
  if (!change || change.to === (member.g ?? null)) return member.g === group;
  if (change.to === group) return tokens.includes(change.t);
  if (member.g === group) return !tokens.includes(change.t);
  return false;
}

/**
 * A token a finished change left, recorded on its member for the sweep to prune: from the member's
 * other documents (a post's counter, both users), and from group `g`, which a leave (`left`) may
 * have emptied.
 */
export interface TokenToPrune {
  t: string;
  g?: string;
  left?: true;
}

/** What a pass prunes from groups: each group's recipient (its shard key) and tokens, and whether a leave may have emptied it. */
export type GroupTokens = Map<string, { recipient: string; tokens: string[]; left: boolean }>;

/** Collects the group tokens of many members' prune records; `recipient` is whom the member's groups notify. */
export function groupTokens(records: Iterable<{ recipient: string; prune?: readonly TokenToPrune[] | undefined }>): GroupTokens {
  const byGroup: GroupTokens = new Map();
  for (const { recipient, prune } of records) {
    for (const { t, g, left } of prune ?? []) {
      if (!g) continue;
      const entry = byGroup.get(g) ?? { recipient, tokens: [], left: false };
      entry.tokens.push(t);
      entry.left ||= left === true;
      byGroup.set(g, entry);
    }
  }
  return byGroup;
}

/** A member of a group as its own store keeps it (a like or repost edge, a follow pair): the actor, and their membership. */
export type GroupMember = GroupMembership & { u: string };

/**
 * Where a grouped kind's members live, read only when a shown actor leaves a group that counts
 * more people than it shows: the next one in line is shown instead.
 */
export interface GroupMemberSource {
  /**
   * Members whose `g` is `group`, after `below` in actor order (newest first), in that order; the
   * caller stops reading once it has what it needs.
   */
  membersAfter(group: string, below: GroupActor): AsyncIterable<GroupMember>;
  /** Members with a change into `group` under way: few at any moment. */
  membersJoining(group: string): Promise<GroupMember[]>;
}

/** The time `member` joined (or is joining) `group`, where `countedIn` says it counts. */
export const joinedAt = (member: GroupMembership, group: string): Date => (member.gc && member.gc.to === group ? member.gc.at : member.ga!);

export interface NotificationRecord {
  id: string;
  recipientId: string;
  kind: NotificationKind;
  updatedAt: Date;
  /** Newest first. */
  actorIds: string[];
  actorCount: number;
  postId: ObjectId | null;
  /** Grows with every change of the group: of two states of one group, the higher is the newer. */
  version: number;
  /** POST_REMOVED: the reason of the report staff acted on; absent for every other kind. */
  reason?: string;
}

export function toNotificationRecord(doc: NotificationDocument): NotificationRecord {
  return {
    id: doc._id,
    recipientId: doc.r,
    kind: doc.k,
    updatedAt: doc.at,
    actorIds: doc.a.map((actor) => actor.u),
    actorCount: doc.n,
    postId: doc.p ?? null,
    version: doc.v,
    ...(doc.why === undefined ? {} : { reason: doc.why }),
  };
}

/** A notification as a page shows it: `unread` is decided against the viewer's marker. */
export interface NotificationEdgeRecord {
  cursor: string;
  node: NotificationRecord;
}

/** A page as the API answers it; `unreadCount` is read only when asked for. */
export interface NotificationConnectionRecord {
  recipientId: string;
  edges: NotificationEdgeRecord[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
}
