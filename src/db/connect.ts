/**
 * db/ owns the connection to MongoDB: connecting, database names, reachability, telling an outage
 * from other errors, the embedded stand-in for development and tests (standIn.ts), and what every
 * store of recorded intents shares to finish stalled work (stalledWork.ts).
 */
import {
  MongoClient,
  MongoNetworkError,
  MongoNotConnectedError,
  MongoOperationTimeoutError,
  MongoServerSelectionError,
  type Db,
  type MongoClientOptions,
} from 'mongodb';

export const defaultDatabaseName = 'feed';

export interface Database {
  client: MongoClient;
  db: Db;
  close(): Promise<void>;
}

/**
 * The database name is the path of the URI, so several deployments (or test files) can share one
 * MongoDB server. The driver would fall back to `test`; we fall back to `feed`.
 */
export function databaseNameFromUri(uri: string): string {
  const path = /^mongodb(?:\+srv)?:\/\/[^/]+\/([^?]*)/.exec(uri)?.[1];
  return path ? decodeURIComponent(path) : defaultDatabaseName;
}

/**
 * How long an operation waits for a reachable server before it fails: when the database is gone,
 * requests fail fast with SERVICE_UNAVAILABLE instead of hanging, and the driver reconnects by
 * itself once it is back.
 */
export const serverSelectionTimeoutMs = 2000;

/**
 * The `comment` of every query a background sweep makes (repairs of work a dead request left), so
 * MongoDB's logs, profiler and `currentOp` tell them from the queries that serve requests.
 */
export const sweepQuery = { comment: 'feed-service repair sweep' } as const;

/** The database server's URI with the database name (the path) replaced. */
export function withDatabaseName(serverUri: string, name: string): string {
  const match = /^(mongodb(?:\+srv)?:\/\/[^/?]+)\/?([^?]*)(\?.*)?$/.exec(serverUri);
  if (!match) throw new Error(`Cannot parse MongoDB URI ${serverUri}`);
  return `${match[1]}/${name}${match[3] ?? ''}`;
}

export async function connectDatabase(uri: string, options: MongoClientOptions = {}): Promise<Database> {
  const client = new MongoClient(uri, { serverSelectionTimeoutMS: serverSelectionTimeoutMs, ...options });
  await client.connect();
  const db = client.db(databaseNameFromUri(uri));
  return { client, db, close: () => client.close() };
}

/** A round trip to the server, for health checks; false when it takes longer than `timeoutMs`. */
export async function pingDatabase(db: Db, timeoutMs: number): Promise<boolean> {
  try {
    await db.command({ ping: 1 }, { timeoutMS: timeoutMs });
    return true;
  } catch {
    return false;
  }
}

/** Errors that mean "the database cannot be reached right now", as opposed to a bad request or a bug. */
export function isDatabaseUnavailable(error: unknown): boolean {
  return (
    error instanceof MongoServerSelectionError ||
    error instanceof MongoNetworkError ||
    error instanceof MongoNotConnectedError ||
    error instanceof MongoOperationTimeoutError
  );
}
