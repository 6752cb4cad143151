/**
 * The media transport: uploads (POST /media, multipart, as Mastodon's /api/v2/media and Bluesky's
 * uploadBlob are plain HTTP) and the signed image URLs (GET /media/<id>/<variant>). Thin: it turns
 * requests into calls on the media service and its answers and errors into HTTP.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import busboy from 'busboy';
import { isDatabaseUnavailable } from '../db/connect.js';
import { AppError, badInput, databaseUnavailable, type ErrorCode } from '../errors.js';
import type { Logger } from '../logger.js';
import type { ObjectId } from 'mongodb';
import { toDescriptor, type MediaDescriptor, type MediaDocument, type MediaRecord, type MediaVariant } from '../records/media.js';
import type { ServedVariant } from '../media/mediaService.js';
import { notBearerMessage, requestOrigin, type Authenticate } from './context.js';
import { mediaGlobalId } from './globalIds.js';

export const mediaPath = '/media';

/** What the media transport needs of the services, and nothing more. */
export interface MediaRouteDependencies {
  authenticate: Authenticate;
  /** Counts an upload against the account's hourly limit; `refund` when it is refused. */
  countUpload(owner: string): Promise<{ refund: () => Promise<void> }>;
  store(owner: string, data: Buffer, alt: string | null): Promise<MediaDocument>;
  record(media: MediaDescriptor, origin: string): MediaRecord;
  verify(id: string, variant: string, expiry: unknown, signature: unknown): { id: ObjectId; variant: MediaVariant; expiresAt: number } | null;
  toServe(id: ObjectId, variant: MediaVariant): Promise<ServedVariant | null>;
  maxBytes: number;
}

/** The HTTP status of each code an upload can answer with. */
const statusOf: Partial<Record<ErrorCode, number>> = {
  UNAUTHENTICATED: 401,
  BAD_USER_INPUT: 400,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RATE_LIMITED: 429,
  SERVICE_UNAVAILABLE: 503,
};

/** Bytes of a multipart body beyond the file: boundaries, part headers and a short alt text. */
const multipartOverhead = 64 * 1024;

/**
 * Answers requests under /media; false for any other path, which the caller answers. The upload
 * is refused while it streams: a declared Content-Length over the limit before any byte is read,
 * a file part past MEDIA_MAX_BYTES as soon as it gets there.
 */
export function mediaRoutes(deps: MediaRouteDependencies, logger: Logger) {
  return (request: IncomingMessage, response: ServerResponse): boolean => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    if (url.pathname === mediaPath && request.method === 'POST') {
      void upload(deps, request, response).catch((error: unknown) => answerError(response, error, logger));
      return true;
    }
    const match = /^\/media\/([^/]+)\/([^/]+)$/.exec(url.pathname);
    if (match && (request.method === 'GET' || request.method === 'HEAD')) {
      void serve(deps, request, response, match[1]!, match[2]!, url.searchParams).catch((error: unknown) => answerError(response, error, logger));
      return true;
    }
    return false;
  };
}

async function upload(deps: MediaRouteDependencies, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const owner = await deps.authenticate(request.headers.authorization);
  if (owner === 'not-bearer') throw new AppError('UNAUTHENTICATED', notBearerMessage);
  if (owner === 'invalid') throw new AppError('UNAUTHENTICATED', 'The token is invalid or expired; sign in again');
  if (owner === null) throw new AppError('UNAUTHENTICATED', 'Sign in first: send Authorization: Bearer <token>');
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > deps.maxBytes + multipartOverhead) throw tooLarge(deps.maxBytes);
  const counted = await deps.countUpload(owner);
  try {
    const { data, alt } = await readUpload(request, deps.maxBytes);
    const stored = await deps.store(owner, data, alt);
    const record = deps.record(toDescriptor(stored), requestOrigin(request));
    answerJson(response, 201, { ...record, id: mediaGlobalId(record.id) });
  } catch (error) {
    // A refused upload counts against no limit.
    if (error instanceof AppError) await counted.refund().catch(() => {});
    throw error;
  }
}

/** The one part named `file` and the optional `alt`, the file held in memory up to `maxBytes`. */
function readUpload(request: IncomingMessage, maxBytes: number): Promise<{ data: Buffer; alt: string | null }> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: request.headers, limits: { files: 1, fileSize: maxBytes, fields: 4, fieldSize: 16 * 1024, parts: 6 } });
    } catch {
      reject(badInput('Send the image as multipart/form-data with a part named "file"'));
      return;
    }
    let file: Buffer | null = null;
    let alt: string | null = null;
    let failed: Error | null = null;
    const fail = (error: Error) => {
      if (failed) return;
      failed = error;
      request.unpipe(parser);
      // The rest of the body is read and dropped, never held: the answer goes at once.
      request.resume();
      reject(error);
    };
    parser.on('file', (name, stream) => {
      if (name !== 'file') {
        stream.resume();
        return;
      }
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('limit', () => fail(tooLarge(maxBytes)));
      stream.on('end', () => {
        if (!failed) file = Buffer.concat(chunks);
      });
    });
    parser.on('field', (name, value, info) => {
      if (name === 'alt') {
        if (info.valueTruncated) fail(badInput('Alt text must be at most 1500 characters'));
        else alt = value;
      }
    });
    parser.on('filesLimit', () => fail(badInput('Send one file per upload')));
    parser.on('partsLimit', () => fail(badInput('Send one part named "file" and an optional "alt"')));
    parser.on('fieldsLimit', () => fail(badInput('Send one part named "file" and an optional "alt"')));
    parser.on('error', () => fail(badInput('The multipart body could not be read')));
    parser.on('close', () => {
      if (failed) return;
      if (!file) reject(badInput('Send the image as multipart/form-data with a part named "file"'));
      else if (file.length === 0) reject(badInput('The file is empty'));
      else resolve({ data: file, alt });
    });
    request.on('aborted', () => fail(badInput('The upload was cut off')));
    request.pipe(parser);
  });
}

const tooLarge = (maxBytes: number) =>
  new AppError('PAYLOAD_TOO_LARGE', `An image may be at most ${Math.floor(maxBytes / (1024 * 1024)) || maxBytes / (1024 * 1024)} MB`, { http: { status: 413 } });

/**
 * One variant of an image, to whoever holds a signed URL of it that has not expired. Whatever is
 * wrong with the URL, or the image (deleted, its post or account gone), the answer is the same 404.
 */
async function serve(
  deps: MediaRouteDependencies,
  request: IncomingMessage,
  response: ServerResponse,
  id: string,
  variant: string,
  query: URLSearchParams,
): Promise<void> {
  const signed = deps.verify(id, variant, query.get('e') ?? undefined, query.get('s') ?? undefined);
  const served = signed && (await deps.toServe(signed.id, signed.variant));
  if (!signed || !served) return answerNotFound(response);
  const etag = `"${served.variant.etag}"`;
  // Cached at most until the URL expires; private: the image is for whoever the post is shown to.
  const maxAge = Math.max(0, signed.expiresAt - Math.ceil(Date.now() / 1000));
  response.setHeader('ETag', etag);
  response.setHeader('Cache-Control', `private, max-age=${maxAge}`);
  response.setHeader('X-Content-Type-Options', 'nosniff');
  // Opened directly, the file is an image in a sandbox: no script, no plugin, no form runs.
  response.setHeader('Content-Security-Policy', "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; sandbox");
  response.setHeader('Cross-Origin-Resource-Policy', 'cross-origin');
  if (matchesEtag(request.headers['if-none-match'], etag)) {
    response.writeHead(304).end();
    return;
  }
  response.setHeader('Content-Type', served.variant.type);
  response.setHeader('Content-Length', served.variant.bytes);
  if (request.method === 'HEAD') {
    response.writeHead(200).end();
    return;
  }
  response.writeHead(200);
  // Streamed with backpressure: a few chunks per reader in memory, however large the image.
  await pipeline(served.open(), response).catch(() => response.destroy());
}

function matchesEtag(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((tag) => {
    const trimmed = tag.trim();
    return trimmed === '*' || trimmed === etag || trimmed === `W/${etag}`;
  });
}

function answerNotFound(response: ServerResponse): void {
  answerJson(response, 404, { errors: [{ message: 'Not found', extensions: { code: 'NOT_FOUND' } }] });
}

/** Errors in GraphQL's shape, `{"errors":[{"message","extensions":{"code"}}]}`, with their HTTP status and headers. */
function answerError(response: ServerResponse, thrown: unknown, logger: Logger): void {
  if (response.headersSent) {
    response.destroy();
    return;
  }
  const error = isDatabaseUnavailable(thrown) ? databaseUnavailable() : thrown;
  if (!(error instanceof AppError)) {
    logger.error('media request failed', error);
    answerJson(response, 500, { errors: [{ message: 'Internal server error', extensions: { code: 'INTERNAL_SERVER_ERROR' } }] });
    return;
  }
  const http = (error.extensions.http ?? {}) as { status?: number; headers?: Map<string, string> };
  for (const [name, value] of http.headers ?? []) response.setHeader(name, value);
  const { http: _http, ...extensions } = error.extensions;
  answerJson(response, http.status ?? statusOf[error.code] ?? 400, { errors: [{ message: error.message, extensions }] });
}

function answerJson(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  response.end(text);
}
