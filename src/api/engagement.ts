import { Kind, type FragmentDefinitionNode, type GraphQLResolveInfo, type OperationDefinitionNode, type SelectionSetNode } from 'graphql';
import type { PostCounts, PostRecord } from '../records/posts.js';
import type { Loaders } from './loaders.js';

/**
 * What a page of posts can show beside each post: its counts, the viewer's like, repost and
 * bookmark, and the post it quotes.
 */
type EngagementKind = 'counts' | 'likes' | 'reposts' | 'bookmarks' | 'quoted';

const kindOfField: Record<string, EngagementKind> = {
  likeCount: 'counts',
  repostCount: 'counts',
  replyCount: 'counts',
  quoteCount: 'counts',
  quoted: 'quoted',
  viewerHasLiked: 'likes',
  viewerHasReposted: 'reposts',
  viewerHasBookmarked: 'bookmarks',
};

/**
 * The counts and viewer states a request has read for whole pages, by hex post id: a post's
 * field then answers at once, where a load per field cost a promise each (twenty posts, six
 * fields: a measurable share of the page people load).
 */
export interface KnownEngagement {
  counts: Map<string, PostCounts>;
  likes: Map<string, boolean>;
  reposts: Map<string, boolean>;
  bookmarks: Map<string, boolean>;
}

export const noEngagement = (): KnownEngagement => ({ counts: new Map(), likes: new Map(), reposts: new Map(), bookmarks: new Map() });

/** What an operation asks of posts anywhere in it, found once per operation. */
const askedByOperation = new WeakMap<OperationDefinitionNode, ReadonlySet<EngagementKind>>();

function askedKinds(info: Pick<GraphQLResolveInfo, 'operation' | 'fragments'>): ReadonlySet<EngagementKind> {
  let asked = askedByOperation.get(info.operation);
  if (!asked) {
    const found = new Set<EngagementKind>();
    collect(info.operation.selectionSet, info.fragments, found, new Set());
    asked = found;
    askedByOperation.set(info.operation, asked);
  }
  return asked;
}

function collect(selectionSet: SelectionSetNode, fragments: Record<string, FragmentDefinitionNode>, found: Set<EngagementKind>, visited: Set<string>): void {
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) {
      const kind = kindOfField[selection.name.value];
      if (kind) found.add(kind);
      if (selection.selectionSet) collect(selection.selectionSet, fragments, found, visited);
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      collect(selection.selectionSet, fragments, found, visited);
    } else if (!visited.has(selection.name.value)) {
      visited.add(selection.name.value);
      const fragment = fragments[selection.name.value];
      if (fragment) collect(fragment.selectionSet, fragments, found, visited);
    }
  }
}

/**
 * Reads, for every post of a page at once, what the operation asks of them: one batched load per
 * kind (each through the in-process tiers), kept in `known` for the posts' fields to answer from;
 * the quoted posts share the counts' load (primed into the request's loaders).
 */
export async function loadEngagement(
  known: KnownEngagement,
  loaders: Pick<Loaders, 'postCounts' | 'postsWithCounts' | 'viewerLikes' | 'viewerReposts' | 'viewerBookmarks'>,
  info: Pick<GraphQLResolveInfo, 'operation' | 'fragments'>,
  posts: readonly PostRecord[],
): Promise<void> {
  const asked = askedKinds(info);
  if (asked.size === 0 || posts.length === 0) return;
  const ids = posts.map((post) => post.id.toHexString());
  const states = async (kind: 'likes' | 'reposts' | 'bookmarks', loader: Loaders['viewerLikes']) => {
    if (!asked.has(kind)) return;
    const values = await loader.loadMany(ids);
    values.forEach((value, index) => typeof value === 'boolean' && known[kind].set(ids[index]!, value));
  };
  await Promise.all([
    countsAndQuoted(known, loaders, asked, posts),
    states('likes', loaders.viewerLikes),
    states('reposts', loaders.viewerReposts),
    states('bookmarks', loaders.viewerBookmarks),
  ]);
}

/**
 * The page's counts, and the posts it quotes: with quotes, both (and the quoted posts' own counts)
 * in one load, so the quoted posts cost no query of their own; without, the counts' batched load.
 */
async function countsAndQuoted(
  known: KnownEngagement,
  loaders: Pick<Loaders, 'postCounts' | 'postsWithCounts'>,
  asked: ReadonlySet<EngagementKind>,
  posts: readonly PostRecord[],
): Promise<void> {
  const quoted = asked.has('quoted') ? [...new Set(posts.flatMap((post) => (post.body.quoteOf ? [post.body.quoteOf.id.toHexString()] : [])))] : [];
  const missing = asked.has('counts') ? posts.filter((post) => post.counts === null).map((post) => post.id.toHexString()) : [];
  if (quoted.length > 0) {
    const counts = await loaders.postsWithCounts(quoted, asked.has('counts') ? [...new Set([...missing, ...quoted])] : []);
    for (const [id, value] of counts) known.counts.set(id, value);
    return;
  }
  const values = await loaders.postCounts.loadMany(missing);
  values.forEach((value, index) => !(value instanceof Error) && known.counts.set(missing[index]!, value));
}
