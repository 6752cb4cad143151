/**
 * Traces with OpenTelemetry, exported over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set: a
 * span for each GraphQL request (api/), each MongoDB command (from the driver's command
 * monitoring, which carries no document into the span) and each queue task, whose parent is the
 * request that queued it (requestScope.ts carries the trace context in the task document).
 *
 * Off, nothing here runs: the SDK is not even loaded, callers ask `tracingOn()` before they build a
 * span, and the driver is not asked to report its commands. That matters for more than the SDK:
 * the context of a span follows async calls through Node's AsyncLocalStorage, whose hooks (on
 * Node 20) slow every promise of the process while enabled, measurably so on a warm timeline page:
 * only a traced process pays for them.
 */
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span } from '@opentelemetry/api';
import type { CommandFailedEvent, CommandStartedEvent, CommandSucceededEvent, MongoClient } from 'mongodb';

/** The W3C trace context of a span, as it travels in a task document. */
export interface TraceCarrier {
  traceparent?: string;
  tracestate?: string;
}

export interface Tracing {
  /** Sends what is buffered, then stops tracing. */
  stop(): Promise<void>;
}

let active: { forceFlush(): Promise<void> } | null = null;
const tracer = trace.getTracer('feed-service');

export const tracingOn = (): boolean => active !== null;

/** Starts exporting spans of this process to `<endpoint>/v1/traces`. */
export async function startTracing(options: { endpoint: string; serviceName: string }): Promise<Tracing> {
  // Loaded only here, so a process that traces nothing never loads the SDK.
  const [{ NodeTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, { resourceFromAttributes }] = await Promise.all([
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
  ]);
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': options.serviceName }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: `${options.endpoint}/v1/traces` }))],
  });
  // The AsyncLocalStorage context manager and the W3C trace-context propagator, process-wide.
  provider.register();
  active = provider;
  return {
    stop: async () => {
      active = null;
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}

/**
 * Runs `work` in a new active span (a child of `parent`, or of the active span), ended when it
 * settles; without tracing, just runs it.
 */
export function inSpan<T>(
  name: string,
  options: { kind?: SpanKind; attributes?: Attributes; parent?: Context },
  work: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  if (!active) return work(undefined);
  return tracer.startActiveSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes }, options.parent ?? context.active(), async (span) => {
    try {
      return await work(span);
    } catch (error) {
      failed(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/**
 * A span started now and ended by the caller (an HTTP request ends when its response does, a batch
 * of tasks when the batch does), and the context it is active in; null without tracing.
 */
export function startSpan(name: string, kind: SpanKind, attributes: Attributes, parent: Context = context.active()): { span: Span; context: Context } | null {
  if (!active) return null;
  const span = tracer.startSpan(name, { kind, attributes }, parent);
  return { span, context: trace.setSpan(parent, span) };
}

export function runInContext<T>(spanContext: Context, work: () => T): T {
  return context.with(spanContext, work);
}

/** Listeners added to `emitter` from now on run in `spanContext` (a request's 'data' and 'end' would not, otherwise). */
export function bindToContext<E extends object>(spanContext: Context, emitter: E): E {
  return context.bind(spanContext, emitter);
}

export function failed(span: Span, error: unknown): void {
  span.recordException(error instanceof Error ? { name: error.name, message: error.message } : String(error));
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.name : undefined });
}

/** The active span's trace context, to carry in a task document; undefined when nothing is traced. */
export function activeTraceCarrier(): TraceCarrier | undefined {
  if (!active) return undefined;
  const carrier: TraceCarrier = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ? carrier : undefined;
}

/** The context a carried trace continues in (a fresh trace without one). */
export function contextFrom(carrier: TraceCarrier | undefined): Context {
  return carrier?.traceparent ? propagation.extract(ROOT_CONTEXT, carrier) : ROOT_CONTEXT;
}

/**
 * A client span per MongoDB command, from the driver's command monitoring (the client must be
 * created with `monitorCommands: true`). The span names the command, the database and the
 * collection, never a document or a filter.
 */
export function traceCommands(client: MongoClient): void {
  const spans = new Map<number, Span>();
  client.on('commandStarted', (event: CommandStartedEvent) => {
    if (!active) return;
    const collection = event.command[event.commandName];
    spans.set(
      event.requestId,
      tracer.startSpan(
        `mongodb.${event.commandName}`,
        {
          kind: SpanKind.CLIENT,
          attributes: {
            'db.system.name': 'mongodb',
            'db.namespace': event.databaseName,
            'db.operation.name': event.commandName,
            ...(typeof collection === 'string' ? { 'db.collection.name': collection } : {}),
            'server.address': event.address,
          },
        },
        context.active(),
      ),
    );
  });
  const end = (event: CommandSucceededEvent | CommandFailedEvent, error?: Error) => {
    const span = spans.get(event.requestId);
    if (!span) return;
    spans.delete(event.requestId);
    if (error) failed(span, error);
    span.end();
  };
  client.on('commandSucceeded', (event) => end(event));
  client.on('commandFailed', (event) => end(event, event.failure));
}

export { SpanKind, SpanStatusCode };
