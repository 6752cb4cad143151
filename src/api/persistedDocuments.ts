import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';

/**
 * Which documents the API runs, decided on the request's body before anything is parsed: the one
 * place that knows persisted queries (Apollo's APQ, `extensions.persistedQuery`) and trusted
 * documents (a manifest of `sha256:<hex>` → document, as codegen's client preset writes it; a
 * request names one by `documentId`, the GraphQL over HTTP persisted-documents form, or by the APQ
 * hash). Every transport goes through it: POST, GET and graphql-ws.
 *
 * - A document of a manifest is run from the manifest's text, whatever the client sent as text.
 * - A hash that is not the query's own is refused (400 PERSISTED_QUERY_HASH_MISMATCH): Apollo would
 *   answer that with an error without a code, which reads as an internal error.
 * - With `trustedOnly`, nothing else runs: an unknown id is PERSISTED_QUERY_NOT_FOUND, a text of no
 *   manifest PERSISTED_QUERY_NOT_IN_LIST, and automatic persisted queries cannot register any.
 * - Otherwise any query runs as before, and APQ works as Apollo does it (README, "Persisted documents").
 */
export interface DocumentGate {
  /** The body to run (the same object when nothing changes), or why it is refused. */
  admit(body: unknown): Admitted | DocumentRefusal;
  /** Whether any document may run (false in trusted-only mode): APQ registration stays on then. */
  open: boolean;
}

export type Admitted = { refused?: undefined; body: unknown };

export type DocumentRefusalCode =
  | 'PERSISTED_QUERY_HASH_MISMATCH'
  | 'PERSISTED_QUERY_NOT_FOUND'
  | 'PERSISTED_QUERY_NOT_IN_LIST'
  | 'PERSISTED_QUERY_VERSION_NOT_SUPPORTED'
  | 'BAD_REQUEST';

export interface DocumentRefusal {
  refused: { code: DocumentRefusalCode; message: string };
}

/** A manifest: document id (`sha256:<hex>`) → the document's text. */
export type DocumentManifest = ReadonlyMap<string, string>;

const sha256Id = /^sha256:[0-9a-f]{64}$/;

export const documentIdOf = (text: string) => `sha256:${createHash('sha256').update(text).digest('hex')}`;

/** Reads manifests as codegen's client preset writes them (`persisted-documents.json`); every entry must be its text's hash. */
export async function loadManifests(paths: readonly string[]): Promise<DocumentManifest> {
  const manifest = new Map<string, string>();
  for (const path of paths) {
    const entries = JSON.parse(await readFile(path, 'utf8')) as unknown;
    if (typeof entries !== 'object' || entries === null || Array.isArray(entries)) {
      throw new Error(`${path}: a trusted-documents manifest is a JSON object of "sha256:<hex>": "<document>"`);
    }
    for (const [id, text] of Object.entries(entries)) {
      // A hand-edited entry that is not its text's hash would make every client's id mean something else.
      if (typeof text !== 'string' || !sha256Id.test(id) || documentIdOf(text) !== id) {
        throw new Error(`${path}: "${id}" is not the sha256 of its document`);
      }
      manifest.set(id, text);
    }
  }
  return manifest;
}

const refuse = (code: DocumentRefusalCode, message: string): DocumentRefusal => ({ refused: { code, message } });

export function documentGate(manifest: DocumentManifest, options: { trustedOnly: boolean }): DocumentGate {
  const { trustedOnly } = options;
  const admit = (body: unknown): Admitted | DocumentRefusal => {
    // Batches, and bodies that are not objects, are Apollo's to refuse; it parses nothing of them.
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return { body };
    const request = body as Record<string, unknown>;
    const { query, documentId, extensions } = request;
    const persisted = persistedQueryOf(extensions);
    if (persisted === 'unsupported') {
      return refuse('PERSISTED_QUERY_VERSION_NOT_SUPPORTED', 'extensions.persistedQuery must be { version: 1, sha256Hash: "<64 hex digits>" }');
    }
    const text = typeof query === 'string' && query !== '' ? query : null;
    if (documentId !== undefined) {
      if (typeof documentId !== 'string' || persisted !== null) return refuse('BAD_REQUEST', 'Send a documentId (a string) or extensions.persistedQuery, not both');
      const trusted = manifest.get(documentId);
      if (trusted === undefined) return refuse('PERSISTED_QUERY_NOT_FOUND', `No trusted document with id "${documentId}"`);
      if (text !== null && documentIdOf(text) !== documentId) return refuse('PERSISTED_QUERY_HASH_MISMATCH', 'The documentId is not the hash of the query sent with it');
      return { body: running(request, trusted) };
    }
    if (persisted !== null) {
      const id = `sha256:${persisted.sha256Hash}`;
      // Mismatch first: a hash that does not name its text is refused the same in both modes.
      if (text !== null && documentIdOf(text) !== id) {
        return refuse('PERSISTED_QUERY_HASH_MISMATCH', 'extensions.persistedQuery.sha256Hash is not the hash of the query sent with it');
      }
      const trusted = manifest.get(id);
      if (trusted !== undefined) return { body: running(request, trusted) };
      if (!trustedOnly) return { body }; // Apollo's APQ: registered with its text, or PERSISTED_QUERY_NOT_FOUND
      return text === null
        ? refuse('PERSISTED_QUERY_NOT_FOUND', 'No trusted document with this hash')
        : refuse('PERSISTED_QUERY_NOT_IN_LIST', 'This server runs only its trusted documents, and this is none of them');
    }
    if (!trustedOnly || text === null) return { body }; // no query at all: Apollo says what is missing
    const trusted = manifest.get(documentIdOf(text));
    return trusted !== undefined
      ? { body }
      : refuse('PERSISTED_QUERY_NOT_IN_LIST', 'This server runs only its trusted documents, and this is none of them');
  };
  return { admit, open: !trustedOnly };
}

/** `extensions.persistedQuery` when it is APQ's version 1; 'unsupported' for another version. */
function persistedQueryOf(extensions: unknown): { sha256Hash: string } | 'unsupported' | null {
  const persisted = (extensions as { persistedQuery?: unknown } | null | undefined)?.persistedQuery;
  if (persisted === undefined || persisted === null || typeof persisted !== 'object') return null;
  const { version, sha256Hash } = persisted as { version?: unknown; sha256Hash?: unknown };
  if (version !== 1 || typeof sha256Hash !== 'string' || !/^[0-9a-f]{64}$/.test(sha256Hash)) return 'unsupported';
  return { sha256Hash };
}

/** The request with the trusted text as its query and without the id that named it. */
function running(request: Record<string, unknown>, text: string): Record<string, unknown> {
  const { documentId: _id, extensions, ...rest } = request;
  const { persistedQuery: _persisted, ...otherExtensions } = (extensions ?? {}) as Record<string, unknown>;
  return Object.keys(otherExtensions).length > 0 ? { ...rest, query: text, extensions: otherExtensions } : { ...rest, query: text };
}

/** A refusal as GraphQL's error shape, for the HTTP transports. */
export const refusalBody = ({ refused }: DocumentRefusal) => ({ errors: [{ message: refused.message, extensions: { code: refused.code } }] });
