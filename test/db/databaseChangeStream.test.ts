import type { ChangeStream, ChangeStreamDocument, ChangeStreamInsertDocument, ChangeStreamUpdateDocument, CommandStartedEvent, Document, ResumeToken } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDatabase, type Database } from '../../src/db/connect.js';
import { testDatabaseUri } from '../support/testApp.js';

/**
 * The MongoDB behaviour the live events rely on (changes/changeStreamEvents.ts): one change stream
 * over a database carries the inserts of several collections in the order they were made, each
 * naming its collection, filtered on the server, and resumes after a token it gave.
 */
describe('a change stream over a whole database', () => {
  let database: Database;
  const watched = ['db_stream_events', 'db_stream_posts'];
  const pipeline = [{ $match: { operationType: 'insert', 'ns.coll': { $in: watched } } }];

  const next = async <C extends ChangeStreamDocument>(stream: ChangeStream<Document, C>) => {
    for (let tries = 0; tries < 50; tries++) {
      const change = await stream.tryNext();
      if (change) return change;
    }
    throw new Error('no change arrived');
  };

  beforeAll(async () => {
    database = await connectDatabase(testDatabaseUri(), { monitorCommands: true });
  });
  afterAll(async () => {
    await database?.db.dropDatabase();
    await database?.close();
  });

  it('carries the inserts of the collections it names, in commit order, each with its collection', async () => {
    const { db } = database;
    const collection = (name: string) => db.collection<{ _id: number } & Document>(name);
    const stream = db.watch<Document, ChangeStreamInsertDocument>(pipeline, { maxAwaitTimeMS: 100 });
    await stream.tryNext(); // a change stream starts on its first read
    await collection('db_stream_posts').insertOne({ _id: 1, text: 'first' });
    await collection('db_stream_other').insertOne({ _id: 2 });
    await collection('db_stream_events').insertOne({ _id: 3, kind: 'removed', postId: 1 });
    await collection('db_stream_posts').updateOne({ _id: 1 }, { $set: { text: 'edited' } });
    await collection('db_stream_posts').insertOne({ _id: 4, text: 'second' });

    const seen: [string, unknown, unknown][] = [];
    let token: ResumeToken | undefined;
    for (let i = 0; i < 3; i++) {
      const change = await next(stream);
      seen.push([change.ns.coll!, change.documentKey._id, change.fullDocument]);
      if (i === 0) token = change._id;
    }
    await stream.close();
    expect(seen).toEqual([
      ['db_stream_posts', 1, { _id: 1, text: 'first' }],
      ['db_stream_events', 3, { _id: 3, kind: 'removed', postId: 1 }],
      ['db_stream_posts', 4, { _id: 4, text: 'second' }],
    ]);

    // Resumed after the first event: the rest again, in the same order.
    const resumed = db.watch<Document, ChangeStreamInsertDocument>(pipeline, { startAfter: token, maxAwaitTimeMS: 100 });
    const again = [(await next(resumed)).documentKey._id, (await next(resumed)).documentKey._id];
    await resumed.close();
    expect(again).toEqual([3, 4]);
  });

  it('carries the field an update sets, whole, even where it replaces one of the same shape', async () => {
    const { db } = database;
    const pairs = db.collection<{ _id: string; v: number; ev?: { t: string; on: boolean; n?: { handle: string; version: number }[] } }>('db_stream_pairs');
    await pairs.insertOne({ _id: 'ann bob', v: 1, ev: { t: 'a', on: true, n: [{ handle: 'ann', version: 1 }] } });
    const stream = db.watch<Document, ChangeStreamUpdateDocument>([{ $match: { operationType: 'update', 'ns.coll': 'db_stream_pairs', 'updateDescription.updatedFields.ev': { $exists: true } } }], {
      maxAwaitTimeMS: 100,
    });
    await stream.tryNext();
    await pairs.updateOne({ _id: 'ann bob' }, { $set: { v: 2 } }); // no `ev`: not matched
    await pairs.findOneAndUpdate({ _id: 'ann bob' }, { $set: { v: 3, ev: { t: 'b', on: false, n: [{ handle: 'ann', version: 2 }] } } });
    const { ns, documentKey, updateDescription } = await next(stream);
    await stream.close();
    expect([ns.coll, documentKey._id]).toEqual(['db_stream_pairs', 'ann bob']);
    expect(updateDescription.updatedFields?.ev).toEqual({ t: 'b', on: false, n: [{ handle: 'ann', version: 2 }] });
  });

  it('reports each write as it was made, whatever later writes change in the document', async () => {
    const { db } = database;
    const edges = db.collection<{ _id: string; n: { c: number }; an?: { t: string; e: { ch: number; kind: string }[] } }>('db_stream_edges');
    const stream = db.watch<Document, ChangeStreamInsertDocument | ChangeStreamUpdateDocument>(
      [{ $match: { 'ns.coll': 'db_stream_edges', $or: [{ operationType: 'insert' }, { 'updateDescription.updatedFields.an.e.ch': { $in: [3] } }] } }],
      { maxAwaitTimeMS: 100 },
    );
    await stream.tryNext();
    await edges.insertOne({ _id: 'ann', n: { c: 1 } });
    await edges.updateOne({ _id: 'ann' }, { $set: { 'n.c': 2, an: { t: 'a', e: [{ ch: 7, kind: 'other' }] } } }); // no event of channel 3: not matched
    await edges.findOneAndUpdate({ _id: 'ann' }, { $set: { an: { t: 'b', e: [{ ch: 5, kind: 'counted' }, { ch: 3, kind: 'notified' }] } } });
    // Later writes change the same document in place, before the stream reads anything.
    await edges.updateOne({ _id: 'ann' }, { $set: { 'n.c': 3, 'an.e.1.kind': 'changed' }, $unset: { 'an.t': '' } });
    const inserted = (await next(stream)) as ChangeStreamInsertDocument;
    const updated = (await next(stream)) as ChangeStreamUpdateDocument;
    await stream.close();
    expect(inserted.fullDocument).toEqual({ _id: 'ann', n: { c: 1 } });
    expect(updated.updateDescription.updatedFields?.an).toEqual({ t: 'b', e: [{ ch: 5, kind: 'counted' }, { ch: 3, kind: 'notified' }] });
  });

  it('loses no insert while other collections are written beside it from many connections', async () => {
    const { db } = database;
    const stream = db.watch<Document, ChangeStreamInsertDocument>([{ $match: { operationType: 'insert', 'ns.coll': 'db_stream_watched' } }], { maxAwaitTimeMS: 100 });
    await stream.tryNext();
    const writers = 16;
    const each = 40;
    const seen = new Set<unknown>();
    let writing = true;
    // The stream reads while the writes go on, as a server's does.
    const reading = (async () => {
      for (let empty = 0; seen.size < writers * each && (writing || empty < 20); ) {
        const change = await stream.tryNext();
        if (change) seen.add(change.documentKey._id);
        else if (!writing) empty++;
      }
    })();
    await Promise.all(
      Array.from({ length: writers }, async (_, writer) => {
        for (let i = 0; i < each; i++) {
          await Promise.all([
            db.collection<{ _id: number }>('db_stream_watched').insertOne({ _id: writer * each + i }),
            db.collection<{ w: number }>('db_stream_unwatched').insertOne({ w: writer }),
          ]);
        }
      }),
    );
    writing = false;
    await reading;
    await stream.close();
    expect(seen.size).toBe(writers * each);
  });

  it('wakes a waiting read when a watched collection is written', async () => {
    const { db, client } = database;
    const stream = db.watch<Document, ChangeStreamInsertDocument>(pipeline, { maxAwaitTimeMS: 5_000 });
    const getMores: unknown[] = [];
    const record = (event: CommandStartedEvent) => void (event.commandName === 'getMore' && getMores.push(event.command.collection));
    client.on('commandStarted', record);
    await stream.tryNext();
    client.off('commandStarted', record);
    // Its reads name no collection: they are told apart from a request's by this (test/support/testApp.ts).
    expect(getMores).toEqual(['$cmd.aggregate']);
    const started = Date.now();
    const arrived = stream.next();
    setTimeout(() => void db.collection<{ _id: number }>('db_stream_events').insertOne({ _id: 10 }), 50);
    expect((await arrived).documentKey._id).toBe(10);
    await stream.close();
    // Not at the end of the wait (5 s): a parked read answers as soon as the write is made, in milliseconds.
    expect(Date.now() - started).toBeLessThan(4_000);
  });
});
