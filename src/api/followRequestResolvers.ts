import { badInput } from '../errors.js';
import type { RequestPosition } from '../graph/followPairs.js';
import { handlePattern, type UserRecord } from '../records/users.js';
import { requireViewer, type RequestContext } from './context.js';
import { listPageInfo, listPageRequest } from './connections.js';
import type { Resolvers, ResolversTypes } from './generated/graphql.js';


const encodeRequestCursor = ({ since, followerId }: RequestPosition) => Buffer.from(`q:${since.getTime()}:${followerId}`).toString('base64url');

function decodeRequestCursor(cursor: string): RequestPosition {
  const match = /^q:(\d{1,15}):(.*)$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match || !handlePattern.test(match[2]!)) throw badInput('Invalid cursor: pass a cursor exactly as a previous page returned it');
  return { since: new Date(Number(match[1])), followerId: match[2]! };
}

/**
 * Whether the viewer may see whom `user` follows and who follows them: everyone for an unlocked
 * account; for a locked one, the account itself and its followers.
 */
export async function showsFollowLists(user: UserRecord, context: RequestContext): Promise<boolean> {
  if (!user.locked || context.viewerId === user.handle) return true;
  return context.viewerId !== null && context.loaders.viewerFollows.load(user.handle);
}

/** What a hidden follow list answers: an empty page, so that a profile asking for it still shows. */
export const hiddenFollowList = (totalCount: number): ResolversTypes['UserConnection'] => ({
  edges: [],
  totalCount,
  pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: null, endCursor: null },
});

// Thin like the others: the requests live on the follow pairs (FollowRequests, ReaderRelations).
export const followRequestResolvers: {
  Query: Pick<NonNullable<Resolvers['Query']>, 'followRequests'>;
  Mutation: Pick<NonNullable<Resolvers['Mutation']>, 'approveFollowRequest' | 'rejectFollowRequest' | 'updateProfile'>;
  User: Pick<NonNullable<Resolvers['User']>, 'viewerFollowState'>;
} = {
  Query: {
    followRequests: async (_parent, args, context) => {
      const viewerId = requireViewer(context);
      const request = listPageRequest(args, decodeRequestCursor);
      const page = await context.services.followRequests.page(viewerId, request);
      const users = await context.loaders.users.loadMany(page.requests.map((waiting) => waiting.followerId));
      const edges = page.requests.flatMap((waiting, index) => {
        const user = users[index];
        if (user instanceof Error) throw user;
        return user ? [{ cursor: encodeRequestCursor(waiting), node: user }] : [];
      });
      return {
        edges,
        totalCount: page.totalCount,
        pageInfo: listPageInfo(request.direction, request.from !== null, page.hasMore, edges[0]?.cursor ?? null, edges.at(-1)?.cursor ?? null),
      };
    },
  },
  Mutation: {
    approveFollowRequest: (_parent, { handle }, context) => context.services.followRequests.approve(requireViewer(context), handle),
    rejectFollowRequest: (_parent, { handle }, context) => context.services.followRequests.reject(requireViewer(context), handle),
    updateProfile: (_parent, args, context) =>
      context.services.followRequests.updateProfile(requireViewer(context), args, context.scope).then((user) => {
        context.loaders.users.clear(user.handle).prime(user.handle, user);
        return user;
      }),
  },
  User: {
    viewerFollowState: async (user, _args, context) => {
      if (context.viewerId === null || context.viewerId === user.handle) return 'NONE';
      const [follows, requested] = await Promise.all([context.loaders.viewerFollows.load(user.handle), user.locked ? context.loaders.viewerRequests.load(user.handle) : false]);
      return follows ? 'FOLLOWING' : requested ? 'REQUESTED' : 'NONE';
    },
  },
};
