import type { Db } from 'mongodb';
import { isDuplicateKeyError } from '../errors.js';
import { plannedCollection } from './shardPlan.js';

interface MigrationDocument {
  _id: string;
  at: Date;
  /** On a migration's progress document: where a start killed half-way resumes. */
  after?: unknown;
}

/**
 * Runs `migrate` once per database: at every start until it has finished once (a start killed
 * half-way runs it again, so it must be idempotent), then never again. Several instances starting
 * together may each run it; idempotence makes that harmless.
 */
export async function migrateOnce(db: Db, name: string, migrate: () => Promise<unknown>): Promise<void> {
  const migrations = plannedCollection<MigrationDocument>(db, 'migrations');
  if (await migrations.countDocuments({ _id: name }, { limit: 1 })) return;
  await migrate();
  try {
    await migrations.updateOne({ _id: name }, { $setOnInsert: { at: new Date() } }, { upsert: true });
  } catch (error) {
    // Another instance finished it at the same moment.
    if (!isDuplicateKeyError(error)) throw error;
  }
}

/**
 * Where a migration that walks a collection in order has got to, kept beside the migrations (as
 * `<name>:progress`), so a start killed half-way resumes after the last batch it wrote.
 */
export function migrationProgress<T>(db: Db, name: string): { read(): Promise<T | null>; save(after: T): Promise<void> } {
  const migrations = plannedCollection<MigrationDocument>(db, 'migrations');
  const _id = `${name}:progress`;
  return {
    read: async () => ((await migrations.findOne({ _id }))?.after as T | undefined) ?? null,
    save: async (after) => {
      await migrations.updateOne({ _id }, { $set: { after, at: new Date() } }, { upsert: true });
    },
  };
}
