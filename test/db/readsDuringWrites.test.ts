import type { Document } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDatabase, type Database } from '../../src/db/connect.js';
import { testDatabaseUri } from '../support/testApp.js';

/**
 * What the edges' transitions rely on when they read a document that another request is writing
 * (content/interactions.ts reads an edge while its settling write and the sweep's pruning change
 * it): a read answers the document as one write left it, never half-way through the next, and
 * always answers.
 */
describe('reads of a document while it is being written', () => {
  let database: Database;
  const fields = Array.from({ length: 40 }, (_, i) => `f${i}`);

  beforeAll(async () => {
    database = await connectDatabase(testDatabaseUri());
  });
  afterAll(async () => {
    await database?.db.dropDatabase();
    await database?.close();
  });

  it('answers each read, plain or found and modified, with the document as one write left it', async () => {
    const edges = database.db.collection<{ _id: string } & Document>('reads_during_writes');
    await edges.insertOne({ _id: 'edge', state: 'off' });
    let writing = true;
    const writer = (async () => {
      for (let round = 0; writing; round++) {
        const on = Object.fromEntries(fields.map((field) => [field, round]));
        await edges.updateOne({ _id: 'edge' }, { $set: { state: 'on', ...on, an: { t: round, e: fields.map((_, ch) => ({ ch })) } } });
        await edges.updateOne({ _id: 'edge' }, { $set: { state: 'off' }, $unset: { ...Object.fromEntries(fields.map((field) => [field, ''])), an: '' } });
      }
    })();
    const seen: string[] = [];
    const readers = Array.from({ length: 8 }, async (_, reader) => {
      for (let i = 0; i < 150; i++) {
        const edge =
          reader % 2 === 0
            ? await edges.findOne({ _id: 'edge' }, { maxTimeMS: 5_000 })
            : await edges.findOneAndUpdate({ _id: 'edge' }, { $inc: { reads: 1 } }, { returnDocument: 'after', maxTimeMS: 5_000 });
        const present = fields.filter((field) => field in edge!);
        // All of a write's fields or none, and its announcement whole with them.
        const whole = edge!.state === 'on' ? present.length === fields.length && edge!.an?.e.length === fields.length : present.length === 0 && edge!.an === undefined;
        if (!whole) seen.push(`${edge!.state} with ${present.length} fields`);
      }
    });
    try {
      await Promise.all(readers);
    } finally {
      writing = false;
      await writer;
    }
    expect(seen).toEqual([]);
  }, 60_000);
});
