import { MongoClient, type Db, type MongoClientOptions } from 'mongodb';

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

export async function connectDatabase(uri: string, options: MongoClientOptions = {}): Promise<Database> {
  const client = new MongoClient(uri, { serverSelectionTimeoutMS: 10_000, ...options });
  await client.connect();
  const db = client.db(databaseNameFromUri(uri));
  return { client, db, close: () => client.close() };
}

/** A round trip to the server, for health checks. */
export async function pingDatabase(db: Db): Promise<boolean> {
  try {
    await db.command({ ping: 1 });
    return true;
  } catch {
    return false;
  }
}
