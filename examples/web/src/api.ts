/**
 * How the reference web client talks to the API: one Apollo Client per signed-in session (HTTP for
 * queries and mutations, graphql-ws for the live timeline), the operations it sends and the shapes
 * it reads back.
 */
import { ApolloClient, ApolloLink, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { CombinedGraphQLErrors } from '@apollo/client/errors';
import { ErrorLink } from '@apollo/client/link/error';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import { getMainDefinition, relayStylePagination } from '@apollo/client/utilities';
import { createClient, type Client as WsClient } from 'graphql-ws';

export interface Author {
  id: string;
  handle: string;
  displayName: string | null;
}
export interface Post {
  id: string;
  text: string;
  createdAt: string;
  likeCount: number;
  repostCount: number;
  replyCount: number;
  viewerHasLiked: boolean;
  viewerHasReposted: boolean;
  author: Author;
  replyTo: { id: string; author: Author } | null;
}
export interface Edge {
  cursor: string;
  repostedBy?: Author | null;
  node: Post;
}
export interface PageInfo {
  hasNextPage: boolean;
  hasPreviousPage: boolean;
  startCursor: string | null;
  endCursor: string | null;
}
export interface Connection {
  edges: Edge[];
  pageInfo: PageInfo;
}
export interface TimelineData {
  timeline: Connection;
}
export interface Profile extends Author {
  followerCount: number;
  followingCount: number;
  viewerIsFollowing: boolean;
  viewerHasMuted: boolean;
  viewerHasBlocked: boolean;
  posts: Connection;
}
export interface ThreadPost extends Post {
  replyTo: (Post & { replyTo: Post['replyTo'] }) | null;
  replies: Connection;
}

const AUTHOR = gql`
  fragment AuthorFields on User { id handle displayName }
`;
export const POST_FIELDS = gql`
  fragment PostFields on Post {
    id
    text
    createdAt
    likeCount
    repostCount
    replyCount
    viewerHasLiked
    viewerHasReposted
    author { id handle displayName }
    replyTo { id author { id handle displayName } }
  }
`;
const PAGE_INFO = 'pageInfo { hasNextPage hasPreviousPage startCursor endCursor }';

export const VIEWER = gql`query Viewer { viewer { ...AuthorFields } } ${AUTHOR}`;
export const TIMELINE = gql`
  query Timeline($first: Int, $after: String, $last: Int, $before: String) {
    timeline(first: $first, after: $after, last: $last, before: $before) {
      edges { cursor repostedBy { id handle displayName } node { ...PostFields } }
      ${PAGE_INFO}
    }
  }
  ${POST_FIELDS}
`;
export const PROFILE = gql`
  query Profile($handle: String!, $first: Int, $after: String) {
    user(handle: $handle) {
      ...AuthorFields
      followerCount
      followingCount
      viewerIsFollowing
      viewerHasMuted
      viewerHasBlocked
      posts(first: $first, after: $after) { edges { cursor node { ...PostFields } } ${PAGE_INFO} }
    }
  }
  ${POST_FIELDS}
  ${AUTHOR}
`;
export const THREAD = gql`
  query Thread($id: ID!, $first: Int, $after: String) {
    post(id: $id) {
      ...PostFields
      replyTo { id text createdAt likeCount repostCount replyCount viewerHasLiked viewerHasReposted author { id handle displayName } }
      replies(first: $first, after: $after) { edges { cursor node { ...PostFields } } ${PAGE_INFO} }
    }
  }
  ${POST_FIELDS}
`;
export const FILTERS = gql`query Filters { viewer { id keywordFilters { id phrase } } }`;

export const POST_ADDED = gql`
  subscription PostAdded { timelinePostAdded { cursor repostedBy { id handle displayName } node { ...PostFields } } }
  ${POST_FIELDS}
`;
export const POST_REMOVED = gql`subscription PostRemoved { timelinePostRemoved }`;

export const SIGN_UP = gql`
  mutation SignUp($handle: String!, $password: String!, $displayName: String) {
    signUp(handle: $handle, password: $password, displayName: $displayName) { token user { ...AuthorFields } }
  }
  ${AUTHOR}
`;
export const LOG_IN = gql`
  mutation LogIn($handle: String!, $password: String!) { logIn(handle: $handle, password: $password) { token user { ...AuthorFields } } }
  ${AUTHOR}
`;
export const CREATE_POST = gql`
  mutation CreatePost($text: String!, $replyTo: ID) {
    createPost(text: $text, replyTo: $replyTo) { ...PostFields replyTo { id replyCount } }
  }
  ${POST_FIELDS}
`;
export const DELETE_POST = gql`mutation DeletePost($id: ID!) { deletePost(id: $id) }`;
const COUNTS = 'id likeCount viewerHasLiked repostCount viewerHasReposted';
export const LIKE = gql`mutation Like($id: ID!) { likePost(id: $id) { ${COUNTS} } }`;
export const UNLIKE = gql`mutation Unlike($id: ID!) { unlikePost(id: $id) { ${COUNTS} } }`;
export const REPOST = gql`mutation Repost($id: ID!) { repost(id: $id) { ${COUNTS} } }`;
export const UNDO_REPOST = gql`mutation UndoRepost($id: ID!) { undoRepost(id: $id) { ${COUNTS} } }`;
const RELATION = 'id handle followerCount followingCount viewerIsFollowing viewerHasMuted viewerHasBlocked';
export const RELATIONS = {
  follow: gql`mutation Follow($handle: String!) { follow(handle: $handle) { ${RELATION} } }`,
  unfollow: gql`mutation Unfollow($handle: String!) { unfollow(handle: $handle) { ${RELATION} } }`,
  mute: gql`mutation Mute($handle: String!) { mute(handle: $handle) { ${RELATION} } }`,
  unmute: gql`mutation Unmute($handle: String!) { unmute(handle: $handle) { ${RELATION} } }`,
  block: gql`mutation Block($handle: String!) { block(handle: $handle) { ${RELATION} } }`,
  unblock: gql`mutation Unblock($handle: String!) { unblock(handle: $handle) { ${RELATION} } }`,
};
export const ADD_FILTER = gql`mutation AddFilter($phrase: String!) { addKeywordFilter(phrase: $phrase) { id phrase } }`;
export const REMOVE_FILTER = gql`mutation RemoveFilter($id: ID!) { removeKeywordFilter(id: $id) }`;

/** The first error's code (`extensions.code`), if the API answered with one. */
export function errorCode(error: unknown): string | undefined {
  if (CombinedGraphQLErrors.is(error)) return error.errors[0]?.extensions?.code as string | undefined;
  return undefined;
}

/** What to show a person: the API's message, or a plain word about the network. */
export function errorMessage(error: unknown): string {
  if (CombinedGraphQLErrors.is(error)) return error.errors.map((e) => e.message).join('; ');
  if (error instanceof TypeError || (error instanceof Error && /fetch|network/i.test(error.message))) {
    return 'Cannot reach the server. Check your connection and try again.';
  }
  return error instanceof Error ? error.message : String(error);
}

export interface Session {
  client: ApolloClient;
  ws: WsClient;
}

/** Signing in needs no token: a small client without one. */
export function anonymousClient(apiUrl: string): ApolloClient {
  return new ApolloClient({ link: new HttpLink({ uri: apiUrl }), cache: new InMemoryCache() });
}

/**
 * One client per signed-in session: its links carry that session's token. `onSignedOut` runs when
 * the API says the token is no longer good (expired, forged, or the account is gone).
 */
export function createSession(apiUrl: string, token: string, onSignedOut: () => void): Session {
  const authorization = `Bearer ${token}`;
  const signedOut = new ErrorLink(({ error }) => {
    if (CombinedGraphQLErrors.is(error) && error.errors.some((e) => e.extensions?.code === 'UNAUTHENTICATED')) onSignedOut();
  });
  const http = new HttpLink({ uri: apiUrl, headers: { authorization } });
  const ws = createClient({
    url: apiUrl.replace(/^http/, 'ws'),
    connectionParams: { authorization },
    // 4401/4403: the server refused the token; anything else is worth retrying.
    shouldRetry: (event) => !(event && typeof event === 'object' && 'code' in event && (event.code === 4401 || event.code === 4403)),
    retryAttempts: 20,
    on: {
      closed: (event) => {
        const code = (event as CloseEvent | undefined)?.code;
        if (code === 4401 || code === 4403) onSignedOut();
      },
    },
  });
  const link = ApolloLink.split(
    ({ query }) => {
      const definition = getMainDefinition(query);
      return definition.kind === 'OperationDefinition' && definition.operation === 'subscription';
    },
    new GraphQLWsLink(ws),
    signedOut.concat(http),
  );
  const cache = new InMemoryCache({
    typePolicies: {
      Query: { fields: { timeline: relayStylePagination() } },
      User: { fields: { posts: relayStylePagination() } },
      Post: { fields: { replies: relayStylePagination() } },
    },
  });
  return { client: new ApolloClient({ link, cache }), ws };
}

/**
 * Puts edges on top of the cached timeline, each once, and moves `pageInfo.startCursor` onto the
 * newest: relayStylePagination gives the first edge the cursor of `startCursor` when it reads the
 * list, so a stale one would make the next Refresh fetch these posts again.
 */
export function withEdgesOnTop(data: TimelineData, newest: readonly Edge[]): TimelineData {
  const current = data.timeline;
  const shown = new Set(current.edges.map((edge) => edge.cursor));
  const added = newest.filter((edge) => !shown.has(edge.cursor));
  if (!added.length) return data;
  const edges = [...added, ...current.edges];
  return { timeline: { ...current, edges, pageInfo: { ...current.pageInfo, startCursor: edges[0]!.cursor } } };
}

export function withoutPost(data: TimelineData, id: string): TimelineData {
  return { timeline: { ...data.timeline, edges: data.timeline.edges.filter((edge) => edge.node.id !== id) } };
}
