import { GraphQLScalarType, Kind } from 'graphql';
import { parsePostId, type PostRecord } from '../content/contentService.js';
import { badInput, notFound } from '../errors.js';
import type { HandlePage, UserRecord } from '../graph/userGraphService.js';
import { requireViewer, type RequestContext } from './context.js';
import { hydrateEntries, postPageRequest, toPostConnection, toUserConnection, userPageRequest } from './connections.js';
import type { Resolvers } from './generated/graphql.js';
import { subscriptionResolvers } from './subscriptions.js';

const dateTime = new GraphQLScalarType<Date, string>({
  name: 'DateTime',
  description: 'An ISO-8601 date-time string in UTC.',
  serialize: (value) => (value instanceof Date ? value : new Date(String(value))).toISOString(),
  parseValue: (value) => parseDateTime(value),
  parseLiteral: (ast) => parseDateTime(ast.kind === Kind.STRING ? ast.value : null),
});

function parseDateTime(value: unknown): Date {
  const date = typeof value === 'string' ? new Date(value) : new Date(Number.NaN);
  if (Number.isNaN(date.getTime())) throw badInput('DateTime must be an ISO-8601 string');
  return date;
}

async function author(post: PostRecord, context: RequestContext): Promise<UserRecord> {
  const user = await context.loaders.users.load(post.authorId);
  if (!user) throw notFound(`The author of post ${post.id.toHexString()} no longer exists`);
  return user;
}

// Thin on purpose: each resolver checks who is asking, then hands over to a service or a loader.
export const resolvers: Resolvers = {
  DateTime: dateTime,

  Query: {
    viewer: (_parent, _args, context) => (context.viewerId ? context.loaders.users.load(context.viewerId) : null),
    user: (_parent, { handle }, context) => context.loaders.users.load(handle),
    post: (_parent, { id }, context) => {
      const postId = parsePostId(id);
      return postId ? context.loaders.posts.load(postId.toHexString()) : null;
    },
    timeline: async (_parent, args, context) => {
      const viewerId = requireViewer(context);
      const request = postPageRequest(args);
      const page = await context.services.feed.timeline(viewerId, request, (entries) =>
        hydrateEntries(entries, context.loaders.posts),
      );
      return toPostConnection(page, request);
    },
  },

  Mutation: {
    signUp: (_parent, args, context) => context.services.accounts.signUp(args, context.clientAddress),
    logIn: (_parent, args, context) => context.services.accounts.logIn(args, context.clientAddress),
    follow: (_parent, { handle }, context) => context.services.feed.follow(requireViewer(context), handle),
    unfollow: (_parent, { handle }, context) => context.services.feed.unfollow(requireViewer(context), handle),
    createPost: (_parent, { text }, context) => context.services.feed.post(requireViewer(context), text),
    deletePost: (_parent, { id }, context) => context.services.feed.deletePost(requireViewer(context), id),
  },

  Subscription: subscriptionResolvers,

  User: {
    id: (user) => user.handle,
    viewerIsFollowing: (user, _args, context) =>
      context.viewerId !== null && context.viewerId !== user.handle
        ? context.loaders.viewerFollows.load(user.handle)
        : false,
    posts: async (user, args, context) => {
      const request = postPageRequest(args);
      return toPostConnection(await context.services.content.pageByAuthors([user.handle], request), request);
    },
    followers: (user, args, context) =>
      userConnection(context, args, (page) => context.services.graph.listFollowers(user.handle, page), user.followerCount),
    following: (user, args, context) =>
      userConnection(context, args, (page) => context.services.graph.listFollowing(user.handle, page), user.followingCount),
  },

  Post: {
    id: (post) => post.id.toHexString(),
    author: (post, _args, context) => author(post, context),
  },
};

/** One page of a follow list, its users loaded in one batch; the total is the count kept on the user. */
async function userConnection(
  context: RequestContext,
  args: { first?: number | null; after?: string | null },
  list: (page: { after: string | null; limit: number }) => Promise<HandlePage>,
  totalCount: number,
) {
  const request = userPageRequest(args);
  const page = await list(request);
  const users = await context.loaders.users.loadMany(page.handles);
  return toUserConnection(page, users.map(asUserOrNull), totalCount, request.after !== null);
}

function asUserOrNull(value: UserRecord | null | Error): UserRecord | null {
  if (value instanceof Error) throw value;
  return value;
}
