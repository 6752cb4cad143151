import { ApolloClient, ApolloLink, HttpLink, InMemoryCache, gql, type ObservableQuery } from '@apollo/client';
import { SetContextLink } from '@apollo/client/link/context';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import { getMainDefinition, relayStylePagination } from '@apollo/client/utilities';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws'; // Node only: browsers have their own WebSocket.

export interface TimelineEdge {
  cursor: string;
  node: { id: string; text: string; createdAt: string; author: { handle: string } };
}
export interface TimelineData {
  timeline: {
    edges: TimelineEdge[];
    pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
  };
}

export const TIMELINE = gql`
  query Timeline($first: Int, $after: String, $last: Int, $before: String) {
    timeline(first: $first, after: $after, last: $last, before: $before) {
      edges { cursor node { id text createdAt author { handle } } }
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    }
  }
`;
export const POST_ADDED = gql`
  subscription PostAdded { timelinePostAdded { cursor node { id text createdAt author { handle } } } }
`;

/** 4401 (no token, or not `Bearer`) and 4403 (invalid, expired or revoked): the same token would be refused again. */
export const isRefusedToken = (event: unknown) => [4401, 4403].includes((event as { code?: number } | null)?.code ?? 0);

/**
 * One client for a signed-in app: HTTP for queries and mutations, graphql-ws for subscriptions.
 * `token` reads the current token, so a reconnect sends the one the app holds then; a refused
 * token ends live updates at once (no retries with it) and calls `onSignedOut`.
 */
export function createFeedClient(url: string, token: () => string, onSignedOut?: () => void): ApolloClient {
  const authorization = () => ({ authorization: `Bearer ${token()}` });
  const http = new SetContextLink(({ headers }) => ({ headers: { ...headers, ...authorization() } })).concat(new HttpLink({ uri: url }));
  const ws = new GraphQLWsLink(
    createClient({
      url: url.replace(/^http/, 'ws'),
      connectionParams: authorization,
      shouldRetry: (event) => !isRefusedToken(event),
      on: { closed: (event) => void (isRefusedToken(event) && onSignedOut?.()) },
      webSocketImpl: WebSocket,
    }),
  );
  const isSubscription = ({ query }: ApolloLink.Operation) => {
    const definition = getMainDefinition(query);
    return definition.kind === 'OperationDefinition' && definition.operation === 'subscription';
  };
  return new ApolloClient({
    link: ApolloLink.split(isSubscription, ws, http),
    // One list per user, whatever the page arguments: relayStylePagination appends `after` pages
    // and prepends `before` pages.
    cache: new InMemoryCache({ typePolicies: { Query: { fields: { timeline: relayStylePagination() } } } }),
  });
}

/** The home timeline as one growing list: older pages, pull-to-refresh and live posts. */
export function watchTimeline(client: ApolloClient, pageSize = 20) {
  const query: ObservableQuery<TimelineData> = client.watchQuery<TimelineData>({ query: TIMELINE, variables: { first: pageSize } });
  return {
    query,
    /** The page below the oldest post shown. */
    loadOlder: (endCursor: string) => query.fetchMore({ variables: { after: endCursor } }),
    /**
     * The posts newer than the newest one shown. fetchMore keeps the query's own variables, so
     * `first` must be unset here: the API refuses `first` and `last` together.
     */
    refresh: (startCursor: string) => query.fetchMore({ variables: { first: undefined, last: pageSize, before: startCursor } }),
    /** Live posts on top, each once; startCursor follows them, so a later refresh asks only for newer posts. */
    followLive: () =>
      query.subscribeToMore<{ timelinePostAdded: TimelineEdge }>({
        document: POST_ADDED,
        updateQuery: (previous, { subscriptionData }) => {
          const edge = subscriptionData.data?.timelinePostAdded;
          const current = (previous as TimelineData).timeline;
          if (!edge || !current || current.edges.some((shown) => shown.cursor === edge.cursor)) return previous as TimelineData;
          return { timeline: { ...current, edges: [edge, ...current.edges], pageInfo: { ...current.pageInfo, startCursor: edge.cursor } } };
        },
      }),
  };
}
