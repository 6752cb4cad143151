/**
 * How the reference web client talks to the API: one Apollo Client per signed-in session (HTTP for
 * queries and mutations, graphql-ws for live updates), its cache, and what its errors say.
 * The operations themselves are in operations.ts.
 *
 * Every operation goes out as its trusted document (gql/persisted-documents.json, which codegen
 * writes from operations.ts): by its hash first, and as the manifest's text, with that hash, when
 * the server does not know it yet. A server that runs only trusted documents runs these; any
 * other server registers them as automatic persisted queries.
 */
import { ApolloClient, ApolloLink, HttpLink, InMemoryCache } from '@apollo/client';
import { CombinedGraphQLErrors } from '@apollo/client/errors';
import { ErrorLink } from '@apollo/client/link/error';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import { getMainDefinition, relayStylePagination } from '@apollo/client/utilities';
import type { ASTNode, DefinitionNode } from 'graphql';
import { createClient, type Client as WsClient } from 'graphql-ws';
import * as generated from './gql/graphql.js';
import manifest from './gql/persisted-documents.json' with { type: 'json' };
import type { Connection, Edge } from './operations.js';

/** Operation name → its trusted document's id (`sha256:<hex>`), as codegen stamped it on each document. */
const documentIds = new Map(
  Object.values(generated).flatMap((value) => {
    const document = value as { __meta__?: { hash?: string }; definitions?: readonly DefinitionNode[] } | null;
    const operation = document?.definitions?.find((definition) => definition.kind === 'OperationDefinition');
    return document?.__meta__?.hash && operation?.name ? [[operation.name.value, document.__meta__.hash] as const] : [];
  }),
);
const trustedTexts: Record<string, string> = manifest;

/** The id of the operation a document holds: Apollo's own transforms drop codegen's stamp, not the name. */
function documentIdOf(document: ASTNode): string | undefined {
  if (document.kind !== 'Document') return undefined;
  const operation = document.definitions.find((definition) => definition.kind === 'OperationDefinition');
  return operation?.name ? documentIds.get(operation.name.value) : undefined;
}

/** The APQ extension naming a trusted document. */
const persistedQuery = (id: string) => ({ version: 1, sha256Hash: id.slice('sha256:'.length) });

/** graphql-ws sends each operation as its trusted document's text, with its hash. */
function sendingTrustedDocuments(client: WsClient): WsClient {
  return {
    ...client,
    subscribe: (payload, sink) => {
      const id = payload.operationName ? documentIds.get(payload.operationName) : undefined;
      const trusted = id === undefined ? payload : { ...payload, query: trustedTexts[id]!, extensions: { ...payload.extensions, persistedQuery: persistedQuery(id) } };
      return client.subscribe(trusted, sink);
    },
  };
}

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
  /** Uploads an image for this session's account (POST /media beside /graphql), telling how much has gone. */
  upload(file: Blob, onProgress: (fraction: number) => void): { done: Promise<UploadedImage>; cancel: () => void };
}

/** An upload as POST /media answers it. */
export interface UploadedImage {
  id: string;
  alt: string | null;
  width: number;
  height: number;
}

/** A refused upload, with the API's message and code (PAYLOAD_TOO_LARGE, UNSUPPORTED_MEDIA_TYPE, RATE_LIMITED …). */
export class UploadError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

/**
 * POST /media with XMLHttpRequest, which reports how much of the body has gone (fetch cannot):
 * what a progress bar needs.
 */
function uploadWithProgress(apiUrl: string, authorization: string, file: Blob, onProgress: (fraction: number) => void) {
  const request = new XMLHttpRequest();
  const done = new Promise<UploadedImage>((resolve, reject) => {
    const form = new FormData();
    form.append('file', file);
    request.open('POST', new URL('/media', apiUrl));
    request.setRequestHeader('Authorization', authorization);
    request.responseType = 'json';
    request.upload.onprogress = (event) => {
      if (event.lengthComputable) onProgress(event.loaded / event.total);
    };
    request.onload = () => {
      if (request.status === 201) return resolve(request.response as UploadedImage);
      const error = (request.response as { errors?: { message: string; extensions?: { code?: string } }[] } | null)?.errors?.[0];
      reject(new UploadError(error?.message ?? `The upload failed (${request.status})`, error?.extensions?.code ?? 'UNKNOWN'));
    };
    request.onerror = () => reject(new UploadError('The upload failed: the network connection was lost', 'NETWORK'));
    request.onabort = () => reject(new UploadError('Upload cancelled', 'CANCELLED'));
    request.send(form);
  });
  return { done, cancel: () => request.abort() };
}

/**
 * HTTP that names each operation by its trusted document's hash, and sends the manifest's text
 * (the very text that hash is of) when the server asks for it.
 */
function trustedHttp(apiUrl: string, headers: Record<string, string> = {}): ApolloLink {
  const byHash = new PersistedQueryLink({
    generateHash: (document) => {
      const id = documentIdOf(document);
      if (id === undefined) throw new Error('An operation of no trusted document: run `npm run codegen`');
      return persistedQuery(id).sha256Hash;
    },
  });
  const http = new HttpLink({
    uri: apiUrl,
    headers,
    print: (document, print) => {
      const id = documentIdOf(document);
      return id === undefined ? print(document) : trustedTexts[id]!;
    },
  });
  return byHash.concat(http);
}

/** Signing in needs no token: a small client without one. */
export function anonymousClient(apiUrl: string): ApolloClient {
  return new ApolloClient({ link: trustedHttp(apiUrl), cache: new InMemoryCache() });
}

/**
 * One client per signed-in session: its links carry that session's token. `onSignedOut` runs when
 * the API says the token is no longer good (expired, forged, or the account is gone).
 */
export function createSession(apiUrl: string, token: string, onSignedOut: () => void): Session {
  const authorization = `Bearer ${token}`;
  let signedOutOnce = false;
  const signOut = () => {
    if (signedOutOnce) return;
    signedOutOnce = true;
    onSignedOut();
  };
  const signedOut = new ErrorLink(({ error }) => {
    if (CombinedGraphQLErrors.is(error) && error.errors.some((e) => e.extensions?.code === 'UNAUTHENTICATED')) signOut();
  });
  const http = trustedHttp(apiUrl, { authorization });
  const ws = createClient({
    url: apiUrl.replace(/^http/, 'ws'),
    // Read at every (re)connection: a session holds one token, so a refused one ends the session.
    connectionParams: () => ({ authorization }),
    // 4401/4403: the server refused the token, and the same token would be refused again; the
    // session ends at once instead of after graphql-ws's retries. Anything else is worth retrying.
    shouldRetry: (event) => !isRefusedToken(event),
    retryAttempts: 20,
    on: {
      closed: (event) => {
        if (isRefusedToken(event)) signOut();
      },
    },
  });
  const link = ApolloLink.split(
    ({ query }) => {
      const definition = getMainDefinition(query);
      return definition.kind === 'OperationDefinition' && definition.operation === 'subscription';
    },
    new GraphQLWsLink(sendingTrustedDocuments(ws)),
    signedOut.concat(http),
  );
  const cache = new InMemoryCache({
    typePolicies: {
      Query: {
        fields: {
          timeline: relayStylePagination(),
          notifications: relayStylePagination(['kinds']),
          tagTimeline: relayStylePagination(['tag']),
          searchPosts: relayStylePagination(['query']),
        },
      },
      User: { fields: { posts: relayStylePagination(), bookmarks: relayStylePagination() } },
      Post: { fields: { replies: relayStylePagination(), descendants: relayStylePagination() } },
      List: { fields: { timeline: relayStylePagination(), members: relayStylePagination() } },
    },
  });
  return { client: new ApolloClient({ link, cache }), ws, upload: (file, onProgress) => uploadWithProgress(apiUrl, authorization, file, onProgress) };
}

/** Close codes that are final for a token: 4401 (none, or not `Bearer`) and 4403 (invalid, expired or revoked). */
function isRefusedToken(event: unknown): boolean {
  const code = (event as { code?: unknown } | null | undefined)?.code;
  return code === 4401 || code === 4403;
}

/**
 * Puts edges on top of a cached page of posts, each once, and moves `pageInfo.startCursor` onto the
 * newest: relayStylePagination gives the first edge the cursor of `startCursor` when it reads the
 * list, so a stale one would make the next Refresh fetch these posts again.
 */
export function withEdgesOnTop<C extends Connection>(connection: C, newest: readonly Edge[]): C {
  const shown = new Set(connection.edges.map((edge) => edge.cursor));
  const added = newest.filter((edge) => !shown.has(edge.cursor));
  if (!added.length) return connection;
  const edges = [...added, ...connection.edges];
  return { ...connection, edges, pageInfo: { ...connection.pageInfo, startCursor: edges[0]!.cursor } };
}

export function withoutPost<C extends Connection>(connection: C, id: string): C {
  return { ...connection, edges: connection.edges.filter((edge) => edge.node.id !== id) };
}
