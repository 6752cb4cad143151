import { createClient } from 'graphql-ws';
import WebSocket from 'ws'; // Node only: browsers have their own WebSocket.

/** A GraphQL error as the API sends it: `extensions.code` is stable, the message is for people. */
export class GraphQLRequestError extends Error {
  constructor(readonly errors: { message: string; extensions?: { code?: string } }[]) {
    super(errors.map((error) => error.message).join('; '));
  }
  get code(): string | undefined {
    return this.errors[0]?.extensions?.code;
  }
}

/** One operation over HTTP: a JSON POST, which CSRF prevention accepts as it is. */
export async function graphql<T>(url: string, query: string, variables: Record<string, unknown> = {}, token?: string): Promise<T> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json()) as { data?: T; errors?: GraphQLRequestError['errors'] };
  if (body.errors?.length) throw new GraphQLRequestError(body.errors);
  return body.data as T;
}

/** 4401 (no token, or not `Bearer`) and 4403 (invalid, expired or revoked): the same token would be refused again. */
export const isRefusedToken = (event: unknown) => [4401, 4403].includes((event as { code?: number } | null)?.code ?? 0);

/**
 * Live posts with graphql-ws alone: an async iterator of `timelinePostAdded` edges. `token` reads
 * the current token at each (re)connection; a refused one ends the iterator with the close event
 * at once, instead of after graphql-ws's retries with the same token.
 */
export function livePosts(url: string, token: () => string) {
  const client = createClient({
    url: url.replace(/^http/, 'ws'),
    connectionParams: () => ({ authorization: `Bearer ${token()}` }),
    shouldRetry: (event) => !isRefusedToken(event),
    webSocketImpl: WebSocket,
  });
  const events = client.iterate<{ timelinePostAdded: { cursor: string; node: { id: string; text: string } } }>({
    query: 'subscription { timelinePostAdded { cursor node { id text } } }',
  });
  return { events, close: () => client.dispose() };
}
