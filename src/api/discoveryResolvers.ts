import { createHash } from 'node:crypto';
import type { GraphQLResolveInfo } from 'graphql';
import { decodeCursor, encodeCursor, type Page, type PageRequest } from '../content/position.js';
import { badInput } from '../errors.js';
import type { PostRecord } from '../records/posts.js';
import { requestedTag } from '../records/tags.js';
import { requireViewer, type RequestContext } from './context.js';
import { listPageInfo, pageLoads, postPageRequest, toPostEdge, type PostConnectionRecord } from './connections.js';
import { loadEngagement } from './engagement.js';
import type { Resolvers } from './generated/graphql.js';

export const defaultTrends = 10;
export const maxTrends = 50;
const defaultSearchPage = 20;
const maxSearchPage = 50;

/**
 * Tag timelines and searches have cursors of their own, scoped to the tag or the query they page:
 * a post's place as a timeline cursor has it, after a short digest of the scope, so a cursor from
 * another connection (the home timeline, another tag, another query) is refused, not misread.
 */
const scopeOf = (kind: 'tag' | 'search', key: string): string => `${kind[0]}${createHash('sha1').update(key).digest('base64url').slice(0, 10)}`;

function encodeScoped(scope: string, post: PostRecord): string {
  return Buffer.from(`${scope}.${encodeCursor(post)}`).toString('base64url');
}

function decodeScoped(scope: string, cursor: string): ReturnType<typeof decodeCursor> {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!text.startsWith(`${scope}.`)) throw badInput('Invalid cursor: pass a cursor exactly as a previous page of this connection returned it');
  return decodeCursor(text.slice(scope.length + 1));
}

type PageArgs = { first?: number | null; after?: string | null; last?: number | null; before?: string | null };

function scopedRequest(scope: string, args: PageArgs): PageRequest {
  return postPageRequest({
    first: args.first,
    last: args.last,
    after: args.after == null ? args.after : encodeCursor(decodeScoped(scope, args.after)),
    before: args.before == null ? args.before : encodeCursor(decodeScoped(scope, args.before)),
  });
}

function toScopedConnection(scope: string, page: Page<PostRecord>, request: PageRequest): PostConnectionRecord {
  const edges = page.items.map((item) => ({ ...toPostEdge(item), cursor: encodeScoped(scope, item) }));
  const direction = request.direction === 'older' ? 'forward' : 'backward';
  return { edges, pageInfo: listPageInfo(direction, request.from !== null, page.hasMore, edges[0]?.cursor ?? null, edges.at(-1)?.cursor ?? null) };
}

async function withEngagement(connection: PostConnectionRecord, context: RequestContext, info: GraphQLResolveInfo): Promise<PostConnectionRecord> {
  await loadEngagement(context.known, context.loaders, info, connection.edges.map((edge) => edge.node));
  return connection;
}

function count(value: number | null | undefined, fallback: number, most: number, name: string): number {
  const chosen = value ?? fallback;
  if (chosen < 1 || chosen > most) throw badInput(`${name} must be between 1 and ${most}`);
  return chosen;
}

/** Discovery's resolvers, thin like the rest: parse, check the viewer, hand over to `Discovery`. */
export const discoveryResolvers = {
  Query: {
    tagTimeline: async (_parent, args, context, info) => {
      const tag = requestedTag(args.tag);
      const scope = scopeOf('tag', tag);
      const request = scopedRequest(scope, args);
      const page = await context.services.discovery.tagTimeline(context.viewerId, tag, request, pageLoads(context.loaders));
      return withEngagement(toScopedConnection(scope, page, request), context, info);
    },
    searchPosts: async (_parent, args, context, info) => {
      const search = context.services.discovery.parseSearch(args.query);
      const scope = scopeOf('search', search.query.tokens.join(' ') + '\u0000' + search.query.runs.join(' '));
      const backward = args.last != null || args.before != null;
      const request = scopedRequest(scope, {
        ...args,
        first: backward ? args.first : count(args.first, defaultSearchPage, maxSearchPage, 'first'),
        last: backward ? count(args.last, defaultSearchPage, maxSearchPage, 'last') : args.last,
      });
      const page = await context.services.discovery.searchPosts(context.viewerId, search, request, pageLoads(context.loaders));
      return withEngagement(toScopedConnection(scope, page, request), context, info);
    },
    trendingTags: (_parent, { first }, context) => context.services.discovery.trendingTags(count(first, defaultTrends, maxTrends, 'first')),
    followedTags: async (_parent, _args, context) => [...(await context.services.discovery.followedTags(requireViewer(context)))],
  },
  Mutation: {
    followTag: async (_parent, { tag }, context) => [...(await context.services.discovery.followTag(requireViewer(context), requestedTag(tag)))],
    unfollowTag: async (_parent, { tag }, context) => [...(await context.services.discovery.unfollowTag(requireViewer(context), requestedTag(tag)))],
  },
  Post: {
    tags: (post) => [...post.body.tags],
  },
} satisfies Pick<Resolvers, 'Query' | 'Mutation' | 'Post'>;
