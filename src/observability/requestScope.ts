/**
 * What a request leaves for its transport and its queued work: the origin stamped on the tasks it
 * queues (its id, and its trace context, so that a worker's log line names the request and its
 * span joins the request's trace, in whichever process the task runs), and the rate limit it
 * counted against (for the RateLimit-* headers).
 *
 * The scope is handed down explicitly, from the GraphQL context to the services that count a limit
 * or queue work, never found through AsyncLocalStorage: on Node 20 its hooks slow every promise of
 * the process while any scope is open, and under a mix of writes and reads one is open nearly all
 * the time (docs/write-path.md measures it). Work with no request behind it (a worker's, a sweep's)
 * passes `noRequest`; tasks queued by a task carry their parent's origin on the task itself.
 */
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

/** What work done for no request passes where a request's scope goes. */
export const noRequest = null;

/** A request's scope, or `noRequest`. */
export type Scope = RequestScope | typeof noRequest;

/** The origin of a task queued now for `scope`: its request, and the active trace (when tracing is on). */
export function originOf(scope: Scope): TaskOrigin | undefined {
  const trace = activeTraceCarrier();
  if (scope === null && trace === undefined) return undefined;
  return { ...(scope === null ? {} : { requestId: scope.requestId }), ...trace };
}

/** Records a limit the request counted against; of several, the one with the least left is kept. */
export function noteRateLimit(scope: Scope, state: RateLimitState): void {
  if (scope && (!scope.rateLimit || state.remaining <= scope.rateLimit.remaining)) scope.rateLimit = state;
}
