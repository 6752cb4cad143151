import { unwrapResolverError } from '@apollo/server/errors';
import type { GraphQLFormattedError } from 'graphql';
import { isDatabaseUnavailable } from '../db/connect.js';
import { AppError, databaseUnavailable } from '../errors.js';

export type ErrorLogger = (message: string, error: unknown) => void;

/**
 * Domain errors become GraphQL errors with their stable code. Anything unexpected is logged and,
 * outside development, masked: clients get a code, never internals.
 */
export function createErrorFormatter(options: { isDevelopment: boolean; log: ErrorLogger }) {
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const original = unwrapResolverError(error);
    if (isDatabaseUnavailable(original)) {
      const unavailable = databaseUnavailable();
      return { message: unavailable.message, path: formatted.path, extensions: { code: unavailable.code } };
    }
    if (original instanceof AppError) {
      return { ...formatted, message: original.message, extensions: { ...formatted.extensions, code: original.code } };
    }
    if (formatted.extensions?.code === 'INTERNAL_SERVER_ERROR' && isRefusedRequest(original)) {
      // Apollo refuses some requests with a 4xx status and no code; the request was wrong, not the server.
      return { message: formatted.message, extensions: { code: 'BAD_REQUEST' } };
    }
    if (formatted.extensions?.code === 'INTERNAL_SERVER_ERROR') {
      options.log('Unexpected error while resolving a request', original);
      if (!options.isDevelopment) {
        return { message: 'Internal server error', path: formatted.path, extensions: { code: 'INTERNAL_SERVER_ERROR' } };
      }
    }
    return formatted;
  };
}

/** An error Apollo raised for the request itself, answered with a 4xx status. */
function isRefusedRequest(error: unknown): boolean {
  const status = (error as { extensions?: { http?: { status?: unknown } } } | null)?.extensions?.http?.status;
  return typeof status === 'number' && status >= 400 && status < 500;
}
