import DataLoader from 'dataloader';
import type { GraphQLResolveInfo } from 'graphql';
import { ObjectId } from 'mongodb';
import { badInput } from '../errors.js';
import type { PostRecord } from '../records/posts.js';
import type { UserRecord } from '../records/users.js';
import { listPageInfo, listPageRequest, postPageRequest, toPostConnection, toPostEdge, type PostConnectionRecord } from './connections.js';
import { requireViewer, type RequestContext } from './context.js';
import { loadEngagement } from './engagement.js';
import type { MutationResolvers, PostResolvers, UserResolvers } from './generated/graphql.js';
import { postKey } from './globalIds.js';
import type { Loaders } from './loaders.js';

/**
 * Threads, quotes, edits and pins: the fields and mutations of conversations, as thin as the
 * other resolvers (resolvers.ts spreads them in). What a response asks of many posts (their edit
 * histories, their authors' pins) is read once per response by the loaders below.
 */

interface ConversationLoaders {
  /** Pinned post ids by author handle: one query per response. */
  pins: DataLoader<string, ObjectId[]>;
  /** Earlier texts by hex post id: one query per response. */
  edits: DataLoader<string, { m: string; e: Date }[]>;
}

/** One set per request's loaders (a subscription's are new for every event). */
const conversationLoaders = new WeakMap<Loaders, ConversationLoaders>();

function loadersOf(context: RequestContext): ConversationLoaders {
  let loaders = conversationLoaders.get(context.loaders);
  if (!loaders) {
    const { conversations, content } = context.services;
    loaders = {
      pins: new DataLoader(async (handles) => {
        const pins = await conversations.pinsOf(handles);
        return handles.map((handle) => pins.get(handle) ?? []);
      }),
      edits: new DataLoader(async (ids) => {
        const history = await content.textEdits.historyOf(ids.map((id) => new ObjectId(id)));
        return ids.map((id) => history.get(id) ?? []);
      }),
    };
    conversationLoaders.set(context.loaders, loaders);
  }
  return loaders;
}

/** A post as `content` holds it, with its place in its thread: a timeline's copy of a reply does not carry it. */
async function threaded(post: PostRecord, context: RequestContext): Promise<PostRecord> {
  if (!post.replyTo || post.thread) return post;
  return (await context.services.content.lookups.getPost(post.id)) ?? post;
}

async function visiblePost(id: ObjectId, context: RequestContext): Promise<PostRecord | null> {
  const post = await context.loaders.visiblePosts.load(id.toHexString());
  return post && !post.repostOf ? post : null;
}

async function withEngagement(connection: PostConnectionRecord, context: RequestContext, info: GraphQLResolveInfo): Promise<PostConnectionRecord> {
  await loadEngagement(context.known, context.loaders, info, connection.edges.map((edge) => edge.node));
  return connection;
}

const encodeThreadCursor = (key: string) => Buffer.from(`t:${key}`).toString('base64url');

function decodeThreadCursor(cursor: string): string {
  const key = /^t:([0-9a-f]+)$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'))?.[1];
  if (!key) throw badInput('Invalid cursor: pass a cursor exactly as a previous page returned it');
  return key;
}

export const conversationPostResolvers: Pick<PostResolvers, 'ancestors' | 'descendants' | 'quoted' | 'quoteCount' | 'quotes' | 'editedAt' | 'edits' | 'pinned'> = {
  ancestors: async (post, _args, context) => context.services.conversations.ancestors(context.viewerId, await threaded(post, context)),
  descendants: async (post, args, context, info) => {
    const request = listPageRequest(args, decodeThreadCursor);
    const page = await context.services.conversations.descendants(context.viewerId, await threaded(post, context), request);
    const edges = page.items.map((reply) => ({ ...toPostEdge(reply), cursor: encodeThreadCursor(reply.thread?.key ?? '') }));
    return withEngagement({ edges, pageInfo: listPageInfo(request.direction, request.from !== null, page.hasMore, edges[0]?.cursor ?? null, edges.at(-1)?.cursor ?? null) }, context, info);
  },
  quoted: (post, _args, context) => (post.body.quoteOf ? visiblePost(post.body.quoteOf.id, context) : null),
  quoteCount: async (post, _args, context) => {
    const counts = post.counts ?? context.known.counts.get(post.id.toHexString()) ?? (await context.loaders.postCounts.load(post.id.toHexString()));
    return counts.quotes ?? 0;
  },
  quotes: async (post, args, context, info) => {
    const request = postPageRequest(args);
    return withEngagement(toPostConnection(await context.services.conversations.quotes(context.viewerId, post.id, request), request), context, info);
  },
  editedAt: (post) => post.body.editedAt,
  edits: async (post, _args, context) => {
    if (!post.body.editedAt) return [];
    return (await loadersOf(context).edits.load(post.id.toHexString())).map((edit) => ({ text: edit.m, editedAt: edit.e }));
  },
  pinned: async (post, _args, context) => (await loadersOf(context).pins.load(post.authorId)).some((id) => id.equals(post.id)),
};

export const conversationUserResolvers: Pick<UserResolvers, 'pinnedPosts'> = {
  pinnedPosts: async (user, _args, context) => {
    const ids = await loadersOf(context).pins.load(user.handle);
    const posts = await Promise.all(ids.map((id) => visiblePost(id, context)));
    return posts.filter((post): post is PostRecord => post !== null && post.authorId === user.handle);
  },
};

export const conversationMutationResolvers: Pick<MutationResolvers, 'editPost' | 'pinPost' | 'unpinPost'> = {
  editPost: (_parent, { id, text }, context) => context.services.postEdits.editText(requireViewer(context), postKey(id), text, context.scope),
  pinPost: async (_parent, { id }, context) => {
    const viewerId = requireViewer(context);
    await context.services.conversations.pin(viewerId, postKey(id));
    return viewer(context, viewerId);
  },
  unpinPost: async (_parent, { id }, context) => {
    const viewerId = requireViewer(context);
    await context.services.conversations.unpin(viewerId, postKey(id));
    return viewer(context, viewerId);
  },
};

async function viewer(context: RequestContext, viewerId: string): Promise<UserRecord> {
  loadersOf(context).pins.clear(viewerId);
  const user = await context.loaders.users.load(viewerId);
  if (!user) throw badInput('Your account no longer exists');
  return user;
}
