/**
 * moderation/ is how the service's own staff keep it usable in public: reports from any account,
 * the actions staff take on them (dismissing, removing a post, suspending an account), who is
 * staff, and the audit log every staff action is written to.
 */
import { ObjectId, type Collection, type Db } from 'mongodb';
import type { RateLimits } from '../auth/rateLimits.js';
import type { PostLookups } from '../content/postLookups.js';
import { assertDisplayableText, graphemeLength } from '../content/text.js';
import { AppError, badInput, isDuplicateKeyError, notFound } from '../errors.js';
import type { Publishing } from '../feed/publishing.js';
import type { PostVisibility } from '../feed/postVisibility.js';
import type { UserDirectory } from '../graph/userDirectory.js';
import type { NotificationService } from '../notifications/notificationService.js';
import {
  maxReportCommentLength,
  openReportKey,
  toReportRecord,
  type ModerationAction,
  type ReportDocument,
  type ReportReason,
  type ReportRecord,
  type ReportState,
} from '../records/moderation.js';
import { inListOrder, type ListPage, type ListPageRequest } from '../records/pages.js';
import { assertHandle } from '../records/users.js';
import { plannedCollection, plannedIndexes } from '../db/shardPlan.js';
import type { AuditLog } from './auditLog.js';
import type { Staff } from './staff.js';
import type { Scope } from '../observability/requestScope.js';

/** A report's place in the staff's list: open before resolved, then oldest first. */
export interface ReportPosition {
  state: ReportState;
  at: Date;
  id: ObjectId;
}

export interface ReportPageRequest extends ListPageRequest<ReportPosition> {
  /** Only reports in this state; null for every report. */
  state: ReportState | null;
}

/** Suspending an account is its own service (suspensions.ts); reports only ask for it. */
export interface AccountActions {
  suspend(handle: string, staff: string, reportId: ObjectId, scope: Scope): Promise<void>;
}

export interface ReportsDependencies {
  users: Pick<UserDirectory, 'getUser'>;
  lookups: Pick<PostLookups, 'getPost'>;
  visibility: Pick<PostVisibility, 'canSee'>;
  rateLimits: Pick<RateLimits, 'report'>;
  staff: Staff;
  audit: AuditLog;
  publishing: Pick<Publishing, 'removeModerated'>;
  notifications: Pick<NotificationService, 'notifyPostRemoved'>;
  accounts: AccountActions;
}

/**
 * Reports and their resolution. A report is one document; while open it holds a key unique among
 * open reports (reporter, account, post), so reporting again while one is open answers the open
 * one without counting against the rate limit. The reporter is kept for staff and shown to no one
 * else; nothing tells the reported account anything.
 */
export class Reports {
  readonly reports: Collection<ReportDocument>;

  constructor(
    db: Db,
    private readonly deps: ReportsDependencies,
  ) {
    this.reports = plannedCollection<ReportDocument>(db, 'reports');
  }

  async ensureIndexes(): Promise<void> {
    await plannedIndexes(this.reports, [
      { key: { k: 1 }, name: 'one_open_report', unique: true, partialFilterExpression: { k: { $exists: true } } },
      // The staff's list: open first, oldest first, and either state alone.
      { key: { st: 1, at: 1, _id: 1 }, name: 'state_oldest_first' },
      { key: { p: 1, st: 1 }, name: 'open_of_post', partialFilterExpression: { p: { $exists: true } } },
    ]);
  }

  /**
   * `reporter` reports `handle`, or one of its posts they may see. Everything is checked before
   * anything is written; the open report is answered again while it stays open.
   */
  async report(reporter: string, input: { handle: string; postId: ObjectId | null; reason: ReportReason; comment: string | null }, scope: Scope): Promise<ReportRecord> {
    assertHandle(input.handle);
    const comment = reportComment(input.comment);
    if (input.handle === reporter) throw badInput('You cannot report yourself');
    const account = await this.deps.users.getUser(input.handle);
    if (!account) throw notFound(`No user with handle "${input.handle}"`);
    if (input.postId) {
      const post = await this.deps.lookups.getPost(input.postId);
      const seen = post && post.authorId === input.handle && !post.repostOf && (await this.deps.visibility.canSee(reporter, [post]))[0];
      if (!seen) throw notFound(`No post of ${input.handle} with id "${input.postId.toHexString()}"`);
    }
    const k = openReportKey(reporter, input.handle, input.postId);
    const open = await this.reports.findOne({ k });
    if (open) return toReportRecord(open);
    await this.deps.rateLimits.report(reporter, scope);
    const doc: ReportDocument = {
      _id: new ObjectId(),
      r: reporter,
      a: input.handle,
      ...(input.postId ? { p: input.postId } : {}),
      reason: input.reason,
      ...(comment ? { c: comment } : {}),
      st: 'OPEN',
      at: new Date(),
      k,
    };
    try {
      await this.reports.insertOne(doc);
      return toReportRecord(doc);
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
      // A racing report of the same reporter and target was stored first: it is the open one.
      const raced = await this.reports.findOne({ k });
      if (!raced) throw error;
      return toReportRecord(raced);
    }
  }

  async find(id: ObjectId): Promise<ReportRecord | null> {
    const doc = await this.reports.findOne({ _id: id });
    return doc && toReportRecord(doc);
  }

  /** Staff's list: open reports first, each state oldest first. */
  async page(request: ReportPageRequest): Promise<ListPage<ReportRecord>> {
    const { from, limit, state } = request;
    const forward = request.direction === 'forward';
    const [beyond, order] = forward ? (['$gt', 1] as const) : (['$lt', -1] as const);
    const after =
      from === null
        ? {}
        : {
            $or: [
              { st: { [beyond]: from.state } },
              { st: from.state, at: { [beyond]: from.at } },
              { st: from.state, at: from.at, _id: { [beyond]: from.id } },
            ],
          };
    const filter = state === null ? after : { $and: [{ st: state }, after] };
    const docs = await this.reports.find(filter).sort({ st: order, at: order, _id: order }).limit(limit + 1).toArray();
    return inListOrder(request.direction, docs.map(toReportRecord), limit);
  }

  /**
   * Staff act on a report. The audit entry is written first, then the action, then the report is
   * marked resolved: every step can be repeated, so a request that dies is finished by resolving
   * again (the report stays open until then).
   */
  async resolve(staffHandle: string, id: ObjectId, action: ModerationAction, scope: Scope): Promise<ReportRecord> {
    const report = await this.reports.findOne({ _id: id });
    if (!report) throw notFound(`No report with id "${id.toHexString()}"`);
    if (report.st === 'RESOLVED') {
      if (report.res === action) return toReportRecord(report);
      throw new AppError('CONFLICT', `This report was resolved already (${report.res})`);
    }
    if (action === 'REMOVE_POST' && !report.p) throw badInput('This report names no post to remove');
    await this.deps.audit.record({
      _id: `resolve:${id.toHexString()}`,
      who: staffHandle,
      what: 'RESOLVE_REPORT',
      action,
      account: report.a,
      ...(report.p ? { post: report.p } : {}),
      report: id,
    });
    if (action === 'REMOVE_POST') {
      const removed = await this.deps.publishing.removeModerated(report.p!, scope);
      // Told once per post, also when a retry finds the post already removed by the first attempt.
      if (removed || !(await this.deps.lookups.getPost(report.p!))) await this.deps.notifications.notifyPostRemoved(report.a, report.p!, report.reason);
    } else if (action === 'SUSPEND_ACCOUNT') {
      await this.deps.accounts.suspend(report.a, staffHandle, id, scope);
    }
    // A resolved report's key names the report alone, so the next report of the target is new. (Not
    // unset: the stand-in keeps a missing field in a partial unique index, as MongoDB does not.)
    const resolved = (reportId: ObjectId) => ({ $set: { st: 'RESOLVED' as const, res: action, by: staffHandle, rat: new Date(), k: `resolved ${reportId.toHexString()}` } });
    const after = await this.reports.findOneAndUpdate({ _id: id, st: 'OPEN' }, resolved(id), { returnDocument: 'after' });
    // The other open reports of a removed post are answered by its removal too.
    if (action === 'REMOVE_POST') {
      const others = await this.reports.find({ p: report.p!, st: 'OPEN' }, { projection: { _id: 1 } }).toArray();
      if (others.length > 0) await this.reports.bulkWrite(others.map((other) => ({ updateOne: { filter: { _id: other._id, st: 'OPEN' as const }, update: resolved(other._id) } })));
    }
    return toReportRecord(after ?? (await this.reports.findOne({ _id: id }))!);
  }
}

/** A report's comment as stored: trimmed, null when blank; the text rules of posts, at most 1,000 characters. */
export function reportComment(input: string | null): string | null {
  const comment = input?.trim() || null;
  if (comment) {
    if (graphemeLength(comment) > maxReportCommentLength) throw badInput(`A report's comment must be at most ${maxReportCommentLength} characters`);
    assertDisplayableText(comment, 'Comment', { multiline: true });
  }
  return comment;
}
