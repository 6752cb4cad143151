/**
 * Notifications as every layer sees them: the stored group document, the public record and the
 * mapper between them. Types and pure functions only: no service, no I/O.
 */
import type { ObjectId } from 'mongodb';

export type NotificationKind = 'FOLLOW' | 'LIKE' | 'REPOST' | 'REPLY' | 'MENTION';

export const notificationKinds: readonly NotificationKind[] = ['FOLLOW', 'LIKE', 'REPOST', 'REPLY', 'MENTION'];

/** The newest actors a group keeps, newest first; `n` counts them all. */
export const maxActorsShown = 20;

/**
 * One notification in `notifications`: a group (LIKE and REPOST of one post, FOLLOW of one UTC
 * day) or a single event (REPLY, MENTION). Its `_id` names what it is about, so every writer of
 * the same group meets in one document:
 * `l:<post>`, `r:<post>`, `f:<recipient>:<yyyy-mm-dd>`, `y:<reply>`, `m:<post>:<recipient>`.
 */
export interface NotificationDocument {
  _id: string;
  /** The recipient. */
  r: string;
  k: NotificationKind;
  /** Time of the newest event: the page order, with `_id`, and what the read marker compares. */
  at: Date;
  /** Everyone currently in the group, exact. */
  n: number;
  /** The newest actors, newest first, at most `maxActorsShown`. */
  a: { u: string; at: Date }[];
  /** LIKE/REPOST: the recipient's post; REPLY/MENTION: the reply or mentioning post. */
  p?: ObjectId;
  /** Bumped by every change of `n` or `a`, so a rewrite of `a` never overwrites a newer one. */
  v: number;
  /** Tokens of member changes under way (see NotificationGroups), so a replay is applied once. */
  tk?: string[];
}

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
