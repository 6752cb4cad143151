import type { IncomingMessage, ServerResponse } from 'node:http';
import { HeaderMap, type ApolloServer, type BaseContext, type ContextFunction } from '@apollo/server';
import { refusalBody, type DocumentGate } from './persistedDocuments.js';

export interface GraphqlPostOptions<Context extends BaseContext> {
  path: string;
  maxBodyBytes: number;
  allowedOrigin: (origin: string | undefined) => boolean;
  context: ContextFunction<[IncomingMessage], Context>;
  /** Which documents run: a refused one is answered 400 before anything is parsed (persistedDocuments.ts). */
  documents: DocumentGate;
  /**
   * Answers a plain query without Apollo's pipeline when it can: the response body, or null to
   * leave the request to Apollo, which then gets the same context (server.ts, compiledExecution.ts).
   */
  direct?: (request: PlainRequest, context: Context) => Promise<string | null>;
}

/** A single operation as JSON clients send it, with nothing Apollo would refuse or treat apart. */
export interface PlainRequest {
  query: string;
  operationName: string | null;
  variables: Record<string, unknown>;
}

/**
 * The API's hot path, `POST /graphql` with a plain JSON body, served on Node's request directly.
 * Express's router, the cors and body-parser middleware and `res.send` cost about a tenth of a
 * timeline page's CPU (docs/read-path.md), and none of them does anything here that this
 * does not. Everything else (GET, preflights, compressed or chunked bodies, other content types,
 * bodies over the limit, GraphiQL) goes to Express, which answers it as it always did (the probes and
 * /metrics are answered before either, server.ts):
 * the returned function says whether it took the request. A plain query that `direct` can answer
 * (one Apollo has accepted before, with a clean result) does not reach Apollo at all.
 */
export function graphqlPostHandler<Context extends BaseContext>(
  apollo: ApolloServer<Context>,
  options: GraphqlPostOptions<Context>,
): (request: IncomingMessage, response: ServerResponse) => boolean {
  return (request, response) => {
    const bodyLength = takesBody(request, options);
    if (bodyLength === null) return false;
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      corsHeaders(request, response, options.allowedOrigin);
      const parsed = parseJsonBody(Buffer.concat(chunks, bodyLength).toString('utf8'));
      if (parsed === undefined) {
        answerTransportError(response, 400);
        return;
      }
      const admitted = options.documents.admit(parsed);
      if (admitted.refused) {
        answerJson(response, 400, refusalBody(admitted));
        return;
      }
      const { body } = admitted;
      execute(apollo, options, request, response, body).catch((error: unknown) => {
        if (response.headersSent) response.destroy(error as Error);
        else answerTransportError(response, 500);
      });
    });
    return true;
  };
}

const jsonContentType = /^application\/json\s*(?:;\s*charset\s*=\s*("?)utf-8\1\s*)?$/i;

/** The body length if this path takes the request (see above), else null. */
function takesBody(request: IncomingMessage, options: { path: string; maxBodyBytes: number }): number | null {
  if (request.method !== 'POST' || request.url !== options.path) return null;
  const { headers } = request;
  if (!jsonContentType.test(headers['content-type'] ?? '')) return null;
  if (headers['content-encoding'] !== undefined && headers['content-encoding'] !== 'identity') return null;
  const length = Number(headers['content-length']);
  return Number.isInteger(length) && length > 0 && length <= options.maxBodyBytes ? length : null;
}

/** As body-parser's strict JSON: an object or an array, anything else is malformed. */
function parseJsonBody(text: string): unknown {
  const first = /^[\x20\x09\x0a\x0d]*(.)/.exec(text)?.[1];
  if (first !== '{' && first !== '[') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * What the cors middleware sets on a simple request: nothing for an origin that is not allowed;
 * otherwise `Vary: Origin`, and the origin reflected when there is one (no Origin header counts as
 * allowed: see origins.ts).
 */
function corsHeaders(request: IncomingMessage, response: ServerResponse, allowedOrigin: (origin: string | undefined) => boolean): void {
  const origin = request.headers.origin;
  if (!allowedOrigin(origin)) return;
  if (origin !== undefined) response.setHeader('Access-Control-Allow-Origin', origin);
  response.setHeader('Vary', 'Origin');
}

async function execute<Context extends BaseContext>(
  apollo: ApolloServer<Context>,
  options: GraphqlPostOptions<Context>,
  request: IncomingMessage,
  response: ServerResponse,
  body: unknown,
): Promise<void> {
  const plain = options.direct && answersJson(request.headers.accept) ? plainRequest(body) : null;
  let context: Promise<Context> | null = null;
  if (plain) {
    context = options.context(request);
    // A context that fails (a rejected token check, an outage) is Apollo's to answer, from this same promise.
    const ready = await context.catch(() => null);
    const answer = ready && (await options.direct!(plain, ready));
    if (answer) {
      response.statusCode = 200;
      response.setHeader('content-type', jsonContentTypeSent);
      response.setHeader('Content-Length', Buffer.byteLength(answer));
      response.end(answer);
      return;
    }
  }
  const headers = new HeaderMap();
  for (const [key, value] of Object.entries(request.headers)) {
    if (value !== undefined) headers.set(key, Array.isArray(value) ? value.join(', ') : value);
  }
  const answer = await apollo.executeHTTPGraphQLRequest({
    httpGraphQLRequest: { method: 'POST', headers, search: '', body },
    context: () => context ?? options.context(request),
  });
  for (const [key, value] of answer.headers) response.setHeader(key, value);
  response.statusCode = answer.status ?? 200;
  if (answer.body.kind === 'complete') {
    response.setHeader('Content-Length', Buffer.byteLength(answer.body.string));
    response.end(answer.body.string);
    return;
  }
  for await (const chunk of answer.body.asyncIterator) response.write(chunk);
  response.end();
}

/** What Apollo answers a single result with when the client takes `application/json`. */
const jsonContentTypeSent = 'application/json; charset=utf-8';

/**
 * Accept headers for which Apollo's negotiation picks `application/json` (none, anything, JSON).
 * Others, such as `application/graphql-response+json` first, are negotiated by Apollo.
 */
const answersJson = (accept: string | undefined) => accept === undefined || accept === '*/*' || accept === 'application/json';

/** The body as one plain operation, or null for anything else (batches, extensions, malformed fields): Apollo's. */
function plainRequest(body: unknown): PlainRequest | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null;
  const { query, operationName, variables, ...rest } = body as Record<string, unknown>;
  if (typeof query !== 'string' || Object.keys(rest).length > 0) return null;
  if (operationName !== undefined && operationName !== null && typeof operationName !== 'string') return null;
  if (variables !== undefined && variables !== null && (typeof variables !== 'object' || Array.isArray(variables))) return null;
  return { query, operationName: operationName ?? null, variables: (variables ?? {}) as Record<string, unknown> };
}

/** The shape the Express path's body errors take (server.ts `transportErrors`). */
export function transportError(status: number): { errors: { message: string; extensions: { code: string } }[] } {
  const code = status === 413 ? 'PAYLOAD_TOO_LARGE' : status < 500 ? 'BAD_REQUEST' : 'INTERNAL_SERVER_ERROR';
  const message = status === 413 ? 'Request body too large' : status < 500 ? 'Malformed request body' : 'Internal server error';
  return { errors: [{ message, extensions: { code } }] };
}

function answerTransportError(response: ServerResponse, status: number): void {
  answerJson(response, status, transportError(status));
}

function answerJson(response: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  response.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
  response.end(body);
}
