import type { IncomingMessage } from 'node:http';
import { GraphQLError } from 'graphql';
import { isDatabaseUnavailable } from '../db/connect.js';
import { AppError, databaseUnavailable } from '../errors.js';
import type { LiveClient } from '../live/liveConnections.js';
import type { ApiServices } from './apiServices.js';
import { noEngagement, type KnownEngagement } from './engagement.js';
import { createLoaders, type Loaders } from './loaders.js';
import type { RequestObservation } from './observedRequests.js';
import { noRequest, type Scope } from '../observability/requestScope.js';

export interface RequestContext {
  /**
   * The signed-in user's handle, or null: the key every collection names users by. It is not the
   * account's identity: a deleted account's handle can be taken again, and the account behind a
   * token is its `accountId`, which `authenticate` checks against the user under this handle on
   * every request (and every WebSocket connection), so a token never speaks for a later account.
   */
  viewerId: string | null;
  /** The signed-in account's id (the token's subject), for the request's log line; null without a viewer. */
  viewerAccountId: string | null;
  /**
   * Why the Authorization that was sent speaks for no one, said apart from "no token": `not-bearer`
   * when it is not `Bearer <token>`, `invalid` when the token is forged, expired, or its account is gone.
   */
  tokenProblem: 'not-bearer' | 'invalid' | null;
  services: ApiServices;
  loaders: Loaders;
  /** Counts and viewer states read for whole pages (see engagement.ts). */
  known: KnownEngagement;
  /** The graphql-ws connection an operation runs on; null over HTTP. */
  live: LiveClient | null;
  /** The client's address as this server sees it, for per-address rate limits. */
  clientAddress: string;
  /** Where the client reached this server (`http://host:port`), for the media URLs it is given; '' when unknown. */
  origin: string;
  /** What the request's log line and metrics say, filled in as the request learns it; null over WebSocket. */
  observation: RequestObservation | null;
  /**
   * The request as the services it calls see it (observability/requestScope.ts): the limit it
   * counted against, for its headers, and its id on the work it queues. Null over WebSocket.
   */
  scope: Scope;
}

/**
 * The handle an `Authorization` value speaks for: null without one, `not-bearer` when it is not
 * `Bearer <token>`, `invalid` for a token that is forged, expired, or names an account that no
 * longer exists.
 */
export type Authenticate = (authorization: unknown) => Promise<string | null | 'not-bearer' | 'invalid'>;

/** What every transport needs to run an operation: its context, from what the client sent. */
export type CreateContext = (authorization: unknown, live: LiveClient | null, clientAddress: string, origin?: string) => Promise<RequestContext>;

/** Contexts over these services. */
export function requestContexts(services: ApiServices): CreateContext {
  return (authorization, live, clientAddress, origin = '') => createRequestContext(services, authorization, live, clientAddress, origin);
}

/** Built per HTTP request or per subscription operation, so loaders never leak across requests. */
async function createRequestContext(
  services: ApiServices,
  authorization: unknown,
  live: LiveClient | null,
  clientAddress: string,
  origin: string,
): Promise<RequestContext> {
  const authenticated = await services.accounts.authenticateAccount(authorization).catch((error: unknown) => {
    // Apollo would answer a failed context with a 500: say what it is, as resolvers do.
    if (!isDatabaseUnavailable(error)) throw error;
    const unavailable = databaseUnavailable();
    throw new GraphQLError(unavailable.message, { originalError: unavailable, extensions: unavailable.extensions });
  });
  const tokenProblem = authenticated === 'invalid' || authenticated === 'not-bearer' ? authenticated : null;
  const account = typeof authenticated === 'object' ? authenticated : null;
  const viewerId = account?.handle ?? null;
  return { viewerId, viewerAccountId: account?.accountId ?? null, tokenProblem, services, loaders: createLoaders(services, viewerId), known: noEngagement(), live, clientAddress, origin, observation: null, scope: noRequest };
}

/** The answer to an Authorization header that holds a bare token or another scheme. */
export const notBearerMessage = 'Send the token as Authorization: Bearer <token> (the word Bearer, a space, then the token)';

/** The origin a request reached, as its Host header names it (MEDIA_PUBLIC_URL overrides it behind a proxy). */
export function requestOrigin(request: IncomingMessage): string {
  const host = request.headers.host;
  if (!host || !/^[A-Za-z0-9.\-:[\]]+$/.test(host)) return '';
  return `${'encrypted' in request.socket ? 'https' : 'http'}://${host}`;
}

export function requireViewer(context: RequestContext): string {
  if (context.tokenProblem === 'not-bearer') throw new AppError('UNAUTHENTICATED', notBearerMessage);
  if (context.tokenProblem === 'invalid') throw new AppError('UNAUTHENTICATED', 'The token is invalid or expired; sign in again');
  if (!context.viewerId) throw new AppError('UNAUTHENTICATED', 'Sign in first: send Authorization: Bearer <token>');
  return context.viewerId;
}
