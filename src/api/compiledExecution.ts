import type { GatewayExecutor, GatewayInterface } from '@apollo/server-gateway-interface';
import { printSchema, type GraphQLSchema } from 'graphql';
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
import { LRUCache } from 'lru-cache';

/** Distinct operations kept compiled; clients send a handful, and an attacker's variety only evicts. */
const maxCompiledOperations = 1000;

/**
 * Runs every HTTP operation as a function graphql-jit compiled from it once, instead of walking the
 * document for every response as graphql-js does. Apollo offers exactly one seam for replacing its
 * executor, the gateway interface, so this is a "gateway" that only ever serves `schema`: Apollo
 * still parses, validates (with the API's limit rules), runs every plugin and formats every error.
 *
 * graphql-jit reports a resolver's error with the thrower's `extensions`, as graphql-js does, so
 * error codes reach clients unchanged (the error and conformance suites run through this path).
 */
export function compiledExecution(schema: GraphQLSchema): GatewayInterface {
  const compiled = new LRUCache<string, CompiledQuery>({ max: maxCompiledOperations });
  const executor: GatewayExecutor = async ({ queryHash, operationName, document, context, request }) => {
    const key = `${operationName ?? ''}:${queryHash}`;
    let operation = compiled.get(key);
    if (!operation) {
      const result = compileQuery(schema, document, operationName ?? undefined);
      // Apollo validated the document already; what is left here (e.g. no such operation) is reported as graphql-js would.
      if (!isCompiledQuery(result)) return result;
      operation = result;
      compiled.set(key, operation);
    }
    return operation.query(undefined, context, request.variables ?? {});
  };
  return {
    onSchemaLoadOrUpdate(callback) {
      callback({ apiSchema: schema, coreSupergraphSdl: printSchema(schema) });
      return () => {};
    },
    load: async () => ({ executor }),
    stop: async () => {},
  };
}
