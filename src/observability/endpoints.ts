import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { metricsContentType, metricsText } from './metrics.js';

/** Whether a process should get traffic, and why not. */
export interface Readiness {
  ready: boolean;
  /** Each check by name: true when it passes. */
  checks: Record<string, boolean>;
}

export interface EndpointOptions {
  readiness: () => Promise<Readiness>;
  /** Whether this listener answers /metrics. */
  metrics: boolean;
}

/**
 * `/livez` (the process answers: restart it when it does not), `/readyz` (send it traffic: 503 when
 * a check fails or the process is draining), `/healthz` (the same as /readyz, for the clients that
 * used it before) and `/metrics`. Returns whether the request was one of these.
 */
export function answerEndpoint(request: IncomingMessage, response: ServerResponse, options: EndpointOptions): boolean {
  if (request.method !== 'GET' && request.method !== 'HEAD') return false;
  const path = request.url?.split('?')[0];
  switch (path) {
    case '/livez':
      send(response, 200, 'application/json; charset=utf-8', JSON.stringify({ status: 'ok' }));
      return true;
    case '/readyz':
    case '/healthz':
      void options.readiness().then(
        ({ ready, checks }) => send(response, ready ? 200 : 503, 'application/json; charset=utf-8', JSON.stringify({ status: ready ? 'ok' : 'unavailable', ...checks })),
        () => send(response, 503, 'application/json; charset=utf-8', JSON.stringify({ status: 'unavailable' })),
      );
      return true;
    case '/metrics':
      if (!options.metrics) return false;
      void metricsText().then(
        (text) => send(response, 200, metricsContentType, text),
        () => send(response, 500, 'text/plain; charset=utf-8', 'metrics could not be collected\n'),
      );
      return true;
    default:
      return false;
  }
}

function send(response: ServerResponse, status: number, contentType: string, body: string): void {
  response.writeHead(status, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-store' });
  response.end(body);
}

export interface EndpointServer {
  port: number;
  close(): Promise<void>;
}

/** The endpoints on a port of their own (METRICS_PORT), which a worker process serves too; 404 for anything else. */
export async function serveEndpoints(port: number, host: string, options: Omit<EndpointOptions, 'metrics'>): Promise<EndpointServer> {
  const server: Server = createServer((request, response) => {
    if (!answerEndpoint(request, response, { ...options, metrics: true })) send(response, 404, 'text/plain; charset=utf-8', 'not found\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
