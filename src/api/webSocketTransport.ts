import type { GraphQLSchema, ValidationRule } from 'graphql';
import { getOperationAST, GraphQLError, type ExecutionArgs } from 'graphql';
import type { Context, Disposable, SubscribePayload } from 'graphql-ws';
import { useServer, type Extra } from 'graphql-ws/use/ws';
import type { WebSocket, WebSocketServer } from 'ws';
import type { Config } from '../config.js';
import type { LiveConnection, LiveConnections } from '../live/liveConnections.js';
import { closeReasons, LiveCloseCode } from '../live/protocol.js';
import { requestOrigin, type Authenticate, type CreateContext } from './context.js';
import { formatOperationErrors, prepareOperation, type ErrorFormatter } from './operations.js';
import type { DocumentGate } from './persistedDocuments.js';
import { checkOperation } from './requestLimits.js';

export interface LiveTransportOptions {
  schema: GraphQLSchema;
  /** Who a connection's `authorization` speaks for, checked once at connection_init. */
  authenticate: Authenticate;
  /** The context of each operation, which knows its connection. */
  createContext: CreateContext;
  /** The live core's connection rules: per-user limits, and the sockets it counts. */
  connections: LiveConnections;
  config: Pick<Config, 'isDevelopment' | 'isProduction' | 'limits' | 'live'>;
  formatError: ErrorFormatter;
  /** Validation rules on top of graphql's own, as for HTTP (the depth limit). */
  validationRules: readonly ValidationRule[];
  /** Which documents run, as over HTTP: a trusted one may be named by its hash instead of sent. */
  documents: DocumentGate;
}

/** A stalled client never reads our close frame: after this, drop it instead of waiting ws's 30 s. */
const closeGraceMs = 5000;

/** Closes with a code and reason the client will see if it still reads; terminates it otherwise. */
export function closeSocket(socket: WebSocket, code: number, reason: string): void {
  if (socket.readyState !== socket.OPEN) return;
  socket.close(code, reason);
  const timer = setTimeout(() => socket.terminate(), closeGraceMs);
  socket.once('close', () => clearTimeout(timer));
}

type ConnectionParams = Record<string, unknown>;
type LiveContext = Context<ConnectionParams, Extra>;

/**
 * The WebSocket adapter of the live core: it only turns sockets into calls on the core and on the
 * same GraphQL pipeline as HTTP. graphql-ws (protocol graphql-transport-ws) on `webSocketServer`: authentication at
 * connection_init, the connection and subscription limits, the same validation and error codes as
 * HTTP, and a fresh request context per operation that knows its connection.
 */
export function serveLiveUpdates(webSocketServer: WebSocketServer, options: LiveTransportOptions): Disposable {
  const { schema, authenticate, createContext, config, formatError, validationRules } = options;
  const rules = options.connections;
  const connections = new WeakMap<LiveContext, LiveConnection>();
  webSocketServer.on('connection', (socket) => {
    rules.socketOpened();
    socket.once('close', () => rules.socketClosed());
  });

  const reject = (socket: WebSocket, code: number, reason: string): false => {
    closeSocket(socket, code, reason);
    return false; // graphql-ws then closes with 4403 too, which ws ignores on a closing socket
  };

  return useServer<ConnectionParams>(
    {
      schema,
      isProd: !config.isDevelopment,
      connectionInitWaitTimeout: config.live.connectionInitTimeoutMs,
      onConnect: async (ctx) => {
        const { socket } = ctx.extra;
        const authorization = ctx.connectionParams?.authorization;
        if (authorization === undefined || authorization === null || authorization === '') {
          return reject(socket, LiveCloseCode.Unauthorized, closeReasons.unauthorized);
        }
        const viewerId = await authenticate(authorization);
        // A bare token is final (4401: the same params would fail again); a refused one may be renewed (4403).
        if (viewerId === 'not-bearer') return reject(socket, LiveCloseCode.Unauthorized, closeReasons.notBearer);
        if (viewerId === null || viewerId === 'invalid') return reject(socket, LiveCloseCode.Forbidden, closeReasons.forbidden);
        // Closed while the token was checked: onClose has run already, so it must not be counted.
        if (socket.readyState !== socket.OPEN) return false;
        const connection = rules.admit(
          viewerId,
          (code, reason) => closeSocket(socket, code, reason),
          async () => (await authenticate(authorization)) === viewerId,
        );
        if (!connection) {
          return reject(socket, LiveCloseCode.TooManyRequests, closeReasons.tooManyConnections(rules.maxPerUser));
        }
        connections.set(ctx, connection);
        // A revocation announced between the check above and `admit` found no connection to close.
        void connection.stillAuthorized().then(
          (authorized) => authorized || connection.close(LiveCloseCode.Forbidden, closeReasons.revoked),
          () => {},
        );
        return true;
      },
      onSubscribe: (ctx, _id, payload) => checkSubscription(ctx, payload, connections.get(ctx), options),
      context: (ctx) =>
        createContext(
          ctx.connectionParams?.authorization,
          connections.get(ctx) ?? null,
          ctx.extra.request.socket.remoteAddress ?? 'unknown',
          requestOrigin(ctx.extra.request),
        ),
      onNext: (_ctx, _id, _payload, _args, result) =>
        result.errors ? { ...result, errors: formatOperationErrors(result.errors, formatError) } : undefined,
      onError: (_ctx, _id, _payload, errors) => formatOperationErrors(errors, formatError),
      onClose: (ctx) => {
        const connection = connections.get(ctx);
        if (!connection) return;
        connections.delete(ctx);
        rules.release(connection);
      },
    },
    webSocketServer,
  );
}

/**
 * Each operation on a connection: within the subscription limit (over it, the connection closes),
 * then parsed, validated and costed as over HTTP.
 */
function checkSubscription(
  ctx: LiveContext,
  payload: SubscribePayload,
  connection: LiveConnection | undefined,
  options: LiveTransportOptions,
): ExecutionArgs | GraphQLError[] {
  const { schema, config, validationRules } = options;
  const limit = config.live.maxSubscriptionsPerConnection;
  // graphql-ws has already entered this operation in ctx.subscriptions.
  if (Object.keys(ctx.subscriptions).length > limit) {
    const reason = closeReasons.tooManySubscriptions(limit);
    if (connection) connection.close(LiveCloseCode.TooManyRequests, reason);
    else closeSocket(ctx.extra.socket, LiveCloseCode.TooManyRequests, reason);
    return [new GraphQLError(reason, { extensions: { code: 'TOO_MANY_SUBSCRIPTIONS' } })];
  }
  const admitted = options.documents.admit(payload);
  if (admitted.refused) return [new GraphQLError(admitted.refused.message, { extensions: { code: admitted.refused.code } })];
  const prepared = prepareOperation(schema, admitted.body as SubscribePayload, validationRules, { hideSchemaDetails: config.isProduction });
  if (Array.isArray(prepared)) return prepared;
  const operation = getOperationAST(prepared.document, prepared.operationName);
  const refusal =
    operation && checkOperation(schema, prepared.document, operation, payload.variables ?? {}, { signedIn: true, limits: config.limits });
  return refusal ? [refusal] : prepared;
}
