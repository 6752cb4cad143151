/**
 * What a request's deep calls leave for its transport and its queued work, without being handed
 * the request: the origin stamped on the tasks it queues (its id, and its trace context, so that a
 * worker's log line names the request and its span joins the request's trace, in whichever process
 * the task runs), and the rate limit it counted against (for the RateLimit-* headers).
 *
 * The scope is an AsyncLocalStorage opened only around requests that can queue work or count
 * against a limit (mutations; every request while tracing is on, when the hooks run anyway): on
 * Node 20 its hooks slow every promise of the process while any scope is open (see tracing.ts),
 * and a warm timeline page must not pay for them. The hooks go off again as soon as no such
 * request is in flight. Tasks queued by a task (a post's sub-tasks) are given their parent's origin
 * by the code that queues them.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { activeTraceCarrier, type TraceCarrier } from './tracing.js';

export interface TaskOrigin extends TraceCarrier {
  requestId?: string;
}

/** A limit's state as the RateLimit-* headers tell it: its size, what is left, and when its window ends. */
export interface RateLimitState {
  limit: number;
  remaining: number;
  resetSeconds: number;
}

export interface RequestScope {
  requestId: string;
  /** The tightest limit the request counted against, if any. */
  rateLimit?: RateLimitState;
}

const scopes = new AsyncLocalStorage<RequestScope>();
let openScopes = 0;

/** Runs `work` in `scope`: what it queues carries the request id, and the limits it meets are noted there. */
export async function inRequestScope<T>(scope: RequestScope, work: () => Promise<T>): Promise<T> {
  openScopes += 1;
  try {
    return await scopes.run(scope, work);
  } finally {
    openScopes -= 1;
    // The last scope closed: Node's async hooks go off again until the next one opens.
    if (openScopes === 0) scopes.disable();
  }
}

const currentScope = (): RequestScope | undefined => (openScopes > 0 ? scopes.getStore() : undefined);

/** The origin of a task queued now: the request in whose scope this runs, and the active trace. */
export function currentOrigin(): TaskOrigin | undefined {
  const requestId = currentScope()?.requestId;
  const trace = activeTraceCarrier();
  if (requestId === undefined && trace === undefined) return undefined;
  return { ...(requestId === undefined ? {} : { requestId }), ...trace };
}

/** Records a limit the current request counted against; of several, the one with the least left is kept. */
export function noteRateLimit(state: RateLimitState): void {
  const scope = currentScope();
  if (scope && (!scope.rateLimit || state.remaining <= scope.rateLimit.remaining)) scope.rateLimit = state;
}

/** The limit the current request counted against, for its response headers. */
export function currentRateLimit(): RateLimitState | undefined {
  return currentScope()?.rateLimit;
}
