import {
  getOperationAST,
  getVariableValues,
  GraphQLError,
  parse,
  specifiedRules,
  validate,
  type DocumentNode,
  type ExecutionArgs,
  type GraphQLFormattedError,
  type GraphQLSchema,
  type ValidationRule,
} from 'graphql';
import type { SubscribePayload } from 'graphql-ws';
import { parseOptions } from './requestLimits.js';

export type ErrorFormatter = (formatted: GraphQLFormattedError, error: unknown) => GraphQLFormattedError;

function withCode(error: GraphQLError, code: string): GraphQLError {
  return new GraphQLError(error.message, {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
    originalError: error.originalError,
    extensions: { ...error.extensions, code },
  });
}

/**
 * Parses, validates (with the same extra rules as HTTP, e.g. the depth limit) and checks the
 * variables of one graphql-ws operation, answering with the codes Apollo gives the same failures
 * over HTTP. graphql-ws's own path would close the whole connection on a syntax error.
 */
export function prepareOperation(
  schema: GraphQLSchema,
  payload: SubscribePayload,
  rules: readonly ValidationRule[],
  options: { hideSchemaDetails: boolean },
): ExecutionArgs | GraphQLError[] {
  let document: DocumentNode;
  try {
    document = parse(payload.query, parseOptions);
  } catch (error) {
    if (error instanceof GraphQLError) return [withCode(error, 'GRAPHQL_PARSE_FAILED')];
    throw error;
  }
  const invalid = validate(schema, document, [...specifiedRules, ...rules]);
  if (invalid.length > 0) {
    return invalid.map((error) =>
      withCode(options.hideSchemaDetails ? withoutSuggestions(error) : error, 'GRAPHQL_VALIDATION_FAILED'),
    );
  }
  const operationName = payload.operationName ?? undefined;
  const operation = getOperationAST(document, operationName);
  if (!operation) {
    const problem = operationName ? `Unknown operation named "${operationName}".` : 'Must provide operation name if query contains multiple operations.';
    return [new GraphQLError(problem, { extensions: { code: 'OPERATION_RESOLUTION_FAILURE' } })];
  }
  const variables = payload.variables ?? {};
  const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], variables);
  if (coerced.errors) return coerced.errors.map((error) => withCode(error, 'BAD_USER_INPUT'));
  return { schema, document, operationName, variableValues: variables };
}

/** As Apollo's hideSchemaDetailsFromClientErrors does over HTTP: no "Did you mean …?" hints. */
function withoutSuggestions(error: GraphQLError): GraphQLError {
  return new GraphQLError(error.message.replace(/ Did you mean .+\?$/, ''), {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    extensions: error.extensions,
  });
}

/**
 * Errors sent over graphql-ws get what Apollo gives them over HTTP: a code (INTERNAL_SERVER_ERROR
 * when nothing set one), then the shared formatter (domain codes, masking of internals).
 */
export function formatOperationErrors(errors: readonly GraphQLError[], format: ErrorFormatter): GraphQLFormattedError[] {
  return errors.map((error) => {
    const json = error.toJSON();
    // `http` tells Apollo the status of an HTTP response; a WebSocket message has none.
    const { http: _status, ...extensions } = json.extensions ?? {};
    const formatted = { ...json, extensions: { ...extensions, code: extensions.code ?? 'INTERNAL_SERVER_ERROR' } };
    // An error thrown by a subscription's source arrives wrapped without a path: look inside.
    return format(formatted, error.originalError ?? error);
  });
}
