import { Client, fetchExchange, gql, subscriptionExchange } from '@urql/core';
import { cacheExchange } from '@urql/exchange-graphcache';
import { relayPagination } from '@urql/exchange-graphcache/extras';
import { createClient as createWebSocketClient } from 'graphql-ws';
import WebSocket from 'ws'; // Node only: browsers have their own WebSocket.

export interface TimelineEdge {
  cursor: string;
  node: { id: string; text: string; author: { id: string; handle: string } };
}
export interface TimelineConnection {
  edges: TimelineEdge[];
  pageInfo: { hasNextPage: boolean; startCursor: string | null; endCursor: string | null };
}

export const TIMELINE = gql`
  query Timeline($first: Int, $after: String, $last: Int, $before: String) {
    timeline(first: $first, after: $after, last: $last, before: $before) {
      edges { cursor node { id text author { id handle } } }
      pageInfo { hasNextPage startCursor endCursor }
    }
  }
`;
export const POST_ADDED = gql`
  subscription PostAdded { timelinePostAdded { cursor node { id text author { id handle } } } }
`;

/** 4401 (no token, or not `Bearer`) and 4403 (invalid, expired or revoked): the same token would be refused again. */
export const isRefusedToken = (event: unknown) => [4401, 4403].includes((event as { code?: number } | null)?.code ?? 0);

/**
 * The same Client works with the React bindings: `<Provider value={client}>` from 'urql'. `token`
 * reads the current token; a refused one ends live updates at once and calls `onSignedOut`.
 */
export function createFeedClient(url: string, token: () => string, onSignedOut?: () => void): Client {
  const authorization = () => ({ authorization: `Bearer ${token()}` });
  const webSocket = createWebSocketClient({
    url: url.replace(/^http/, 'ws'),
    connectionParams: authorization,
    shouldRetry: (event) => !isRefusedToken(event),
    on: { closed: (event) => void (isRefusedToken(event) && onSignedOut?.()) },
    webSocketImpl: WebSocket,
  });
  return new Client({
    url,
    // urql sends queries as GET by default, and the API's CSRF prevention answers a GET that has
    // neither a JSON content type nor an `apollo-require-preflight` header with 400. POST them
    // (or keep GET and add `'apollo-require-preflight': 'true'` to the headers).
    preferGetMethod: false,
    fetchOptions: () => ({ headers: authorization() }),
    exchanges: [
      cacheExchange({
        // Every page of the timeline is one list. `mergeMode: 'outwards'` puts `after` pages below
        // and `before` pages (a refresh) on top; the default, 'inwards', puts a refresh below the
        // oldest post.
        resolvers: { Query: { timeline: relayPagination({ mergeMode: 'outwards' }) } },
        // Pages, edges and page info have no identity of their own: they live inside the query.
        keys: { PostConnection: () => null, PostEdge: () => null, PageInfo: () => null },
      }),
      fetchExchange,
      subscriptionExchange({
        forwardSubscription: (request) => ({
          subscribe: (sink) => ({ unsubscribe: webSocket.subscribe({ ...request, query: request.query ?? '' }, sink) }),
        }),
      }),
    ],
  });
}

/**
 * The home timeline as one growing list: `older()` below, `newer()` on top (pull to refresh), and
 * each live post's arrival a `newer()`: the cache merges every page, so a post is shown once
 * however it arrived.
 */
export function watchTimeline(client: Client, pageSize = 20) {
  let shown: TimelineConnection | null = null;
  const read = async (variables: Record<string, unknown>): Promise<TimelineConnection> => {
    const result = await client.query(TIMELINE, variables).toPromise();
    if (result.error) throw result.error;
    shown = result.data.timeline as TimelineConnection;
    return shown;
  };
  const newer = () => read({ last: pageSize, before: shown?.pageInfo.startCursor });
  return {
    first: () => read({ first: pageSize }),
    older: () => read({ first: pageSize, after: shown?.pageInfo.endCursor }),
    newer,
    followLive: () => client.subscription(POST_ADDED, {}).subscribe(() => void newer()),
  };
}
