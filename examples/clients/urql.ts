import { Client, fetchExchange, gql, subscriptionExchange } from '@urql/core';
import { createClient as createWebSocketClient } from 'graphql-ws';
import WebSocket from 'ws'; // Node only: browsers have their own WebSocket.

export interface TimelineEdge {
  cursor: string;
  node: { id: string; text: string; author: { handle: string } };
}

export const TIMELINE = gql`
  query Timeline($first: Int, $after: String, $last: Int, $before: String) {
    timeline(first: $first, after: $after, last: $last, before: $before) {
      edges { cursor node { id text author { handle } } }
      pageInfo { hasNextPage startCursor endCursor }
    }
  }
`;
export const POST_ADDED = gql`
  subscription PostAdded { timelinePostAdded { cursor node { id text author { handle } } } }
`;

/** The same Client works with the React bindings: `<Provider value={client}>` from 'urql'. */
export function createFeedClient(url: string, token: string): Client {
  const authorization = `Bearer ${token}`;
  const webSocket = createWebSocketClient({ url: url.replace(/^http/, 'ws'), connectionParams: { authorization }, webSocketImpl: WebSocket });
  return new Client({
    url,
    // urql sends queries as GET by default, and the API's CSRF prevention answers a GET that has
    // neither a JSON content type nor an `apollo-require-preflight` header with 400. POST them
    // (or keep GET and add `'apollo-require-preflight': 'true'` to the headers).
    preferGetMethod: false,
    fetchOptions: { headers: { authorization } },
    exchanges: [
      fetchExchange,
      subscriptionExchange({
        forwardSubscription: (request) => ({
          subscribe: (sink) => ({ unsubscribe: webSocket.subscribe({ ...request, query: request.query ?? '' }, sink) }),
        }),
      }),
    ],
  });
}

/** Adds a live edge on top unless that post is already shown. */
export function withLiveEdge(edges: readonly TimelineEdge[], edge: TimelineEdge): TimelineEdge[] {
  return edges.some((shown) => shown.cursor === edge.cursor) ? [...edges] : [edge, ...edges];
}
