import type { GatewayExecutor, GatewayInterface } from '@apollo/server-gateway-interface';
import { execute, GraphQLError, printSchema, type DocumentNode, type GraphQLSchema, type SourceLocation } from 'graphql';
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
import { LRUCache } from 'lru-cache';

/** Distinct operations kept compiled; clients send a handful, and an attacker's variety only evicts. */
const maxCompiledOperations = 1000;
/** Operations remembered as seen once; only a second request of the same one pays for compiling it. */
const maxSeenOperations = 10 * maxCompiledOperations;

/**
 * Runs every HTTP operation as a function graphql-jit compiled from it once, instead of walking the
 * document for every response as graphql-js does. Apollo offers exactly one seam for replacing its
 * executor, the gateway interface, so this is a "gateway" that only ever serves `schema`: Apollo
 * still parses, validates (with the API's limit rules), runs every plugin and formats every error.
 *
 * Answers are the same as graphql-js gives, errors included (test/api/compiledExecution.test.ts
 * compares the two): graphql-jit's errors are rebuilt as graphql-js builds them, and a request whose
 * variables do not coerce is left to graphql-js altogether.
 */
export function compiledExecution(schema: GraphQLSchema): GatewayInterface & { compiledOperations(): number } {
  const compiled = new LRUCache<string, CompiledQuery>({ max: maxCompiledOperations });
  // Compiling costs several times one execution (tens of milliseconds for a large document), so a
  // document sent once (GraphiQL exploration, a client flooding distinct documents) is interpreted.
  const seenOnce = new LRUCache<string, true>({ max: maxSeenOperations });
  const executor: GatewayExecutor = async ({ queryHash, operationName, document, context, request }) => {
    const key = `${operationName ?? ''}:${queryHash}`;
    const variableValues = request.variables ?? {};
    const interpret = () => execute({ schema, document, contextValue: context, variableValues, operationName });
    let operation = compiled.get(key);
    if (!operation && !seenOnce.has(key)) {
      seenOnce.set(key, true);
      return interpret();
    }
    if (!operation) {
      const result = compileQuery(schema, document, operationName ?? undefined);
      // Apollo validated the document already; what is left here (e.g. no such operation) is reported as graphql-js would.
      if (!isCompiledQuery(result)) return result;
      operation = result;
      compiled.set(key, operation);
    }
    const result = await operation.query(undefined, context, variableValues);
    // No data: the variables did not coerce and nothing ran. graphql-js reports that with the
    // variable's definition, by which Apollo answers BAD_USER_INPUT; so it reports it here too.
    if (result.data === undefined) return interpret();
    return result.errors ? { ...result, errors: result.errors.map((error) => asGraphqlJsError(error, document)) } : result;
  };
  return {
    onSchemaLoadOrUpdate(callback) {
      callback({ apiSchema: schema, coreSupergraphSdl: printSchema(schema) });
      return () => {};
    },
    load: async () => ({ executor }),
    stop: async () => {},
    compiledOperations: () => compiled.size,
  };
}

/**
 * graphql-jit's errors carry no `extensions` unless the thrown error had some, where graphql-js
 * always gives an object; Apollo's formatting reads `extensions.code` and would fail on them (a
 * database outage then answered 500 instead of SERVICE_UNAVAILABLE). The same error as graphql-js
 * builds it: message, locations (as positions in the source), path, original error.
 */
function asGraphqlJsError(error: GraphQLError, document: DocumentNode): GraphQLError {
  const source = document.loc?.source;
  return new GraphQLError(error.message, {
    source,
    positions: source && error.locations?.map((location) => positionOf(source.body, location)),
    path: error.path,
    originalError: error.originalError,
    extensions: error.extensions,
  });
}

/** The character offset of a 1-based line and column, with GraphQL's line terminators (\r\n, \n, \r). */
function positionOf(body: string, { line, column }: SourceLocation): number {
  let offset = 0;
  for (let current = 1; current < line; current++) {
    const end = body.slice(offset).search(/\r\n|[\n\r]/);
    if (end < 0) break;
    offset += end + (body.startsWith('\r\n', offset + end) ? 2 : 1);
  }
  return offset + column - 1;
}
