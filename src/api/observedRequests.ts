import type { IncomingMessage, ServerResponse } from 'node:http';
import { Kind, type DocumentNode, type OperationDefinitionNode, type SelectionSetNode } from 'graphql';
import type { Logger } from '../logger.js';
import { graphqlOperationDuration, httpRequestDuration } from '../observability/metrics.js';
import { requestIdFrom } from '../observability/requests.js';
import { bindToContext, runInContext, SpanKind, SpanStatusCode, startSpan } from '../observability/tracing.js';

/** How an operation ended, as metrics and log lines tell it. */
export type Outcome = 'success' | 'client_error' | 'server_error';

/** A GraphQL operation as metrics and log lines name it. */
export interface OperationLabels {
  type: 'query' | 'mutation' | 'subscription';
  /**
   * The schema's root field the operation selects (`timeline`, `createPost`), `multiple` when it
   * selects several: bounded by the schema, where the name a client gives its operation is free text
   * and would make a series per made-up name.
   */
  field: string;
  /** The client's name of the operation, for log lines only. */
  name: string | null;
}

/** What a request's log line and metrics say, filled in by the layers that learn it. */
export interface RequestObservation {
  readonly id: string;
  /** A GraphQL request (its context was made), as opposed to GraphiQL's page, a preflight or a probe. */
  graphql: boolean;
  operation: OperationLabels | null;
  accountId: string | null;
  errorCode: string | null;
}

const observations = new WeakMap<IncomingMessage, RequestObservation>();

/** The observation of a request that `observedRequests` handed on. */
export const observationOf = (request: IncomingMessage): RequestObservation | undefined => observations.get(request);

/** Routes named in metrics; any other path is `other`, so a scanner's paths make no series. */
const routes = new Set(['/graphql', '/livez', '/readyz', '/healthz', '/metrics']);
const methods = new Set(['GET', 'POST', 'OPTIONS', 'HEAD']);
/** Probes and scrapes come every few seconds: their lines are debug, not info. */
const probeRoutes = new Set(['/livez', '/readyz', '/healthz', '/metrics']);

/**
 * Every HTTP request, observed: an id (the client's `X-Request-Id` when plausible, else a new one,
 * sent back in the response's `X-Request-Id`), a span when tracing is on, and when the response
 * ends, one log line and the request metrics. Neither the URL's query string (a GET's query and
 * variables) nor any header but the request id is logged.
 */
export function observedRequests(
  logger: Logger,
  handle: (request: IncomingMessage, response: ServerResponse) => void,
): (request: IncomingMessage, response: ServerResponse) => void {
  return (request, response) => {
    const startedAt = performance.now();
    const route = routeOf(request.url);
    const method = methods.has(request.method ?? '') ? request.method! : 'OTHER';
    const observation: RequestObservation = { id: requestIdFrom(request.headers['x-request-id']), graphql: false, operation: null, accountId: null, errorCode: null };
    observations.set(request, observation);
    response.setHeader('X-Request-Id', observation.id);
    const traced = startSpan(`${method} ${route}`, SpanKind.SERVER, { 'http.request.method': method, 'http.route': route, 'feed.request_id': observation.id });
    response.once('close', () => {
      const seconds = (performance.now() - startedAt) / 1000;
      const status = response.statusCode;
      const outcome = outcomeOf(observation.errorCode, status);
      const { operation } = observation;
      httpRequestDuration.observe({ method, route, status_code: String(status) }, seconds);
      if (observation.graphql) {
        graphqlOperationDuration.observe({ operation_type: operation?.type ?? 'unknown', operation_name: operation?.field ?? 'unknown', outcome }, seconds);
      }
      if (traced) {
        traced.span.setAttribute('http.response.status_code', status);
        if (operation) {
          traced.span.updateName(`${operation.type} ${operation.field}`);
          traced.span.setAttributes({ 'graphql.operation.type': operation.type, 'graphql.operation.name': operation.field });
        }
        if (outcome === 'server_error') traced.span.setStatus({ code: SpanStatusCode.ERROR });
        traced.span.end();
      }
      const fields = {
        requestId: observation.id,
        method,
        route,
        status,
        durationMs: Math.round(seconds * 10_000) / 10,
        ...(operation ? { operationType: operation.type, operationField: operation.field, operationName: operation.name } : {}),
        ...(observation.accountId ? { accountId: observation.accountId } : {}),
        ...(observation.graphql ? { outcome } : {}),
        ...(observation.errorCode ? { errorCode: observation.errorCode } : {}),
        ...(response.writableFinished ? {} : { aborted: true }),
      };
      if (probeRoutes.has(route)) logger.vetted.debug('request', fields);
      else logger.vetted.info('request', fields);
    });
    if (!traced) return handle(request, response);
    // The body's 'data' and 'end' listeners run in the request's span too, and what they start.
    bindToContext(traced.context, request);
    bindToContext(traced.context, response);
    runInContext(traced.context, () => handle(request, response));
  };
}

function routeOf(url: string | undefined): string {
  const path = (url ?? '/').split('?')[0]!;
  return routes.has(path) ? path : 'other';
}

/** Errors the client can do nothing about are the server's; everything else refused is the client's. */
const serverErrorCodes = new Set(['INTERNAL_SERVER_ERROR', 'SERVICE_UNAVAILABLE']);

export function outcomeOf(errorCode: string | null, status: number): Outcome {
  if (status >= 500 || (errorCode !== null && serverErrorCodes.has(errorCode))) return 'server_error';
  if (status >= 400 || errorCode !== null) return 'client_error';
  return 'success';
}

/** Labels of operations of documents served before: a known document's are the same every time. */
const labelled = new WeakMap<OperationDefinitionNode, OperationLabels>();

/** The labels of an operation that has been validated (so every root field is the schema's). */
export function operationLabels(document: DocumentNode, operation: OperationDefinitionNode): OperationLabels {
  let labels = labelled.get(operation);
  if (!labels) {
    labels = labelsOf(document, operation);
    labelled.set(operation, labels);
  }
  return labels;
}

function labelsOf(document: DocumentNode, operation: OperationDefinitionNode): OperationLabels {
  const fields = rootFields(document, operation.selectionSet, new Set(), new Set());
  fields.delete('__typename');
  const field = fields.size === 1 ? [...fields][0]! : fields.size === 0 ? '__typename' : 'multiple';
  return { type: operation.operation as OperationLabels['type'], field, name: operation.name?.value.slice(0, 100) ?? null };
}

function rootFields(document: DocumentNode, selectionSet: SelectionSetNode, found: Set<string>, visited: Set<string>): Set<string> {
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) found.add(selection.name.value);
    else if (selection.kind === Kind.INLINE_FRAGMENT) rootFields(document, selection.selectionSet, found, visited);
    else if (!visited.has(selection.name.value)) {
      visited.add(selection.name.value);
      const fragment = document.definitions.find((definition) => definition.kind === Kind.FRAGMENT_DEFINITION && definition.name.value === selection.name.value);
      if (fragment?.kind === Kind.FRAGMENT_DEFINITION) rootFields(document, fragment.selectionSet, found, visited);
    }
  }
  return found;
}
