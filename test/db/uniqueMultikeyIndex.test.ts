import { MongoBulkWriteError, MongoServerError, type Collection } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDatabase, type Database } from '../../src/db/connect.js';
import { testDatabaseUri } from '../support/testApp.js';

interface Bucket {
  _u: string;
  _c: { _id: number }[];
}

/**
 * The MongoDB behaviour sized buckets rely on: a unique index over an array field holds across
 * documents, leaves empty arrays out, and answers a violating update with E11000 (11000).
 */
describe('a unique partial index over an array field', () => {
  let database: Database;
  let buckets: Collection<Bucket>;

  beforeAll(async () => {
    database = await connectDatabase(testDatabaseUri());
    buckets = database.db.collection<Bucket>('buckets');
    await buckets.createIndex(
      { _u: 1, '_c._id': 1 },
      { name: 'user_entry_unique', unique: true, partialFilterExpression: { '_c._id': { $exists: true } } },
    );
  });
  afterAll(async () => {
    await database?.db.dropDatabase();
    await database?.close();
  });

  it('refuses the same element in two documents of one user, by insert, update, upsert or bulk write', async () => {
    await buckets.insertOne({ _u: 'a', _c: [{ _id: 1 }] });
    await expect(buckets.insertOne({ _u: 'a', _c: [{ _id: 1 }] })).rejects.toMatchObject({ code: 11000 });
    await buckets.insertMany([
      { _u: 'a', _c: [] },
      { _u: 'a', _c: [] },
    ]); // empty arrays are not in the index
    await expect(buckets.updateOne({ _u: 'a', _c: { $size: 0 } }, { $push: { _c: { _id: 1 } } })).rejects.toBeInstanceOf(MongoServerError);
    await expect(buckets.updateOne({ _u: 'a', _c: { $size: 0 } }, { $push: { _c: { _id: 1 } } })).rejects.toMatchObject({ code: 11000 });
    await expect(
      buckets.updateOne({ _u: 'a', '_c._id': { $ne: 1 }, _c: { $size: 5 } }, { $push: { _c: { _id: 1 } } }, { upsert: true }),
    ).rejects.toMatchObject({ code: 11000 });

    const bulk = buckets.bulkWrite(
      [
        { updateOne: { filter: { _u: 'a', _c: { $size: 0 } }, update: { $push: { _c: { _id: 1 } } } } },
        { updateOne: { filter: { _u: 'a', _c: { $size: 0 } }, update: { $push: { _c: { _id: 2 } } } } },
      ],
      { ordered: false },
    );
    const error = await bulk.catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(MongoBulkWriteError);
    expect([(error as MongoBulkWriteError).writeErrors].flat().map((writeError) => writeError.code)).toEqual([11000]);
    expect(await buckets.countDocuments({ _u: 'a', '_c._id': 1 })).toBe(1);
    expect(await buckets.countDocuments({ _u: 'a', '_c._id': 2 })).toBe(1);
  });

  it('updates a document whose array was emptied, and lets other users hold the same element', async () => {
    await buckets.updateMany({ _u: 'a' }, { $pull: { _c: { _id: { $in: [1, 2] } } } });
    expect(await buckets.countDocuments({ _u: 'a', _c: { $size: 0 } })).toBe(3);
    await buckets.updateOne({ _u: 'a', _c: { $size: 0 } }, { $push: { _c: { _id: 1 } } });
    await buckets.insertOne({ _u: 'b', _c: [{ _id: 1 }] });
    expect(await buckets.countDocuments({ '_c._id': 1 })).toBe(2);
  });

  it('moves elements between documents: an element pulled is free for another, one pushed is held, and a refused update changes nothing', async () => {
    await buckets.insertMany([
      { _u: 'd', _c: [{ _id: 1 }, { _id: 2 }] },
      { _u: 'd', _c: [{ _id: 3 }] },
    ]);
    await buckets.updateOne({ _u: 'd', '_c._id': 1 }, { $pull: { _c: { _id: 2 } } });
    await buckets.updateOne({ _u: 'd', '_c._id': 3 }, { $push: { _c: { _id: 2 } } });
    await expect(buckets.updateOne({ _u: 'd', '_c._id': 3 }, { $push: { _c: { _id: 1 } } })).rejects.toMatchObject({ code: 11000 });
    expect((await buckets.findOne({ _u: 'd', '_c._id': 3 }, { projection: { _id: 0 } }))?._c).toEqual([{ _id: 3 }, { _id: 2 }]);

    await buckets.updateOne({ _u: 'd', '_c._id': 1 }, { $push: { _c: { _id: 4 } } });
    await expect(buckets.insertOne({ _u: 'd', _c: [{ _id: 4 }] })).rejects.toMatchObject({ code: 11000 });
    await buckets.updateOne({ _u: 'd', '_c._id': 1 }, { $set: { _c: [] } });
    await buckets.insertOne({ _u: 'd', _c: [{ _id: 1 }, { _id: 4 }] });
    expect(await buckets.countDocuments({ _u: 'd', '_c._id': { $in: [1, 4] } })).toBe(1);
  });

  it('deletes documents whose array is empty, and keeps the index right for what comes after', async () => {
    await buckets.insertMany([
      { _u: 'c', _c: [] },
      { _u: 'c', _c: [{ _id: 7 }] },
    ]);
    expect((await buckets.deleteMany({ _u: 'c' })).deletedCount).toBe(2);
    expect(await buckets.countDocuments({ _u: 'c' })).toBe(0);
    await buckets.insertOne({ _u: 'c', _c: [{ _id: 7 }] });
    await expect(buckets.insertOne({ _u: 'c', _c: [{ _id: 7 }] })).rejects.toMatchObject({ code: 11000 });
    expect((await buckets.deleteMany({ _u: 'c' })).deletedCount).toBe(1);
  });
});
