import type { Db } from 'mongodb';
import { isDuplicateKeyError } from '../errors.js';
import { plannedCollection } from './shardPlan.js';

interface MigrationDocument {
  _id: string;
  at: Date;
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
