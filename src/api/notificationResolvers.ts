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
import { listPageInfo, listPageRequest } from './connections.js';
import { notificationGlobalId } from './globalIds.js';
import type { Resolvers } from './generated/graphql.js';

export const toNotificationEdge = (node: NotificationRecord): NotificationEdgeRecord => ({ cursor: encodeNotificationCursor(node), node });

type NotificationPageArgs = { first?: number | null; after?: string | null; last?: number | null; before?: string | null; kinds?: readonly NotificationKind[] | null };

function notificationPageRequest(viewerId: string, args: NotificationPageArgs): NotificationPageRequest {
  const request = listPageRequest(args, (cursor) => decodeNotificationCursor(cursor, viewerId));
  const kinds = args.kinds?.length ? args.kinds.filter((kind) => notificationKinds.includes(kind)) : null;
  return { ...request, kinds };
}

function toNotificationConnection(viewerId: string, page: NotificationPage, request: NotificationPageRequest): NotificationConnectionRecord {
  const edges = page.items.map(toNotificationEdge);
  return {
    recipientId: viewerId,
    edges,
    pageInfo: listPageInfo(request.direction, request.from !== null, page.hasMore, edges[0]?.cursor ?? null, edges.at(-1)?.cursor ?? null),
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
      return toNotificationConnection(viewerId, page, request);
    },
  },
  Mutation: {
    markNotificationsRead: async (_parent, { upTo }, context) => {
      const viewerId = requireViewer(context);
      const { marked, unreadCount, marker } = await context.services.notifications.markRead(viewerId, decodeNotificationCursor(upTo, viewerId));
      // The marked notifications answer `unread` from the marker this request left, not one read before it.
      context.loaders.notificationMarkers.clear(viewerId).prime(viewerId, marker);
      return { unreadCount, notifications: marked };
    },
  },
  NotificationConnection: {
    unreadCount: async (connection, _args, context) =>
      context.services.notifications.unreadCount(connection.recipientId, await context.loaders.notificationMarkers.load(connection.recipientId)),
  },
  NotificationEdge: {},
  Notification: {
    id: (notification) => notificationGlobalId(notification),
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
