/**
 * The live API's protocol constants: WebSocket close codes and the reasons sent with them. No I/O,
 * so the transport-free core and the WebSocket adapter both import it, and it imports neither.
 */
import { CloseCode } from 'graphql-ws';

/**
 * WebSocket close codes the live API uses. The first four are graphql-ws's own; the graphql-ws
 * client treats 4401 and 4429 as final and retries after 4403, 4408 and 4413.
 */
export const LiveCloseCode = {
  /** No `authorization` in `connectionParams`, or one that is not `Bearer <token>`. */
  Unauthorized: CloseCode.Unauthorized,
  /** The token is invalid or expired (a retry with a fresh token can succeed). */
  Forbidden: CloseCode.Forbidden,
  /** No `connection_init` within LIVE_CONNECTION_INIT_TIMEOUT_MS (sent by graphql-ws itself). */
  ConnectionInitialisationTimeout: CloseCode.ConnectionInitialisationTimeout,
  /** Too many connections for one user, or too many subscriptions on one connection. */
  TooManyRequests: 4429,
  /** The client fell LIVE_MAX_QUEUED_EVENTS events behind: reconnect, then refresh the timeline. */
  ClientTooSlow: 4413,
} as const;

export const closeReasons = {
  unauthorized: 'Unauthorized: send connectionParams { authorization: "Bearer <token>" }',
  notBearer: 'Unauthorized: send the token as connectionParams { authorization: "Bearer <token>" }',
  forbidden: 'Forbidden: the token is invalid or expired; sign in again',
  revoked: 'Forbidden: the token no longer works (password changed, logged out everywhere, or account deleted); sign in again',
  tooManyConnections: (limit: number) => `Too many live connections for this user (at most ${limit})`,
  tooManySubscriptions: (limit: number) => `Too many subscriptions on this connection (at most ${limit})`,
  clientTooSlow: 'Client is too slow; reconnect and refresh the timeline',
} as const;
