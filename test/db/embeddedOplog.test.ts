import { MongoClient, type Db } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStandIn, type StandIn } from '../../src/db/standIn.js';

/**
 * The embedded database (the stand-in `npm start` runs when no MONGODB_URI is given), whatever
 * database the rest of the suite uses: its oplog is capped by entry count and its collection
 * statistics are computed when asked (mongo-standin/README.md), neither of which a real MongoDB
 * shares, so this file always starts one of its own.
 */
describe('the embedded database', () => {
  let standIn: StandIn;
  let client: MongoClient;
  let db: Db;

  beforeAll(async () => {
    standIn = await startStandIn();
    client = new MongoClient(standIn.uri);
    await client.connect();
    db = client.db('embedded');
  }, 120_000);

  afterAll(async () => {
    await client?.close();
    await standIn?.stop();
  });

  it('keeps the newest 10,000 to 11,000 oplog entries however long it runs, and a change stream resumes inside them', async () => {
    const writes = db.collection<{ _id: number }>('writes');
    const oplog = client.db('local').collection<{ ns: string; o: { _id?: number } }>('oplog.rs');
    let resumeToken: unknown;
    for (let batch = 0; batch < 40; batch++) {
      // A stream's token for the first write of batch 36, as a client that stopped reading there holds it.
      const recent = batch === 36 ? writes.watch() : null;
      await recent?.tryNext(); // change streams start on the first read
      await writes.insertMany(Array.from({ length: 500 }, (_, i) => ({ _id: batch * 500 + i })));
      if (recent) {
        await recent.next();
        resumeToken = recent.resumeToken;
        await recent.close();
      }
    }

    const entries = await oplog.countDocuments({ ns: 'embedded.writes' });
    expect(entries).toBeGreaterThanOrEqual(10_000);
    expect(entries).toBeLessThanOrEqual(11_000);
    // Every write newer than the oldest kept one is still there: what goes is always the oldest.
    const oldestKept = (await oplog.find({ ns: 'embedded.writes' }).toArray()).reduce((min, entry) => Math.min(min, entry.o._id!), Infinity);
    expect(oldestKept).toBe(20_000 - entries);

    const resumed = writes.watch([], { resumeAfter: resumeToken });
    const firstAfter = await resumed.next();
    await resumed.close();
    expect(firstAfter.operationType === 'insert' && firstAfter.documentKey._id).toBe(18_001);
  }, 60_000);

  it('reports a collection size that follows inserts, updates and deletes', async () => {
    const notes = db.collection<{ _id: string; text: string }>('notes');
    await notes.insertMany(Array.from({ length: 10 }, (_, i) => ({ _id: `n${i}`, text: 'x'.repeat(100) })));
    const size = async () => ((await db.command({ collStats: 'notes' })) as { size: number }).size;
    const inserted = await size();
    await notes.updateOne({ _id: 'n0' }, { $set: { text: 'x'.repeat(5_100) } });
    expect((await size()) - inserted).toBe(5_000);
    await notes.deleteOne({ _id: 'n1' });
    const deleted = await size();
    expect(inserted + 5_000 - deleted).toBeGreaterThan(100);
    await notes.deleteMany({});
    expect(await size()).toBe(0);
  });
});
