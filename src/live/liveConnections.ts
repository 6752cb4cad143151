/** What a subscription needs from the connection it runs on. */
export interface LiveClient {
  /** The handle of the account the connection authenticated as (see RequestContext.viewerId). */
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
    /** Whether the credentials the connection signed in with still speak for `viewerId`. */
    readonly stillAuthorized: () => Promise<boolean> = async () => true,
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
  private openSockets = 0;

  constructor(readonly maxPerUser: number) {}

  /** Null when the user already has `maxPerUser` connections here. */
  admit(
    viewerId: string,
    closeTransport: (code: number, reason: string) => void,
    stillAuthorized?: () => Promise<boolean>,
  ): LiveConnection | null {
    const mine = this.byUser.get(viewerId) ?? new Set<LiveConnection>();
    if (mine.size >= this.maxPerUser) return null;
    const connection = new LiveConnection(viewerId, closeTransport, stillAuthorized);
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

  /** The open connections of these users on this instance. */
  of(userIds: readonly string[]): LiveConnection[] {
    return userIds.flatMap((userId) => [...(this.byUser.get(userId) ?? [])]);
  }

  /** The transport reports every socket it holds, authenticated or not, from open to close. */
  socketOpened(): void {
    this.openSockets += 1;
  }

  socketClosed(): void {
    this.openSockets -= 1;
  }

  get sockets(): number {
    return this.openSockets;
  }
}
