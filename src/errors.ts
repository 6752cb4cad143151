import { MongoBulkWriteError } from 'mongodb';

/**
 * Error codes a client can rely on. They travel as `extensions.code` in GraphQL errors,
 * so the services can reject input without knowing about GraphQL.
 */
export type ErrorCode =
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'BAD_USER_INPUT'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'RATE_LIMITED'
  /** An upload over MEDIA_MAX_BYTES or MEDIA_MAX_PIXELS (HTTP 413). */
  | 'PAYLOAD_TOO_LARGE'
  /** An upload that is no JPEG, PNG, WebP or GIF, whatever it is called (HTTP 415). */
  | 'UNSUPPORTED_MEDIA_TYPE'
  /**
   * A live notification subscription sent to an instance group that does not read the viewer's
   * events: `liveGroup` names the one that does (HTTP's 421 Misdirected Request).
   */
  | 'MISDIRECTED'
  /** MongoDB cannot be reached: nothing is wrong with the request, so retry it shortly (HTTP 503). */
  | 'SERVICE_UNAVAILABLE';

export class AppError extends Error {
  override name = 'AppError';
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** More for the client (e.g. `retryAfterSeconds`); `http` sets the status and headers of an HTTP response. */
    private readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }

  /** GraphQL copies an original error's extensions onto the error it reports. */
  get extensions(): Record<string, unknown> {
    return { code: this.code, ...this.details };
  }
}

export const badInput = (message: string) => new AppError('BAD_USER_INPUT', message);
export const notFound = (message: string) => new AppError('NOT_FOUND', message);
/** The one answer to a request that failed because the database is unreachable (see `isDatabaseUnavailable`). */
export const databaseUnavailable = () =>
  new AppError('SERVICE_UNAVAILABLE', 'The database is unavailable; try again shortly', { http: { status: 503 } });

/**
 * Thrown where a switch over a union has run out of cases: `value` is typed `never`, so adding a
 * kind to the union breaks the build at every switch that does not handle it yet.
 */
export class UnreachableCaseError extends Error {
  override name = 'UnreachableCaseError';
  constructor(value: never) {
    super(`Unreachable case: ${JSON.stringify(value)}`);
  }
}

/** MongoDB's duplicate-key error, raised by unique indexes (including `_id`). */
export function isDuplicateKeyError(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 11000;
}

/**
 * The failed operations of a write (a bulk write's write errors, each with its `index`, or the error
 * itself) when every one of them met an existing key, and null when any failed otherwise or the
 * error names none (a write concern error). An unordered bulk write applied all the others.
 */
export function duplicateKeyFailures(error: unknown): unknown[] | null {
  const failures = error instanceof MongoBulkWriteError ? [error.writeErrors].flat() : [error];
  return failures.length > 0 && failures.every(isDuplicateKeyError) ? failures : null;
}
