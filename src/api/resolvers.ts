import { GraphQLScalarType, Kind, type GraphQLResolveInfo } from 'graphql';
import { loadEngagement } from './engagement.js';
import type DataLoader from 'dataloader';
import { parsePostId, type PostCounts, type PostRecord } from '../records/posts.js';
import { toDescriptor } from '../records/media.js';
import { AppError, badInput, notFound } from '../errors.js';
import { encodeCursor } from '../content/position.js';
import type { BookmarkLoads } from '../feed/bookmarking.js';
import type { HandlePage, UserRecord } from '../records/users.js';
import { requireViewer, type RequestContext } from './context.js';
import {
  maxPageSize,
  pageLoads,
  searchRequest,
  toBookmarkConnection,
  bookmarkPageRequest,
  postPageRequest,
  replyPageRequest,
  toPostConnection,
  toReplyConnection,
  toUserConnection,
  userPageRequest,
  type PostConnectionRecord,
} from './connections.js';
import type { Resolvers } from './generated/graphql.js';
import { subscriptionResolvers } from './subscriptions.js';
import { keywordFilterGlobalId, listGlobalId, listKey, lookupId, mediaGlobalId, mediaKey, postGlobalId, postKey, requireId, userGlobalId } from './globalIds.js';
import { nodeResolvers } from './nodeResolvers.js';
import type { ListPageRequest } from '../records/pages.js';
import { notificationResolvers } from './notificationResolvers.js';
import { followRequestResolvers, hiddenFollowList, showsFollowLists } from './followRequestResolvers.js';
import { moderationResolvers } from './moderationResolvers.js';
import { discoveryResolvers } from './discoveryResolvers.js';
import { conversationMutationResolvers, conversationPostResolvers, conversationUserResolvers } from './conversationResolvers.js';

/**
 * The ISO strings of dates served before. A page's dates mostly come from records this process
 * holds (readers' caches, outboxes), the same Date objects page after page, and `toISOString` was
 * about 5 % of a cache page's CPU. Nothing in this code changes a Date once made.
 */
const isoStrings = new WeakMap<Date, string>();

function isoString(date: Date): string {
  let iso = isoStrings.get(date);
  if (iso === undefined) {
    iso = date.toISOString();
    isoStrings.set(date, iso);
  }
  return iso;
}

const dateTime = new GraphQLScalarType<Date, string>({
  name: 'DateTime',
  description: 'An ISO-8601 date-time string in UTC.',
  serialize: (value) => (value instanceof Date ? isoString(value) : new Date(String(value)).toISOString()),
  parseValue: (value) => parseDateTime(value),
  parseLiteral: (ast) => parseDateTime(ast.kind === Kind.STRING ? ast.value : null),
});

function parseDateTime(value: unknown): Date {
  const date = typeof value === 'string' ? new Date(value) : new Date(Number.NaN);
  if (Number.isNaN(date.getTime())) throw badInput('DateTime must be an ISO-8601 string');
  return date;
}

function author(post: PostRecord, context: RequestContext): UserRecord | Promise<UserRecord> {
  const loaded = context.loaders.loadedUsers.get(post.authorId);
  if (loaded !== undefined) return existingAuthor(post, loaded);
  return context.loaders.users.load(post.authorId).then((user) => existingAuthor(post, user));
}

function existingAuthor(post: PostRecord, user: UserRecord | null): UserRecord {
  if (!user) throw notFound(`The author of post ${post.id.toHexString()} no longer exists`);
  return user;
}

// Thin on purpose: each resolver checks who is asking, then hands over to a service or a loader.
export const resolvers: Resolvers = {
  DateTime: dateTime,

  Query: {
    viewer: (_parent, _args, context) => (context.viewerId ? context.loaders.users.load(context.viewerId) : null),
    ...nodeResolvers.Query,
    user: (_parent, { handle }, context) => context.loaders.users.load(handle),
    post: (_parent, { id }, context) => {
      const parsed = lookupId(id);
      return parsed?.type === 'Post' ? loadPost(parsed.postId.toHexString(), context) : null;
    },
    timeline: async (_parent, args, context, info) => {
      const viewerId = requireViewer(context);
      const request = postPageRequest(args);
      const page = await context.services.timelines.timeline(viewerId, request, pageLoads(context.loaders));
      return withEngagement(toPostConnection(page, request), context, info);
    },
    timelineMarker: (_parent, _args, context) => context.services.markers.read(requireViewer(context)),
    searchUsers: (_parent, args, context) => {
      requireViewer(context);
      const request = searchRequest(args);
      return context.services.profiles.search(request.prefix, request.limit).then((users) => primed(context, users));
    },
    lists: (_parent, _args, context) => context.services.lists.listsOf(requireViewer(context)),
    list: (_parent, { id }, context) => {
      const viewerId = requireViewer(context);
      const parsed = lookupId(id);
      return parsed?.type === 'List' ? context.services.lists.find(viewerId, parsed.listId.toHexString()) : null;
    },
    suggestedFollows: async (_parent, { first }, context) => {
      const suggestions = await context.services.suggestions.suggest(requireViewer(context), count(first, 10, 'first'));
      // An account deleted since it was ranked is left out rather than shown as an error.
      const users = await context.loaders.users.loadMany(suggestions.map((suggestion) => suggestion.userId));
      return suggestions.filter((_, index) => asUserOrNull(users[index]!) !== null);
    },
    ...notificationResolvers.Query,
    ...followRequestResolvers.Query,
    ...moderationResolvers.Query,
    ...discoveryResolvers.Query,
  },

  Mutation: {
    signUp: (_parent, args, context) => context.services.accounts.signUp(args, context.clientAddress, context.scope),
    logIn: (_parent, args, context) => context.services.accounts.logIn(args, context.clientAddress, context.scope),
    follow: (_parent, { handle }, context) => context.services.relations.follow(requireViewer(context), handle, context.scope),
    unfollow: (_parent, { handle }, context) => context.services.relations.unfollow(requireViewer(context), handle),
    createPost: (_parent, { text, replyTo, visibility, media, quoteOf }, context) => {
      const viewerId = requireViewer(context);
      return context.services.publishing.post(
        viewerId,
        text,
        context.scope,
        replyTo == null ? null : postKey(replyTo),
        visibility ?? 'PUBLIC',
        (media ?? []).map(mediaKey),
        quoteOf == null ? null : postKey(quoteOf),
      );
    },
    updateMedia: async (_parent, { id, alt }, context) => {
      const viewerId = requireViewer(context);
      const updated = await context.services.postEdits.setAlt(viewerId, mediaKey(id), alt, context.scope);
      return context.services.media.record(toDescriptor(updated), context.origin);
    },
    deletePost: (_parent, { id }, context) => {
      const viewerId = requireViewer(context);
      return context.services.publishing.deletePost(viewerId, postKey(id), context.scope);
    },
    likePost: (_parent, { id }, context) =>
      context.services.publishing.likePost(requireViewer(context), postKey(id), context.scope).then(showing(context.loaders.viewerLikes, true)),
    unlikePost: (_parent, { id }, context) =>
      context.services.publishing.unlikePost(requireViewer(context), postKey(id), context.scope).then(showing(context.loaders.viewerLikes, false)),
    repost: (_parent, { id }, context) =>
      context.services.publishing.repost(requireViewer(context), postKey(id), context.scope).then(showing(context.loaders.viewerReposts, true)),
    undoRepost: (_parent, { id }, context) =>
      context.services.publishing.undoRepost(requireViewer(context), postKey(id), context.scope).then(showing(context.loaders.viewerReposts, false)),
    mute: (_parent, { handle }, context) => context.services.relations.mute(requireViewer(context), handle, context.scope),
    unmute: (_parent, { handle }, context) => context.services.relations.unmute(requireViewer(context), handle),
    block: (_parent, { handle }, context) => context.services.relations.block(requireViewer(context), handle, context.scope),
    unblock: (_parent, { handle }, context) => context.services.relations.unblock(requireViewer(context), handle),
    addKeywordFilter: (_parent, { phrase }, context) => context.services.relations.addKeywordFilter(requireViewer(context), phrase),
    removeKeywordFilter: (_parent, { id }, context) => {
      const viewerId = requireViewer(context);
      return context.services.relations.removeKeywordFilter(viewerId, requireId(id, 'KeywordFilter', 'keyword filter').filterId.toHexString());
    },
    deleteAccount: (_parent, { password }, context) => context.services.accounts.deleteAccount(requireViewer(context), password, context.clientAddress, context.scope),
    createList: (_parent, { name }, context) => context.services.lists.create(requireViewer(context), name),
    renameList: (_parent, { id, name }, context) => {
      const viewerId = requireViewer(context);
      return context.services.lists.rename(viewerId, listKey(id), name);
    },
    deleteList: (_parent, { id }, context) => {
      const viewerId = requireViewer(context);
      return context.services.lists.delete(viewerId, listKey(id));
    },
    addToList: (_parent, { id, handle }, context) => {
      const viewerId = requireViewer(context);
      return context.services.lists.addMember(viewerId, listKey(id), handle);
    },
    removeFromList: (_parent, { id, handle }, context) => {
      const viewerId = requireViewer(context);
      return context.services.lists.removeMember(viewerId, listKey(id), handle);
    },
    ...notificationResolvers.Mutation,
    ...discoveryResolvers.Mutation,
    markTimelineRead: (_parent, { upTo }, context) => context.services.markers.mark(requireViewer(context), upTo),
    bookmark: (_parent, { id }, context) =>
      context.services.bookmarks.bookmark(requireViewer(context), postKey(id)).then(showing(context.loaders.viewerBookmarks, true)),
    unbookmark: (_parent, { id }, context) =>
      context.services.bookmarks.unbookmark(requireViewer(context), postKey(id)).then(showing(context.loaders.viewerBookmarks, false)),
    changePassword: (_parent, { current, next }, context) =>
      context.services.settings.changePassword(requireViewer(context), current, next, context.clientAddress, context.scope),
    logOutEverywhere: (_parent, _args, context) => context.services.settings.logOutEverywhere(requireViewer(context)),
    ...followRequestResolvers.Mutation,
    ...moderationResolvers.Mutation,
    ...conversationMutationResolvers,
  },

  TimelineMarker: {
    cursor: (marker) => (marker.position ? encodeCursor(marker.position) : null),
    unreadCount: (marker, _args, context) => context.services.markers.unreadCount(marker, pageLoads(context.loaders)),
  },

  Subscription: subscriptionResolvers,

  Node: nodeResolvers.Node,

  User: {
    id: (user) => userGlobalId(user),
    viewerIsFollowing: (user, _args, context) =>
      context.viewerId !== null && context.viewerId !== user.handle
        ? context.loaders.viewerFollows.load(user.handle)
        : false,
    posts: async (user, args, context, info) => {
      const request = postPageRequest(args);
      return withEngagement(toPostConnection(await context.services.timelines.postsOf(context.viewerId, user.handle, request), request), context, info);
    },
    viewerHasMuted: async (user, _args, context) =>
      context.viewerId !== null && (await context.loaders.viewerFilters.load(context.viewerId)).muted.has(user.handle),
    viewerHasBlocked: async (user, _args, context) =>
      context.viewerId !== null && (await context.loaders.viewerFilters.load(context.viewerId)).blocked.has(user.handle),
    keywordFilters: (user, _args, context) => {
      if (requireViewer(context) !== user.handle) throw new AppError('FORBIDDEN', 'Keyword filters are visible only to their owner');
      return context.services.relations.readerFilters.keywordFilters(user.handle);
    },
    bookmarks: async (user, args, context, info) => {
      const request = bookmarkPageRequest(args);
      const page = await context.services.bookmarks.page(requireViewer(context), user.handle, request, bookmarkLoads(context));
      return withEngagement(toBookmarkConnection(page, request), context, info);
    },
    followers: async (user, args, context) =>
      (await showsFollowLists(user, context))
        ? userConnection(context, args, (page) => context.services.graph.listFollowers(user.handle, page), user.followerCount)
        : hiddenFollowList(user.followerCount),
    following: async (user, args, context) =>
      (await showsFollowLists(user, context))
        ? userConnection(context, args, (page) => context.services.graph.listFollowing(user.handle, page), user.followingCount)
        : hiddenFollowList(user.followingCount),
    ...followRequestResolvers.User,
    ...conversationUserResolvers,
  },

  KeywordFilter: {
    id: (filter) => keywordFilterGlobalId(filter),
  },

  List: {
    id: (list) => listGlobalId(list.id),
    memberCount: (list, _args, context) => context.loaders.listMemberCounts.load(list.id.toHexString()),
    members: async (list, args, context) =>
      userConnection(context, args, (page) => context.services.lists.members(list, page), await context.loaders.listMemberCounts.load(list.id.toHexString())),
    timeline: async (list, args, context, info) => {
      const request = postPageRequest(args);
      return withEngagement(toPostConnection(await context.services.lists.timeline(list, request, pageLoads(context.loaders)), request), context, info);
    },
  },

  Suggestion: {
    user: async (suggestion, _args, context) => existingUser(suggestion.userId, await context.loaders.users.load(suggestion.userId)),
    followedBy: async (suggestion, { first }, context) => {
      const users = await context.loaders.users.loadMany(suggestion.followedBy.slice(0, count(first, 3, 'first')));
      return users.map(asUserOrNull).filter((user): user is UserRecord => user !== null);
    },
  },

  Post: {
    id: (post) => postGlobalId(post.id),
    author: (post, _args, context) => author(post, context),
    text: (post) => post.body.text,
    visibility: (post) => post.body.visibility,
    likeCount: (post, _args, context) => countOf(post, context, 'likes'),
    repostCount: (post, _args, context) => countOf(post, context, 'reposts'),
    replyCount: (post, _args, context) => countOf(post, context, 'replies'),
    viewerHasLiked: (post, _args, context) => viewerState(post, context.known.likes, context.loaders.viewerLikes),
    viewerHasReposted: (post, _args, context) => viewerState(post, context.known.reposts, context.loaders.viewerReposts),
    replyTo: (post, _args, context) => (post.replyTo ? loadPost(post.replyTo.id.toHexString(), context) : null),
    replies: async (post, args, context, info) => {
      const request = replyPageRequest(args);
      return withEngagement(toReplyConnection(await context.services.timelines.repliesTo(context.viewerId, post.id, request, pageLoads(context.loaders)), request), context, info);
    },
    mentions: async (post, _args, context) => {
      const handles = post.body.mentions;
      if (handles.length === 0) return [];
      const users = await context.loaders.users.loadMany(handles);
      return users.map(asUserOrNull).filter((user): user is UserRecord => user !== null);
    },
    viewerHasBookmarked: (post, _args, context) => viewerState(post, context.known.bookmarks, context.loaders.viewerBookmarks),
    // Signed here, for a post the viewer may see: the only way a URL of its images is handed out.
    media: (post, _args, context) => post.body.media.map((image) => context.services.media.record(image, context.origin)),
    ...discoveryResolvers.Post,
    ...conversationPostResolvers,
  },

  Media: {
    id: (media) => mediaGlobalId(media.id),
  },

  Notification: { ...notificationResolvers.Notification, ...moderationResolvers.Notification },
  Report: moderationResolvers.Report,
  NotificationEdge: notificationResolvers.NotificationEdge,
  NotificationConnection: notificationResolvers.NotificationConnection,

  PostEdge: {
    cursor: (edge) => edge.cursor ?? encodeCursor(edge.item),
    repostedBy: (edge, _args, context) => (edge.repostedById ? context.loaders.users.load(edge.repostedById) : null),
  },
};

/**
 * The answer to a like, repost or their undoing shows what this request did, not what a racing
 * request of the same viewer did a moment later: the viewer's state of the post is the request's.
 */
const showing = (viewerState: DataLoader<string, boolean>, state: boolean) => (post: PostRecord) => {
  const key = post.id.toHexString();
  viewerState.clear(key).prime(key, state);
  return post;
};

/**
 * A post by id; null for an unknown id, for a repost's id, which the API never hands out, and for a
 * post the viewer may not see.
 */
async function loadPost(id: string, context: RequestContext): Promise<PostRecord | null> {
  const postId = parsePostId(id);
  const post = postId && (await context.loaders.visiblePosts.load(postId.toHexString()));
  return post && !post.repostOf ? post : null;
}

/** Counts travel with a post read from `content`; everyone else's (embedded, linked, live) come from one batched load. */
function counts(post: PostRecord, context: RequestContext): Promise<PostCounts> {
  return post.counts ? Promise.resolve(post.counts) : context.loaders.postCounts.load(post.id.toHexString());
}

/** A page of posts, with what its posts' fields ask of their counts and the viewer read for all of them at once. */
async function withEngagement(connection: PostConnectionRecord, context: RequestContext, info: GraphQLResolveInfo): Promise<PostConnectionRecord> {
  await loadEngagement(context.known, context.loaders, info, connection.edges.map((edge) => edge.node));
  return connection;
}

/** One of a post's counts: at once when the post, or its page (see engagement.ts), brought them. */
function countOf(post: PostRecord, context: RequestContext, kind: 'likes' | 'reposts' | 'replies'): number | Promise<number> {
  const known = post.counts ?? context.known.counts.get(post.id.toHexString());
  return known ? known[kind] : counts(post, context).then((loaded) => loaded[kind]);
}

/** The viewer's like, repost or bookmark of a post: at once when its page read it, else one batched load. */
function viewerState(post: PostRecord, known: ReadonlyMap<string, boolean>, loader: DataLoader<string, boolean>): boolean | Promise<boolean> {
  const key = post.id.toHexString();
  return known.get(key) ?? loader.load(key);
}

/** One page of a follow list, its users loaded in one batch; the total is the count kept on the user. */
async function userConnection(
  context: RequestContext,
  args: { first?: number | null; after?: string | null; last?: number | null; before?: string | null },
  list: (page: ListPageRequest<string>) => Promise<HandlePage>,
  totalCount: number,
) {
  const request = userPageRequest(args);
  const page = await list(request);
  const users = await context.loaders.users.loadMany(page.handles);
  return toUserConnection(page, users.map(asUserOrNull), totalCount, request);
}

/** Users a service read whole: the rest of the request finds them in the users loader. */
function primed(context: RequestContext, users: UserRecord[]): UserRecord[] {
  for (const user of users) context.loaders.users.clear(user.handle).prime(user.handle, user);
  return users;
}

/** How a page of bookmarks loads its posts and authors: through the request's loaders, one query per kind. */
function bookmarkLoads(context: RequestContext): BookmarkLoads {
  return {
    posts: async (ids) => (await context.loaders.posts.loadMany(ids.map((id) => id.toHexString()))).map(asPostOrNull),
    users: async (handles) => new Set((await context.loaders.users.loadMany(handles)).map(asUserOrNull).flatMap((user) => (user ? [user.handle] : []))),
  };
}

function asPostOrNull(value: PostRecord | null | Error): PostRecord | null {
  if (value instanceof Error) throw value;
  return value;
}

function existingUser(handle: string, user: UserRecord | null): UserRecord {
  if (!user) throw notFound(`No user with handle "${handle}"`);
  return user;
}

/** A small count argument: `fallback` when absent, else 1 to `maxPageSize`. */
function count(value: number | null | undefined, fallback: number, name: string): number {
  if (value === null || value === undefined) return fallback;
  if (value < 1 || value > maxPageSize) throw badInput(`${name} must be between 1 and ${maxPageSize}`);
  return value;
}

function asUserOrNull(value: UserRecord | null | Error): UserRecord | null {
  if (value instanceof Error) throw value;
  return value;
}
