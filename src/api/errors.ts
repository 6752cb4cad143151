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
    if (formatted.extensions?.code === 'INTERNAL_SERVER_ERROR') {
      options.log('Unexpected error while resolving a request', original);
      if (!options.isDevelopment) {
        return { message: 'Internal server error', path: formatted.path, extensions: { code: 'INTERNAL_SERVER_ERROR' } };
      }
    }
    return formatted;
  };
}
