import type { FormattedExecutionResult } from 'graphql';
import { createClient, type Client, type ClientOptions } from 'graphql-ws';
import WebSocket from 'ws';
import type { TestApp } from '../support/testApp.js';

export const postAddedQuery = `
  subscription PostAdded {
    timelinePostAdded { cursor node { id text createdAt author { handle } } }
  }`;

export const postRemovedQuery = 'subscription PostRemoved { timelinePostRemoved }';

export interface PostEdge {
  cursor: string;
  /** Present when the subscription asks for it. */
  repostedBy?: { handle: string } | null;
  node: { id: string; text: string; createdAt: string; author: { handle: string } };
}

/** How the graphql-ws client reports a closed socket. */
export interface CloseEventLike {
  code: number;
  reason: string;
}

export function webSocketUrl(app: Pick<TestApp, 'url'>): string {
  return app.url.replace(/^http/, 'ws');
}

/** A real graphql-ws client, as browsers and GraphiQL use it, that does not retry. */
export function liveClient(app: Pick<TestApp, 'url'>, token: string | null, options: Partial<ClientOptions> = {}): Client {
  return createClient({
    url: webSocketUrl(app),
    webSocketImpl: WebSocket,
    connectionParams: token === null ? {} : { authorization: `Bearer ${token}` },
    retryAttempts: 0,
    ...options,
  });
}

/**
 * Clients opened for signed-up users of one app, remembered so a test file can dispose of all of
 * them at the end.
 */
export class LiveClients {
  private readonly open: Client[] = [];

  constructor(
    private readonly app: () => Pick<TestApp, 'url'>,
    private readonly tokens: Record<string, string>,
  ) {}

  connect(handle: string): Client {
    const client = liveClient(this.app(), this.tokens[handle]!);
    this.open.push(client);
    return client;
  }

  async disposeAll(): Promise<void> {
    await Promise.all(this.open.splice(0).map((client) => client.dispose()));
  }
}

/** One subscription's results as they arrive. */
export class Subscription<T> {
  readonly results: T[] = [];
  readonly arrivals: number[] = [];
  readonly errors: unknown[] = [];
  /** Settles when the server ends the subscription: with the error (or close event), or null when completed. */
  readonly ended: Promise<unknown>;
  private readonly unsubscribe: () => void;
  private wake: (() => void) | null = null;

  constructor(client: Client, query: string, field: string, variables?: Record<string, unknown>) {
    let end!: (value: unknown) => void;
    this.ended = new Promise((resolve) => (end = resolve));
    this.unsubscribe = client.subscribe<Record<string, T>>(
      { query, variables },
      {
        next: (result) => {
          if (result.errors) this.errors.push(...result.errors);
          if (result.data) {
            this.results.push(result.data[field]!);
            this.arrivals.push(performance.now());
          }
          this.wake?.();
        },
        error: (error) => {
          this.errors.push(error);
          end(error);
          this.wake?.();
        },
        complete: () => end(null),
      },
    );
  }

  /**
   * Resolves once `count` results have arrived; fails after `timeoutMs`, which is generous: a
   * busy machine delays results, and only a broken path needs the whole wait.
   */
  async waitFor(count: number, timeoutMs = 20_000): Promise<T[]> {
    const deadline = performance.now() + timeoutMs;
    while (this.results.length < count) {
      const left = deadline - performance.now();
      if (left <= 0) {
        throw new Error(`expected ${count} results within ${timeoutMs} ms, got ${this.results.length}: ${JSON.stringify(this.errors)}`);
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = null;
    }
    return this.results.slice(0, count);
  }

  stop(): void {
    this.unsubscribe();
  }
}

export function subscribePostAdded(client: Client, query = postAddedQuery): Subscription<PostEdge> {
  return new Subscription<PostEdge>(client, query, 'timelinePostAdded');
}

export function subscribePostRemoved(client: Client): Subscription<string> {
  return new Subscription<string>(client, postRemovedQuery, 'timelinePostRemoved');
}

/** Polls `condition` until it holds; fails after `timeoutMs` (generous, as for `waitFor`) with `what`. */
export async function eventually(condition: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Waits until `app` has `count` open timeline subscriptions: from then on no event is missed. */
export function subscriptionsOpen(app: TestApp, count: number): Promise<void> {
  return eventually(() => app.services.live.stats().subscriptions === count, `${count} subscriptions are open`);
}

export async function createPost(app: TestApp, token: string, text: string): Promise<{ id: string; createdAt: string }> {
  const result = await app.gql('mutation($text: String!) { createPost(text: $text) { id createdAt } }', { text }, token);
  if (!result.data) throw new Error(`createPost failed: ${JSON.stringify(result.errors)}`);
  return result.data.createPost;
}

export async function follow(app: TestApp, token: string, handle: string, unfollow = false): Promise<void> {
  const field = unfollow ? 'unfollow' : 'follow';
  const result = await app.gql(`mutation($h: String!) { ${field}(handle: $h) { handle } }`, { h: handle }, token);
  if (!result.data) throw new Error(`${field} failed: ${JSON.stringify(result.errors)}`);
}

/** The close event a client that connects with `connectionParams` gets from the server. */
export async function closeEventFor(app: TestApp, connectionParams: Record<string, unknown>): Promise<CloseEventLike> {
  const client = liveClient(app, null, { connectionParams });
  try {
    const subscription = subscribePostAdded(client);
    return (await subscription.ended) as CloseEventLike;
  } finally {
    await client.dispose();
  }
}

/** One operation over graphql-ws: what came as results, and what came as an `error` message. */
export function runOverWebSocket(
  client: Client,
  query: string,
  operationName?: string,
): Promise<{ results: FormattedExecutionResult<Record<string, unknown>, unknown>[]; errors: any[] }> {
  return new Promise((resolve) => {
    const results: FormattedExecutionResult<Record<string, unknown>, unknown>[] = [];
    client.subscribe(
      { query, ...(operationName === undefined ? {} : { operationName }) },
      {
        next: (result) => void results.push(result),
        error: (errors) => resolve({ results, errors: errors as any[] }),
        complete: () => resolve({ results, errors: [] }),
      },
    );
  });
}

