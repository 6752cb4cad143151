import type { GatewayExecutor, GatewayInterface } from '@apollo/server-gateway-interface';
import {
  execute,
  GraphQLError,
  printSchema,
  type DocumentNode,
  type ExecutionResult,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SourceLocation,
} from 'graphql';
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
 * The one exception is `answerDirectly`: a query Apollo has already accepted, sent again, whose
 * result has no errors, is answered without Apollo's pipeline (its plugins do not see it; the API's
 * own limit check runs before it).
 *
 * Answers are the same as graphql-js gives, errors included (test/api/compiledExecution.test.ts
 * compares the two): graphql-jit's errors are rebuilt as graphql-js builds them, and a request whose
 * variables do not coerce is left to graphql-js altogether.
 */
export function compiledExecution(schema: GraphQLSchema): CompiledExecution {
  // By text and the client's operation name, so that `answerDirectly` finds them before Apollo has hashed anything.
  const compiled = new LRUCache<string, CompiledOperation>({ max: maxCompiledOperations });
  // Compiling costs several times one execution (tens of milliseconds for a large document), so a
  // document sent once (GraphiQL exploration, a client flooding distinct documents) is interpreted.
  const seenOnce = new LRUCache<string, true>({ max: maxSeenOperations });

  const executor = compiledExecutor(schema, compiled, seenOnce);

  return {
    onSchemaLoadOrUpdate(callback) {
      callback({ apiSchema: schema, coreSupergraphSdl: printSchema(schema) });
      return () => {};
    },
    load: async () => ({ executor }),
    stop: async () => {},
    compiledOperations: () => compiled.size,
    validQuery(query, operationName) {
      const operation = compiled.get(operationKey(query, operationName));
      // Apollo always gives the operation it resolved; a caller of the bare executor may not.
      return operation?.definition?.operation === 'query' ? (operation as ValidQuery) : undefined;
    },

    async answerDirectly(query, context, variables) {
      let result: ExecutionResult;
      try {
        result = await query.compiled.query(undefined, context, variables);
      } catch (error) {
        (context as AlreadyRun)[alreadyRun] = () => Promise.reject(error);
        return null;
      }
      // The variables did not coerce: nothing ran, and Apollo's run reports it as it always does.
      if (result.data === undefined) return null;
      if (result.errors) {
        (context as AlreadyRun)[alreadyRun] = async () => result;
        return null;
      }
      // Byte for byte what Apollo sends for a result without errors (its prettyJSONStringify of { errors, data, extensions }).
      return `${JSON.stringify({ data: result.data })}\n`;
    },
  };
}

/**
 * Apollo's executor: runs an operation compiled by graphql-jit once it has been seen twice, and
 * interprets it with graphql-js before that (or when its variables do not coerce).
 */
function compiledExecutor(
  schema: GraphQLSchema,
  compiled: LRUCache<string, CompiledOperation>,
  seenOnce: LRUCache<string, true>,
): GatewayExecutor {
    return async ({ queryHash, operationName, document, operation: definition, source, context, request }) => {
      const ran = (context as AlreadyRun)[alreadyRun];
      if (ran) {
        delete (context as AlreadyRun)[alreadyRun];
        return asGraphqlJsResult(await ran(), document);
      }
      // The name the client sent: Apollo gives the resolved one, null when the client's names no
      // operation (it calls this anyway, for the error), and null would run the document's only one.
      const name = request.operationName ?? operationName;
      const variableValues = request.variables ?? {};
      const interpret = () => execute({ schema, document, contextValue: context, variableValues, operationName: name });
      // graphql-jit takes an empty name for none; graphql-js reports a name that resolves to nothing.
      if (!definition && request.operationName != null) return interpret();
      // Apollo always gives the source; a caller of the bare executor may give only the request's query.
      const key = operationKey(source ?? request.query ?? '', request.operationName);
      let operation = compiled.get(key);
      const seenKey = `${name ?? ''}:${queryHash}`;
      if (!operation && !seenOnce.has(seenKey)) {
        seenOnce.set(seenKey, true);
        return interpret();
      }
      if (!operation) {
        const result = compileQuery(schema, document, name ?? undefined);
        // Apollo validated the document already; what is left here (e.g. no such operation) is reported as graphql-js would.
        if (!isCompiledQuery(result)) return result;
        operation = { document, definition, compiled: result };
        compiled.set(key, operation);
      }
      const result = await operation.compiled.query(undefined, context, variableValues);
      // No data: the variables did not coerce and nothing ran. graphql-js reports that with the
      // variable's definition, by which Apollo answers BAD_USER_INPUT; so it reports it here too.
      if (result.data === undefined) return interpret();
      return asGraphqlJsResult(result, document);
    };
}

/** An operation Apollo has accepted: the same text always parses and validates the same. */
interface CompiledOperation {
  document: DocumentNode;
  definition: OperationDefinitionNode | undefined;
  compiled: CompiledQuery;
}

/** A compiled query operation, which `answerDirectly` may run. */
export interface ValidQuery extends CompiledOperation {
  definition: OperationDefinitionNode;
}

export interface CompiledExecution extends GatewayInterface {
  compiledOperations(): number;
  /** A query this process has compiled, by its text and operation name, if any. */
  validQuery(query: string, operationName: string | null | undefined): ValidQuery | undefined;
  /**
   * Runs a valid query for a request Apollo has not seen, and returns the response body when the
   * result has no errors, which is all Apollo's pipeline would do with it: its parse, validation,
   * negotiation and plugins cost about a sixth of a timeline page's CPU (docs/read-path.md).
   * Null otherwise: the caller then hands the request to Apollo with the same context, and this
   * executor gives Apollo what already ran instead of running it again, so errors, codes and status
   * are Apollo's own and nothing runs twice. Cost limits are the caller's to check first.
   */
  answerDirectly(query: ValidQuery, context: object, variables: Record<string, unknown>): Promise<string | null>;
}

/**
 * What `answerDirectly` ran and left to Apollo to answer, on the request's context. A property, not
 * a WeakMap entry: Apollo hands the executor a shallow copy of the context, which copies it.
 */
const alreadyRun = Symbol('alreadyRun');
type AlreadyRun = { [alreadyRun]?: () => Promise<ExecutionResult> };

/** Length-prefixed, so that no name (not even an empty one or one ending in the separator) shares a key with another. */
const operationKey = (query: string, operationName: string | null | undefined) =>
  operationName == null ? `-:${query}` : `${operationName.length}:${operationName}:${query}`;

function asGraphqlJsResult(result: ExecutionResult, document: DocumentNode): ExecutionResult {
  return result.errors ? { ...result, errors: result.errors.map((error) => asGraphqlJsError(error, document)) } : result;
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
