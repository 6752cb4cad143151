import { Double, Long, ObjectId, type ChangeStreamDocument, type Collection } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDatabase, type Database } from '../../src/db/connect.js';
import { testDatabaseUri } from '../support/testApp.js';

type Key = number | string | ObjectId | Double | Long;

interface Entry {
  _id: number;
  t: string;
}

interface Holder {
  _id: Key;
  k?: string;
  n?: number;
  _c?: Entry[];
}

const firstId = new ObjectId('64b000000000000000000001');
const secondId = new ObjectId('64b000000000000000000002');
const thirdId = new ObjectId('64b000000000000000000003');
const absentId = new ObjectId('64b0000000000000000000ff');

const keysOf = (documents: { _id: Key }[]) => documents.map((document) => document._id);
const sortedStrings = (keys: Key[]) => keys.map(String).sort();

/**
 * Reads and writes by a list of `_id`s (`_id: {$in: [...]}`), as fanout deliveries and timeline rewrites send
 * them: exactly the listed documents, in `_id` order, whatever the list holds (duplicates, misses, values of
 * several types, 1 and 1.0 as one number), and updates whose positional `$` element and counts are MongoDB's.
 */
describe('queries and updates by a list of _ids', () => {
  let database: Database;

  beforeAll(async () => {
    database = await connectDatabase(testDatabaseUri());
  });
  afterAll(async () => {
    await database?.db.dropDatabase();
    await database?.close();
  });

  describe('reads', () => {
    let holders: Collection<Holder>;

    beforeAll(async () => {
      holders = database.db.collection<Holder>('read_holders');
      // Inserted out of _id order, so that natural order and _id order differ.
      await holders.insertMany([
        { _id: thirdId, k: 'a' },
        { _id: 'b', k: 'b' },
        { _id: 2.5, k: 'a' },
        { _id: firstId, k: 'b' },
        { _id: 'a', k: 'a' },
        { _id: 1, k: 'a' },
        { _id: secondId, k: 'a' },
      ]);
    });

    it('finds exactly the listed documents in _id order without a sort: numbers, then strings, then ObjectIds', async () => {
      const found = await holders.find({ _id: { $in: [thirdId, 'b', absentId, new Double(1), firstId, 'b', 2.5, 'zz', thirdId] } }).toArray();
      expect(keysOf(found)).toEqual([1, 2.5, 'b', firstId, thirdId]);
    });

    it('equates 1, 1.0 and the long 1 as MongoDB does, in a list and alone', async () => {
      for (const one of [1, new Double(1), Long.fromNumber(1)]) {
        expect(keysOf(await holders.find({ _id: { $in: [one] } }).toArray())).toEqual([1]);
        expect(keysOf(await holders.find({ _id: one }).toArray())).toEqual([1]);
      }
      expect(await holders.countDocuments({ _id: { $in: [1, new Double(1), Long.fromNumber(1)] } })).toBe(1);
    });

    it('finds nothing for an empty list or a list of misses', async () => {
      expect(await holders.find({ _id: { $in: [] } }).toArray()).toEqual([]);
      expect(await holders.find({ _id: { $in: [absentId, 'zz', 3] } }).toArray()).toEqual([]);
    });

    it('applies the other predicates beside the list', async () => {
      const found = await holders.find({ _id: { $in: [thirdId, 'b', 1, firstId, 'a'] }, k: 'a' }).toArray();
      expect(sortedStrings(keysOf(found))).toEqual(sortedStrings([thirdId, 1, 'a']));
    });

    it('counts and aggregates exactly the listed documents, duplicates and misses aside', async () => {
      const listed = [secondId, 'a', secondId, absentId, 2.5, 'b', 'zz'];
      expect(await holders.countDocuments({ _id: { $in: listed } })).toBe(4);
      expect(await holders.countDocuments({ _id: { $in: listed }, k: 'a' })).toBe(3);
      expect(await holders.countDocuments({ _id: { $in: listed } }, { limit: 2 })).toBe(2);
      const grouped = await holders
        .aggregate<{ _id: string; n: number }>([
          { $match: { _id: { $in: listed } } },
          { $group: { _id: '$k', n: { $sum: 1 } } },
          { $sort: { _id: 1 } },
        ])
        .toArray();
      expect(grouped).toEqual([
        { _id: 'a', n: 3 },
        { _id: 'b', n: 1 },
      ]);
      const matched = await holders.aggregate<Holder>([{ $match: { _id: { $in: listed }, k: 'b' } }]).toArray();
      expect(keysOf(matched)).toEqual(['b']);
    });
  });

  describe('writes', () => {
    let holders: Collection<Holder>;

    beforeAll(async () => {
      holders = database.db.collection<Holder>('write_holders');
    });

    async function reset(documents: Holder[]): Promise<void> {
      await holders.deleteMany({});
      await holders.insertMany(documents);
    }

    const entries = (...values: [number, string][]) => values.map(([_id, t]) => ({ _id, t }));

    it('updates the first matching element of exactly the listed documents through the positional $', async () => {
      await reset([
        { _id: 'a', _c: entries([1, 'x'], [2, 'x'], [2, 'x']) },
        { _id: 'b', _c: entries([2, 'x']) },
        { _id: 'c', _c: entries([1, 'x']) }, // listed, without the element
        { _id: 'd', _c: entries([2, 'y']) }, // listed, already updated
        { _id: 'e', _c: entries([2, 'x']) }, // not listed
      ]);
      const result = await holders.updateMany({ _id: { $in: ['b', 'a', 'c', 'd', 'zz', 'a'] }, '_c._id': 2 }, { $set: { '_c.$.t': 'y' } });
      expect([result.matchedCount, result.modifiedCount, result.upsertedCount]).toEqual([3, 2, 0]);
      expect(await holders.find().sort({ _id: 1 }).toArray()).toEqual([
        { _id: 'a', _c: entries([1, 'x'], [2, 'y'], [2, 'x']) },
        { _id: 'b', _c: entries([2, 'y']) },
        { _id: 'c', _c: entries([1, 'x']) },
        { _id: 'd', _c: entries([2, 'y']) },
        { _id: 'e', _c: entries([2, 'x']) },
      ]);
    });

    it('finds the positional element by the array predicate whatever else the filter holds', async () => {
      await reset([
        { _id: 'a', k: 'on', _c: entries([1, 'x'], [2, 'x'], [3, 'x']) },
        { _id: 'b', k: 'off', _c: entries([3, 'x']) },
      ]);
      const result = await holders.updateMany(
        { k: 'on', _id: { $in: ['a', 'b'] }, '_c._id': { $gte: 2 } },
        { $set: { '_c.$.t': 'y' } },
      );
      expect([result.matchedCount, result.modifiedCount]).toEqual([1, 1]);
      expect((await holders.findOne({ _id: 'a' }))?._c).toEqual(entries([1, 'x'], [2, 'y'], [3, 'x']));
      expect((await holders.findOne({ _id: 'b' }))?._c).toEqual(entries([3, 'x']));

      const updated = await holders.findOneAndUpdate(
        { _id: { $in: ['a'] }, '_c._id': 3 },
        { $set: { '_c.$.t': 'z' } },
        { returnDocument: 'after' },
      );
      expect(updated?._c).toEqual(entries([1, 'x'], [2, 'y'], [3, 'z']));
    });

    it('counts an update by the list alone, and updates one listed document with updateOne', async () => {
      await reset([
        { _id: firstId, n: 1 },
        { _id: secondId, n: 5 },
        { _id: thirdId, n: 1 },
      ]);
      const listed = [thirdId, firstId, absentId, thirdId, secondId];
      const result = await holders.updateMany({ _id: { $in: listed } }, { $max: { n: 3 } });
      expect([result.matchedCount, result.modifiedCount]).toEqual([3, 2]);
      expect((await holders.find().sort({ _id: 1 }).toArray()).map((holder) => holder.n)).toEqual([3, 5, 3]);

      const one = await holders.updateOne({ _id: { $in: listed } }, { $inc: { n: 10 } });
      expect([one.matchedCount, one.modifiedCount]).toEqual([1, 1]);
      expect(await holders.countDocuments({ n: { $gt: 10 } })).toBe(1);
    });

    it('upserts one document when nothing listed is there, and deletes exactly the listed documents', async () => {
      await reset([{ _id: 'a' }, { _id: 'b' }, { _id: 'c' }]);
      const upsert = await holders.updateMany({ _id: { $in: ['x', 'y'] }, k: 'new' }, { $set: { n: 1 } }, { upsert: true });
      expect([upsert.matchedCount, upsert.modifiedCount, upsert.upsertedCount]).toEqual([0, 0, 1]);
      const upserted = await holders.findOne({ _id: upsert.upsertedId! });
      expect(upserted).toMatchObject({ k: 'new', n: 1 });

      const removed = await holders.deleteMany({ _id: { $in: ['c', 'zz', 'a', 'c'] } });
      expect(removed.deletedCount).toBe(2);
      expect(sortedStrings(keysOf(await holders.find().toArray()))).toEqual(sortedStrings(['b', upsert.upsertedId as Key]));
    });

    it('reports each document a listed update changed to a change stream, and none it left alone', async () => {
      await reset([
        { _id: 'a', _c: entries([2, 'x']) },
        { _id: 'b', _c: entries([1, 'x'], [2, 'x']) },
        { _id: 'c', _c: entries([2, 'y']) },
        { _id: 'd', _c: entries([2, 'x']) },
      ]);
      const stream = holders.watch<Holder>([], { fullDocument: 'updateLookup', maxAwaitTimeMS: 200 });
      try {
        await stream.tryNext(); // change streams start on the first read
        await holders.updateMany({ _id: { $in: ['a', 'b', 'c'] }, '_c._id': 2 }, { $set: { '_c.$.t': 'y' } });
        await holders.insertOne({ _id: 'end' });
        const events: ChangeStreamDocument<Holder>[] = [];
        for (let i = 0; i < 3; i++) events.push(await stream.next());
        const updates = events.slice(0, 2).map((event) => {
          if (event.operationType !== 'update') throw new Error(`expected an update, got ${event.operationType}`);
          return event.fullDocument;
        });
        expect(updates.sort((x, y) => String(x?._id).localeCompare(String(y?._id)))).toEqual([
          { _id: 'a', _c: entries([2, 'y']) },
          { _id: 'b', _c: entries([1, 'x'], [2, 'y']) },
        ]);
        expect(events[2]).toMatchObject({ operationType: 'insert', documentKey: { _id: 'end' } });
      } finally {
        await stream.close();
      }
    });
  });
});
