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
  tooManyConnections: (limit: number) => `Too many live connections for this user (at most ${limit})`,
  tooManySubscriptions: (limit: number) => `Too many subscriptions on this connection (at most ${limit})`,
  clientTooSlow: 'Client is too slow; reconnect and refresh the timeline',
} as const;

/** What a subscription needs from the connection it runs on. */
export interface LiveClient {
  readonly viewerId: string;
  /** Closes the whole connection with a code and reason the client sees. */
  close(code: number, reason: string): void;
  /**
   * Ends `subscription` when the connection closes (at once if it already is). Returns the
   * function that forgets it, for when the subscription ends first.
   */
  track(subscription: { end(): void }): () => void;
}

/** One authenticated graphql-ws connection. */
export class LiveConnection implements LiveClient {
  private readonly subscriptions = new Set<{ end(): void }>();
  private closing = false;

  constructor(
    readonly viewerId: string,
    private readonly closeTransport: (code: number, reason: string) => void,
  ) {}

  close(code: number, reason: string): void {
    if (this.closing) return;
    this.closed();
    this.closeTransport(code, reason);
  }

  /** The transport is gone (or going): end what still runs on it. */
  closed(): void {
    this.closing = true;
    const subscriptions = [...this.subscriptions];
    this.subscriptions.clear();
    for (const subscription of subscriptions) subscription.end();
  }

  track(subscription: { end(): void }): () => void {
    if (this.closing) {
      subscription.end();
      return () => {};
    }
    this.subscriptions.add(subscription);
    return () => void this.subscriptions.delete(subscription);
  }

  get subscriptionCount(): number {
    return this.subscriptions.size;
  }
}

/** The authenticated connections of one server instance, with the per-user limit. */
export class LiveConnections {
  private readonly byUser = new Map<string, Set<LiveConnection>>();
  private count = 0;

  constructor(readonly maxPerUser: number) {}

  /** Null when the user already has `maxPerUser` connections here. */
  admit(viewerId: string, closeTransport: (code: number, reason: string) => void): LiveConnection | null {
    const mine = this.byUser.get(viewerId) ?? new Set<LiveConnection>();
    if (mine.size >= this.maxPerUser) return null;
    const connection = new LiveConnection(viewerId, closeTransport);
    mine.add(connection);
    this.byUser.set(viewerId, mine);
    this.count += 1;
    return connection;
  }

  release(connection: LiveConnection): void {
    connection.closed();
    const mine = this.byUser.get(connection.viewerId);
    if (!mine?.delete(connection)) return;
    this.count -= 1;
    if (mine.size === 0) this.byUser.delete(connection.viewerId);
  }

  get size(): number {
    return this.count;
  }
}
