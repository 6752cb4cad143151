import { ObjectId } from 'mongodb';
import {
  maxActorsShown,
  notificationKinds,
  type NotificationConnectionRecord,
  type NotificationEdgeRecord,
  type NotificationKind,
  type NotificationRecord,
} from '../records/notifications.js';
import { badInput } from '../errors.js';
import type { UserRecord } from '../records/users.js';
import {
  decodeNotificationCursor,
  encodeNotificationCursor,
  isNewer,
  type NotificationPage,
  type NotificationPageRequest,
} from '../notifications/notificationService.js';
import { requireViewer, type RequestContext } from './context.js';
import { defaultPageSize, maxPageSize } from './connections.js';
import type { Resolvers } from './generated/graphql.js';

export const toNotificationEdge = (node: NotificationRecord): NotificationEdgeRecord => ({ cursor: encodeNotificationCursor(node), node });

function notificationPageRequest(viewerId: string, args: { first?: number | null; after?: string | null; kinds?: readonly NotificationKind[] | null }): NotificationPageRequest {
  const limit = args.first ?? defaultPageSize;
  if (limit < 1 || limit > maxPageSize) throw badInput(`first must be between 1 and ${maxPageSize}`);
  const after = args.after != null ? decodeNotificationCursor(args.after, viewerId) : null;
  const kinds = args.kinds?.length ? args.kinds.filter((kind) => notificationKinds.includes(kind)) : null;
  return { after, limit, kinds };
}

function toNotificationConnection(viewerId: string, page: NotificationPage, cameFromCursor: boolean): NotificationConnectionRecord {
  const edges = page.items.map(toNotificationEdge);
  return {
    recipientId: viewerId,
    edges,
    pageInfo: { hasNextPage: page.hasMore, hasPreviousPage: cameFromCursor, startCursor: edges[0]?.cursor ?? null, endCursor: edges.at(-1)?.cursor ?? null },
  };
}

// Thin like the others: pages and counts come from the service, users, posts and the read marker
// from this request's loaders (one query each per page).
export const notificationResolvers: Pick<Resolvers, 'Notification' | 'NotificationEdge' | 'NotificationConnection'> & {
  Query: Pick<NonNullable<Resolvers['Query']>, 'notifications'>;
  Mutation: Pick<NonNullable<Resolvers['Mutation']>, 'markNotificationsRead'>;
} = {
  Query: {
    notifications: async (_parent, args, context) => {
      const viewerId = requireViewer(context);
      const request = notificationPageRequest(viewerId, args);
      // The marker (for `unread` and `unreadCount`) is read beside the page, not after it.
      const [page] = await Promise.all([context.services.notifications.page(viewerId, request), context.loaders.notificationMarkers.load(viewerId)]);
      return toNotificationConnection(viewerId, page, request.after !== null);
    },
  },
  Mutation: {
    markNotificationsRead: (_parent, { upTo }, context) => {
      const viewerId = requireViewer(context);
      return context.services.notifications.markRead(viewerId, decodeNotificationCursor(upTo, viewerId));
    },
  },
  NotificationConnection: {
    unreadCount: async (connection, _args, context) =>
      context.services.notifications.unreadCount(connection.recipientId, await context.loaders.notificationMarkers.load(connection.recipientId)),
  },
  NotificationEdge: {},
  Notification: {
    createdAt: (notification) => notification.updatedAt,
    actors: async (notification, { first }, context) => {
      const count = first ?? maxActorsShown;
      if (count < 0 || count > maxActorsShown) throw badInput(`actors(first:) must be between 0 and ${maxActorsShown}`);
      const users = await context.loaders.users.loadMany(notification.actorIds.slice(0, count));
      return users.filter((user): user is UserRecord => user !== null && !(user instanceof Error));
    },
    post: async (notification, _args, context) => {
      if (!notification.postId) return null;
      const post = await context.loaders.posts.load(new ObjectId(notification.postId).toHexString());
      return post && !post.repostOf ? post : null;
    },
    unread: async (notification, _args, context: RequestContext) => {
      const marker = await context.loaders.notificationMarkers.load(notification.recipientId);
      return isNewer({ at: notification.updatedAt, id: notification.id }, marker);
    },
  },
};
