/**
 * Moderation as every layer sees it: reports, the actions staff take on them, and the audit log's
 * entries. Types and pure mappers only: no service, no I/O.
 */
import type { ObjectId } from 'mongodb';

export type ReportReason = 'SPAM' | 'ABUSE' | 'ILLEGAL' | 'OTHER';
export type ReportState = 'OPEN' | 'RESOLVED';
export type ModerationAction = 'DISMISS' | 'REMOVE_POST' | 'SUSPEND_ACCOUNT';

/** The longest comment a report may carry, in characters (graphemes). */
export const maxReportCommentLength = 1000;

export interface ReportDocument {
  _id: ObjectId;
  /** The reporter: shown to staff only. */
  r: string;
  /** The reported account. */
  a: string;
  /** The reported post, when a post was reported. */
  p?: ObjectId;
  reason: ReportReason;
  c?: string;
  st: ReportState;
  at: Date;
  /**
   * While the report is open: reporter, account and post in one string, unique among open
   * reports, so asking again while one is open answers the open one (removed on resolving).
   */
  k?: string;
  /** How staff resolved it, who, and when. */
  res?: ModerationAction;
  by?: string;
  rat?: Date;
}

export interface ReportRecord {
  id: ObjectId;
  reporterId: string;
  accountId: string;
  postId: ObjectId | null;
  reason: ReportReason;
  comment: string | null;
  state: ReportState;
  createdAt: Date;
  resolution: ModerationAction | null;
}

export const toReportRecord = (doc: ReportDocument): ReportRecord => ({
  id: doc._id,
  reporterId: doc.r,
  accountId: doc.a,
  postId: doc.p ?? null,
  reason: doc.reason,
  comment: doc.c ?? null,
  state: doc.st,
  createdAt: doc.at,
  resolution: doc.res ?? null,
});

/** The key an open report holds: one open report per reporter and target (an account, or one of its posts). */
export const openReportKey = (reporter: string, account: string, postId: ObjectId | null) => `${reporter} ${account} ${postId?.toHexString() ?? '-'}`;

/** What a staff member (or the staff command) did. */
export type AuditAction = 'GRANT_STAFF' | 'REVOKE_STAFF' | 'RESOLVE_REPORT' | 'UNSUSPEND_ACCOUNT';

/**
 * One entry of the audit log: who did what, when, to which account or post, under which report.
 * Written once and never changed: nothing in the API writes it but the actions themselves.
 */
export interface AuditDocument {
  /** Named by what it records, so that an action repeated after a crash is recorded once. */
  _id: string;
  at: Date;
  /** The staff member's handle; `command line` for the staff command. */
  who: string;
  what: AuditAction;
  /** The action taken on a report. */
  action?: ModerationAction;
  account?: string;
  post?: ObjectId;
  report?: ObjectId;
}
