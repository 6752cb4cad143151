import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTracing, type Tracing } from '../../src/observability/tracing.js';
import { startTestApp, type TestApp } from '../support/testApp.js';

interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: { key: string; value: Record<string, unknown> }[];
}

/** An OTLP/HTTP collector in the test: it keeps every span it is sent (JSON encoding). */
async function otlpReceiver(): Promise<{ endpoint: string; spans: ReceivedSpan[]; contentTypes: Set<string>; close(): Promise<void> }> {
  const spans: ReceivedSpan[] = [];
  const contentTypes = new Set<string>();
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      contentTypes.add(`${request.method} ${request.url} ${request.headers['content-type']}`);
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { resourceSpans: { scopeSpans: { spans: ReceivedSpan[] }[] }[] };
      for (const resource of body.resourceSpans) for (const scope of resource.scopeSpans) spans.push(...scope.spans);
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    contentTypes,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const attribute = (span: ReceivedSpan, key: string) => span.attributes.find((entry) => entry.key === key)?.value;

/** One trace from a `createPost` request to every delivery it caused, as an OTLP collector receives it. */
describe('traces', () => {
  let receiver: Awaited<ReturnType<typeof otlpReceiver>>;
  let tracing: Tracing;
  let app: TestApp;

  beforeAll(async () => {
    receiver = await otlpReceiver();
    tracing = await startTracing({ endpoint: receiver.endpoint, serviceName: 'feed-service-test' });
    app = await startTestApp({ FEED_STRATEGY: 'time-buckets' });
  });
  afterAll(async () => {
    await app?.stop();
    await receiver?.close();
  });

  it('puts createPost, its MongoDB commands and the fanout task it queued in one trace', async () => {
    const author = await app.signUp('traced_author');
    const reader = await app.signUp('traced_reader');
    await app.gql('mutation { follow(handle: "traced_author") { handle } }', {}, reader);
    const posted = await app.gql('mutation { createPost(text: "followed through") { id } }', {}, author);
    expect(posted.data.createPost.id).toBeTruthy();
    await app.settled();
    // The task's span ends after its completion is stored: the workers, stopped, have ended every span of a task
    // they ran (waited for, as a fixed 100 ms sleep can be too short on a loaded machine).
    await app.services.work.stop();
    await tracing.stop(); // flushes what is buffered

    expect([...receiver.contentTypes]).toEqual(['POST /v1/traces application/json']);
    const createPost = receiver.spans.find((span) => span.name === 'mutation createPost');
    expect(createPost, receiver.spans.map((span) => span.name).join(', ')).toBeDefined();
    expect(attribute(createPost!, 'graphql.operation.type')).toEqual({ stringValue: 'mutation' });
    const trace = receiver.spans.filter((span) => span.traceId === createPost!.traceId);
    const delivery = trace.find((span) => span.name === 'task deliver');
    expect(delivery, trace.map((span) => span.name).join(', ')).toBeDefined();
    expect(delivery!.parentSpanId).toBe(createPost!.spanId);
    // The request's commands are its children; the delivery's writes are the task's.
    expect(trace.some((span) => span.name === 'mongodb.insert' && span.parentSpanId === createPost!.spanId)).toBe(true);
    expect(trace.some((span) => span.name.startsWith('mongodb.') && span.parentSpanId === delivery!.spanId)).toBe(true);
    // Spans say which collection, never what was written.
    expect(JSON.stringify(receiver.spans)).not.toContain('followed through');
  });
});
