import { AppError } from '../errors.js';
import type { LiveClient } from '../live/liveConnections.js';
import type { ChangeEvent, NotificationAddedEvent, PostAddedEvent, PostEditedEvent, PostRemovedEvent } from '../changes/events.js';
import { toNotificationEdge } from './notificationResolvers.js';
import { requireViewer, type RequestContext } from './context.js';
import type { SubscriptionResolvers } from './generated/graphql.js';
import { toPostEdge } from './connections.js';
import { listKey, postGlobalId } from './globalIds.js';
import { noEngagement } from './engagement.js';
import { createLoaders, type Loaders } from './loaders.js';

/** Over HTTP, Apollo would run a subscription document as a query: say where subscriptions live. */
function requireLiveClient(context: RequestContext): LiveClient {
  requireViewer(context);
  if (!context.live) {
    throw new AppError('BAD_USER_INPUT', 'Subscriptions run over WebSocket: connect with graphql-transport-ws to /graphql');
  }
  return context.live;
}

/** Viewer-independent loaders per event: one `users` query per event, however many subscribers. */
const sharedLoaders = new WeakMap<ChangeEvent, Loaders>();

/**
 * A subscription's context lives as long as the subscription, but its loaders must not: they would
 * serve stale users and grow with every author seen. Each event gets fresh ones, sharing the
 * viewer-independent loads (users, posts) with every other subscriber of the same event. Events of
 * one subscription execute one after another, so swapping them here is safe.
 */
function useEventLoaders(context: RequestContext, event: ChangeEvent): void {
  let shared = sharedLoaders.get(event);
  if (!shared) {
    shared = createLoaders(context.services, null);
    sharedLoaders.set(event, shared);
  }
  context.loaders = { ...createLoaders(context.services, context.viewerId), users: shared.users, loadedUsers: shared.loadedUsers, posts: shared.posts };
  context.known = noEngagement();
}

// Thin like the other resolvers: the live service does the filtering, these only map payloads.
export const subscriptionResolvers: SubscriptionResolvers = {
  timelinePostAdded: {
    subscribe: (_parent, _args, context) => context.services.live.timelinePostAdded(requireLiveClient(context)),
    resolve: (event: PostAddedEvent, _args: unknown, context: RequestContext) => {
      requireLiveClient(context);
      useEventLoaders(context, event);
      return toPostEdge(event.post);
    },
  },
  listPostAdded: {
    subscribe: (_parent, { id }, context) => {
      const client = requireLiveClient(context);
      return context.services.live.listPostAdded(client, listKey(id));
    },
    resolve: (event: PostAddedEvent, _args: unknown, context: RequestContext) => {
      requireLiveClient(context);
      useEventLoaders(context, event);
      return toPostEdge(event.post);
    },
  },
  notificationAdded: {
    subscribe: (_parent, _args, context) => context.services.live.notificationAdded(requireLiveClient(context)),
    resolve: (event: NotificationAddedEvent, _args: unknown, context: RequestContext) => {
      requireLiveClient(context);
      useEventLoaders(context, event);
      return toNotificationEdge(event.notification);
    },
  },
  timelinePostEdited: {
    subscribe: (_parent, _args, context) => context.services.live.timelinePostEdited(requireLiveClient(context)),
    resolve: async (event: PostEditedEvent, _args: unknown, context: RequestContext) => {
      requireLiveClient(context);
      useEventLoaders(context, event);
      // The post as it is now: every instance forgot its held copy before the event reached here.
      const post = await context.loaders.visiblePosts.load(event.post.id.toHexString());
      if (!post) throw new AppError('NOT_FOUND', 'The edited post is gone');
      return post;
    },
  },
  timelinePostRemoved: {
    subscribe: (_parent, _args, context) => context.services.live.timelinePostRemoved(requireLiveClient(context)),
    resolve: (event: PostRemovedEvent, _args: unknown, context: RequestContext) => {
      requireLiveClient(context);
      return postGlobalId(event.postId);
    },
  },
};
