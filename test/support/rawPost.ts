import { request } from 'node:http';

/** What a client sees of an answer: status, the headers that can differ between paths, and the body as sent. */
export interface RawAnswer {
  status: number;
  headers: Record<string, string | undefined>;
  text: string;
}

/**
 * A POST to `url` over Node's http, so that the body's framing is chosen (with a Content-Length,
 * or chunked) and the answer is kept byte for byte.
 */
export function rawPost(url: string, body: string, headers: Record<string, string>, framing: 'length' | 'chunked' = 'length'): Promise<RawAnswer> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const outgoing = request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...headers,
          ...(framing === 'length' ? { 'content-length': Buffer.byteLength(body) } : { 'transfer-encoding': 'chunked' }),
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const { 'content-type': contentType, vary, 'access-control-allow-origin': allowOrigin, 'content-length': length } = response.headers;
          resolve({
            status: response.statusCode ?? 0,
            headers: { contentType, vary, allowOrigin, length },
            text: Buffer.concat(chunks).toString('utf8'),
          });
        });
      },
    );
    outgoing.on('error', reject);
    if (framing === 'chunked') outgoing.write(body.slice(0, 3));
    outgoing.end(framing === 'chunked' ? body.slice(3) : body);
  });
}
