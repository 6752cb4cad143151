import { randomUUID } from 'node:crypto';

/** Visible ASCII only, 1 to 128 characters: what a proxy or a client library sends as a request id. */
const acceptedRequestId = /^[\x21-\x7e]{1,128}$/;

/**
 * The id of a request: the client's (or its proxy's) `X-Request-Id` when it is a plausible one,
 * otherwise a new one. Anything longer, or with spaces or control characters, is replaced, so a
 * client cannot write into log lines what it likes.
 */
export function requestIdFrom(header: string | string[] | undefined): string {
  return typeof header === 'string' && acceptedRequestId.test(header) ? header : randomUUID();
}
