import { ObjectId } from 'mongodb';
import { badInput, notFound } from '../errors.js';
import type { ReportPosition } from '../moderation/reports.js';
import type { ReportReason, ReportRecord, ReportState } from '../records/moderation.js';
import { requireViewer, type RequestContext } from './context.js';
import { listPageInfo, listPageRequest } from './connections.js';
import type { Resolvers } from './generated/graphql.js';
import { postKey, reportGlobalId, reportKey } from './globalIds.js';

const states: readonly ReportState[] = ['OPEN', 'RESOLVED'];

const encodeReportCursor = (report: ReportRecord) =>
  Buffer.from(`r:${report.state}:${report.createdAt.getTime()}:${report.id.toHexString()}`).toString('base64url');

function decodeReportCursor(cursor: string): ReportPosition {
  const match = /^r:(OPEN|RESOLVED):(\d{1,15}):([0-9a-f]{24})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match) throw badInput('Invalid cursor: pass a cursor exactly as a previous page returned it');
  return { state: match[1] as ReportState, at: new Date(Number(match[2])), id: new ObjectId(match[3]) };
}

/** Staff, or FORBIDDEN: asked once per request. */
const requireStaff = (context: RequestContext) => context.services.staff.assertStaff(requireViewer(context));

// Thin like the others: reports, staff and suspensions are moderation/'s services.
export const moderationResolvers: {
  Query: Pick<NonNullable<Resolvers['Query']>, 'reports'>;
  Mutation: Pick<NonNullable<Resolvers['Mutation']>, 'report' | 'resolveReport' | 'unsuspendAccount'>;
  Report: NonNullable<Resolvers['Report']>;
  Notification: Pick<NonNullable<Resolvers['Notification']>, 'removalReason'>;
} = {
  Query: {
    reports: async (_parent, args, context) => {
      await requireStaff(context);
      const request = { ...listPageRequest(args, decodeReportCursor), state: args.state && states.includes(args.state) ? args.state : null };
      const page = await context.services.reports.page(request);
      const edges = page.items.map((report) => ({ cursor: encodeReportCursor(report), node: report }));
      return { edges, pageInfo: listPageInfo(request.direction, request.from !== null, page.hasMore, edges[0]?.cursor ?? null, edges.at(-1)?.cursor ?? null) };
    },
  },
  Mutation: {
    report: (_parent, { handle, postId, reason, comment }, context) => {
      const viewerId = requireViewer(context);
      return context.services.reports.report(viewerId, { handle, postId: postId == null ? null : new ObjectId(postKey(postId)), reason, comment: comment ?? null }, context.scope);
    },
    resolveReport: async (_parent, { id, action }, context) => {
      const staff = await requireStaff(context);
      return context.services.reports.resolve(staff, reportKey(id), action, context.scope);
    },
    unsuspendAccount: async (_parent, { handle }, context) => {
      const staff = await requireStaff(context);
      return context.services.suspensions.unsuspend(handle, staff, context.scope);
    },
  },
  Report: {
    id: (report) => reportGlobalId(report.id),
    comment: (report) => report.comment,
    createdAt: (report) => report.createdAt,
    reporter: async (report, _args, context) => ((await context.services.staff.isStaff(context.viewerId)) ? context.loaders.users.load(report.reporterId) : null),
    account: async (report, _args, context) => {
      // Staff see the account also while it is suspended (every other read leaves it out).
      const account = (await context.loaders.users.load(report.accountId)) ?? (await context.services.suspensions.accountForStaff(report.accountId));
      if (!account) throw notFound(`The reported account "${report.accountId}" no longer exists`);
      return account;
    },
    post: async (report, _args, context) => {
      if (!report.postId) return null;
      const key = report.postId.toHexString();
      // Staff see the reported post whatever its visibility; the reporter as they see posts.
      const post = (await context.services.staff.isStaff(context.viewerId)) ? await context.loaders.posts.load(key) : await context.loaders.visiblePosts.load(key);
      return post && !post.repostOf ? post : null;
    },
    resolution: (report) => report.resolution,
  },
  Notification: {
    removalReason: (notification) => (notification.reason as ReportReason | undefined) ?? null,
  },
};
