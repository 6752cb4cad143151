/**
 * api/ owns every transport and the GraphQL layer over the services: HTTP (Express and Apollo),
 * the direct POST path (graphqlPost.ts), the WebSocket adapter of the live core
 * (webSocketTransport.ts), the resolvers, request limits and error formatting. Each transport
 * takes narrow dependencies (ApiDependencies); nothing below api/ imports it.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginCacheControlDisabled, ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { ApolloServerPluginDrainHttpServer } from '@apollo/server/plugin/drainHttpServer';
import { expressMiddleware } from '@as-integrations/express5';
import express, { type ErrorRequestHandler, type Express, type Request, type RequestHandler, type Response } from 'express';
import cors from 'cors';
import type { DocumentNode, GraphQLSchema, OperationDefinitionNode, ValidationRule } from 'graphql';
import { WebSocketServer } from 'ws';
import { rateLimitHeaders } from '../auth/rateLimits.js';
import type { Config } from '../config.js';
import type { LiveConnections } from '../live/liveConnections.js';
import type { Logger } from '../logger.js';
import { answerEndpoint, type Readiness } from '../observability/endpoints.js';
import { compiledExecution } from './compiledExecution.js';
import { requestOrigin, type Authenticate, type CreateContext, type RequestContext } from './context.js';
import { createErrorFormatter } from './errors.js';
import { graphiqlPage } from './graphiql.js';
import { graphqlPostHandler, transportError, type PlainRequest } from './graphqlPost.js';
import { observationOf, observedRequests, operationLabels } from './observedRequests.js';
import { originPolicy } from './origins.js';
import { documentGate, loadManifests, refusalBody, type DocumentGate } from './persistedDocuments.js';
import { checkOperation, limitRules, parseOptions } from './requestLimits.js';
import { buildSchema } from './schema.js';
import { serveLiveUpdates } from './webSocketTransport.js';
import { mediaRoutes, type MediaRouteDependencies } from './mediaRoutes.js';

export const graphqlPath = '/graphql';

export interface ApiServer {
  httpServer: Server;
  /** Drains HTTP and WebSocket clients, then stops Apollo. */
  stop(): Promise<void>;
}

/** What the transports need, and nothing more: the services reach resolvers through the context. */
export interface ApiDependencies {
  createContext: CreateContext;
  /** For connection_init on WebSockets; HTTP authenticates in `createContext`. */
  authenticate: Authenticate;
  /** The live core's connection rules, for the WebSocket adapter. */
  liveConnections: LiveConnections;
  /** For /readyz (and /healthz): whether this instance should get traffic. */
  readiness(): Promise<Readiness>;
  /** Uploads and signed image URLs (mediaRoutes.ts). */
  media: MediaRouteDependencies;
}

/** HTTP and WebSocket transport: POST/GET /graphql, GraphiQL for browsers, /livez, /readyz, /healthz, /metrics. */
export async function createApiServer(dependencies: ApiDependencies, config: Config, logger: Logger): Promise<ApiServer> {
  const schema = buildSchema();
  const app = express();
  // Outside production, /metrics is on the API's own port unless METRICS_PORT gives it one; in
  // production only there, so that the public port never shows it.
  const endpoints = { readiness: dependencies.readiness, metrics: config.observability.metricsPort === null && !config.isProduction };
  // JSON POSTs to /graphql skip Express (graphqlPost.ts) once Apollo has started; until then, and for everything else, Express answers.
  let servedDirectly: (request: IncomingMessage, response: ServerResponse) => boolean = () => false;
  const httpServer = timedHttpServer(
    config.requestTimeoutSeconds,
    observedRequests(logger, (request, response) => {
      if (!answerEndpoint(request, response, endpoints) && !servedDirectly(request, response)) void app(request, response);
    }),
  );
  const formatError = createErrorFormatter({ isDevelopment: config.isDevelopment, log: logger.error });

  const validationRules = limitRules(config.limits);
  const documents = documentGate(await loadManifests(config.documents.trustedManifests), { trustedOnly: config.documents.trustedOnly });

  const allowedOrigin = originPolicy({ allowed: config.corsOrigins, allowLocalhost: !config.isProduction });
  const webSocketCleanup = serveLiveUpdates(webSocketsOn(httpServer, config.maxBodyBytes, allowedOrigin), {
    schema,
    authenticate: dependencies.authenticate,
    createContext: dependencies.createContext,
    connections: dependencies.liveConnections,
    config,
    formatError,
    validationRules,
    documents,
  });

  // Cost and mutation limits need the variables and the viewer: checked once the operation is known, before it runs.
  const refusal = (document: DocumentNode, operation: OperationDefinitionNode, variables: Record<string, unknown>, context: RequestContext) =>
    checkOperation(schema, document, operation, variables, { signedIn: context.viewerId !== null, limits: config.limits });
  const compiled = config.compiledExecution ? compiledExecution(schema) : null;
  // Once the server starts to stop, every request goes through Apollo, which knows what to refuse then.
  let answeringDirectly = compiled !== null;

  const apollo = createApollo({
    schema,
    compiled,
    formatError,
    validationRules,
    config,
    httpServer,
    refusal,
    documents,
    onDrain: async () => {
      answeringDirectly = false;
      await webSocketCleanup.dispose();
    },
  });
  await apollo.start();

  const context = async (request: IncomingMessage) => {
    const observation = observationOf(request) ?? null;
    if (observation) observation.graphql = true;
    try {
      const created = await dependencies.createContext(request.headers.authorization, null, request.socket.remoteAddress ?? 'unknown', requestOrigin(request));
      if (observation) observation.accountId = created.viewerAccountId;
      // What the request's services note for its answer and stamp on the work it queues.
      return { ...created, observation, scope: observation ? { requestId: observation.id } : null };
    } catch (error) {
      if (observation) observation.errorCode = codeOf(error) ?? 'INTERNAL_SERVER_ERROR';
      throw error;
    }
  };
  routeRequests(app, { apollo, config, allowedOrigin, context, documents, media: mediaRoutes(dependencies.media, logger) });
  const direct = compiled ? directAnswers(compiled, refusal, () => answeringDirectly) : undefined;
  servedDirectly = graphqlPostHandler(apollo, {
    path: graphqlPath,
    maxBodyBytes: config.maxBodyBytes,
    allowedOrigin,
    context,
    documents,
    direct,
  });

  return {
    httpServer,
    stop: () => apollo.stop(),
  };
}

type Refusal = (document: DocumentNode, operation: OperationDefinitionNode, variables: Record<string, unknown>, context: RequestContext) => Error | null;

/** Node checks these timeouts every `connectionsCheckingInterval`: a client trickling its headers
 * or body is cut after REQUEST_TIMEOUT_SECONDS, not after Node's default five minutes. */
function timedHttpServer(requestTimeoutSeconds: number, handle: (request: IncomingMessage, response: ServerResponse) => void): Server {
  const requestTimeoutMs = requestTimeoutSeconds * 1000;
  return createServer(
    { requestTimeout: requestTimeoutMs, headersTimeout: requestTimeoutMs, connectionsCheckingInterval: Math.min(1000, requestTimeoutMs) },
    handle,
  );
}

/** Apollo over the schema (or its compiled gateway), refusing what the limits refuse, drained with the HTTP server. */
function createApollo(options: {
  schema: GraphQLSchema;
  compiled: ReturnType<typeof compiledExecution> | null;
  formatError: ReturnType<typeof createErrorFormatter>;
  validationRules: ValidationRule[];
  config: Config;
  httpServer: Server;
  refusal: Refusal;
  documents: DocumentGate;
  onDrain: () => Promise<void>;
}): ApolloServer<RequestContext> {
  const { schema, compiled, formatError, validationRules, config, httpServer, refusal, documents, onDrain } = options;
  return new ApolloServer<RequestContext>({
    ...(compiled ? { gateway: compiled } : { schema }),
    formatError,
    // main.ts decides when to stop (after SHUTDOWN_DELAY_SECONDS of /readyz saying 503), not Apollo on the signal.
    stopOnTerminationSignals: false,
    includeStacktraceInErrorResponses: config.isDevelopment,
    // No "Did you mean …?" in production: error messages must not describe the schema.
    hideSchemaDetailsFromClientErrors: config.isProduction,
    validationRules,
    parseOptions,
    // Automatic persisted queries are kept per instance (Apollo's in-memory cache): a hash another
    // instance registered is PERSISTED_QUERY_NOT_FOUND here, and the client sends the text again.
    // Where only trusted documents run, nothing may register one.
    persistedQueries: documents.open ? {} : false,
    plugins: [
      // In-flight requests get until the shutdown timeout; the process exits then anyway.
      ApolloServerPluginDrainHttpServer({ httpServer, stopGracePeriodMillis: config.shutdown.timeoutMs }),
      ApolloServerPluginLandingPageDisabled(),
      // The API sets no cache hints; the plugin would still wrap every field resolver (measured in
      // docs/read-path.md) and undo much of what compiled execution saves.
      ApolloServerPluginCacheControlDisabled(),
      {
        serverWillStart: async () => ({
          drainServer: onDrain,
        }),
      },
      {
        requestDidStart: async () => ({
          didResolveOperation: async ({ document, operation, request, contextValue }) => {
            if (!operation) return; // Apollo answers that itself
            if (contextValue.observation) contextValue.observation.operation = operationLabels(document, operation);
            const refused = refusal(document, operation, request.variables ?? {}, contextValue);
            if (refused) throw refused;
          },
          willSendResponse: async ({ response, contextValue }) => {
            // Every answer of a request that counted against a limit says where the client stands.
            const limit = contextValue.scope?.rateLimit;
            if (limit) for (const [name, value] of rateLimitHeaders(limit)) response.http.headers.set(name, value);
            const errors = response.body.kind === 'single' ? response.body.singleResult.errors : undefined;
            if (contextValue.observation && errors?.length) contextValue.observation.errorCode = codeOf(errors[0]) ?? 'INTERNAL_SERVER_ERROR';
          },
        }),
      },
    ],
  });
}

/** Express's routes: CORS, media, GraphiQL for browsers, and GraphQL through Apollo. */
function routeRequests(
  app: Express,
  options: {
    apollo: ApolloServer<RequestContext>;
    config: Config;
    allowedOrigin: (origin: string | undefined) => boolean;
    context: (request: IncomingMessage) => Promise<RequestContext>;
    documents: DocumentGate;
    media: (request: IncomingMessage, response: ServerResponse) => boolean;
  },
): void {
  const { apollo, config, allowedOrigin, context, documents, media } = options;
  app.disable('x-powered-by');
  // Hashing every GraphQL response for an ETag costs CPU per page, and no client revalidates a
  // POST; GraphiQL's page sets its own.
  app.set('etag', false);
  // Preflights from allowed origins are answered here, before Apollo's CSRF check, which still
  // refuses simple (non-preflighted) requests that could come from any page.
  app.use(cors({ origin: (origin, answer) => answer(null, allowedOrigin(origin)), maxAge: 600 }));
  // Uploads and image URLs, after CORS so a browser client may upload from its own origin.
  app.use((request, response, next) => {
    if (!media(request, response)) next();
  });
  if (config.graphiql) {
    const graphiql = servedPage(graphiqlPage({ endpoint: graphqlPath, title: 'Feed API' }));
    // Every browser navigation gets the IDE, also with ?query=… (a reload, a bookmark, a shared
    // link): GraphiQL reads the query from the address itself. Other GETs are GraphQL requests.
    app.get(graphqlPath, (request, response, next) => {
      const wantsPage = request.accepts(['application/json', 'application/graphql-response+json', 'text/html']) === 'text/html';
      if (wantsPage) graphiql(request, response);
      else next();
    });
  }
  app.use(
    graphqlPath,
    express.json({ limit: config.maxBodyBytes }),
    admittedDocuments(documents),
    expressMiddleware(apollo, { context: ({ req }) => context(req) }),
  );
  app.use(transportErrors);
}

/**
 * The document gate on Express's path: a POST's parsed body, or a GET's `query`, `documentId` and
 * `extensions` parameters, rewritten in place to the document that runs, or refused with 400.
 */
function admittedDocuments(documents: DocumentGate): RequestHandler {
  return (request, response, next) => {
    if (request.method !== 'GET') {
      const admitted = documents.admit(request.body);
      if (admitted.refused) return void response.status(400).json(refusalBody(admitted));
      request.body = admitted.body;
      return next();
    }
    const url = new URL(request.url, 'http://localhost');
    const parameters = url.searchParams;
    let extensions: unknown;
    try {
      extensions = JSON.parse(parameters.get('extensions') ?? 'null');
    } catch {
      return next(); // Apollo answers a malformed parameter
    }
    const asked = { query: parameters.get('query') ?? undefined, documentId: parameters.get('documentId') ?? undefined, extensions };
    const admitted = documents.admit(asked);
    if (admitted.refused) return void response.status(400).json(refusalBody(admitted));
    if (admitted.body !== asked) {
      const run = admitted.body as { query: string; extensions?: unknown };
      parameters.set('query', run.query);
      parameters.delete('documentId');
      if (run.extensions === undefined) parameters.delete('extensions');
      else parameters.set('extensions', JSON.stringify(run.extensions));
      request.url = `${url.pathname}?${parameters}`;
    }
    next();
  };
}

/** The WebSocket server on /graphql, for the live adapter. */
function webSocketsOn(httpServer: Server, maxPayload: number, allowedOrigin: (origin: string | undefined) => boolean): WebSocketServer {
  return new WebSocketServer({
    server: httpServer,
    path: graphqlPath,
    maxPayload,
    // Browsers send Origin with every WebSocket and enforce no CORS on it: the server must.
    verifyClient: ({ origin }: { origin?: string }) => allowedOrigin(origin),
  });
}

/**
 * A query Apollo has already validated and compiled, within its limits, is run without Apollo's
 * pipeline; whatever is not a clean result is still answered by Apollo (compiledExecution.ts).
 */
function directAnswers(compiled: ReturnType<typeof compiledExecution>, refusal: Refusal, answering: () => boolean) {
  return async ({ query, operationName, variables }: PlainRequest, contextValue: RequestContext) => {
    const valid = answering() ? compiled.validQuery(query, operationName) : undefined;
    if (!valid || refusal(valid.document, valid.definition, variables, contextValue)) return null;
    const answer = await compiled.answerDirectly(valid, contextValue, variables);
    // Apollo's plugins never see what is answered here: the request's metrics and log line are told directly.
    if (answer !== null && contextValue.observation) contextValue.observation.operation = operationLabels(valid.document, valid.definition);
    return answer;
  };
}

/** The `extensions.code` of a GraphQL error (thrown or formatted), if it has one. */
function codeOf(error: unknown): string | undefined {
  const code = (error as { extensions?: { code?: unknown } } | null)?.extensions?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * A large static page, compressed once at start: gzip when the browser takes it, an ETag so a
 * reload costs a 304, and a day of caching (the page changes only with a new release).
 */
function servedPage(html: string): (request: Request, response: Response) => void {
  const body = Buffer.from(html);
  const gzipped = gzipSync(body);
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  return (request, response) => {
    response.setHeader('ETag', etag);
    response.setHeader('Cache-Control', 'public, max-age=86400');
    response.setHeader('Vary', 'Accept-Encoding, Accept');
    if (request.headers['if-none-match'] === etag) {
      response.status(304).end();
      return;
    }
    response.type('html');
    if (request.acceptsEncodings('gzip') === 'gzip') {
      response.setHeader('Content-Encoding', 'gzip');
      response.send(gzipped);
    } else {
      response.send(body);
    }
  };
}

/** Body-parser failures (too large, not JSON) answered in GraphQL's error shape, never as HTML. */
const transportErrors: ErrorRequestHandler = (error: { status?: number; type?: string }, _request, response, next) => {
  if (response.headersSent) return next(error);
  const status = error.status ?? 500;
  response.status(status).json(transportError(status));
};
