/**
 * `npm run bench:cache-push`: what one delivery into 50-entry timeline caches costs the database,
 * per cache, in the shape the cache strategy sends (a capped `$push` with `$sort`, guarded against
 * a second delivery and against landing below the oldest entry) and without each of those, down to
 * Socialite's capped `$push`. Ten caches a delivery, one bulk write, one delivery at a time.
 * MONGODB_URI (if set) is used, in a database dropped at the end; otherwise the embedded stand-in.
 */
import { MongoClient, type Document } from 'mongodb';
import { parseArgs } from 'node:util';
import { withDatabaseName } from '../src/db/connect.js';
import { aboveOldestOrWhole, entryOrder } from '../src/feed/strategies/cacheDocument.js';
import { newBody, newPostId, toEntryDocument, type EntryDocument, type PostRecord } from '../src/records/posts.js';
import { int } from './options.js';
import { benchDatabaseServer } from './prepare.js';

const usage = `Usage: npm run bench:cache-push -- [options]

  --caches <n>       caches in the collection (default 2000)
  --recipients <n>   caches each delivery reaches (default 10)
  --deliveries <n>   measured deliveries per shape and round (default 100)
  --rounds <n>       rounds, each shape once per round; the first is not counted (default 6)
`;

const cacheSize = 50;

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    strict: true,
    options: { caches: { type: 'string' }, recipients: { type: 'string' }, deliveries: { type: 'string' }, rounds: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
  if (values.help) return void console.error(usage);
  const caches = int('caches', values.caches, 2000, 10);
  const recipients = int('recipients', values.recipients, 10, 1);
  const deliveries = int('deliveries', values.deliveries, 100, 1);
  const rounds = int('rounds', values.rounds, 6, 2);

  const server = await benchDatabaseServer();
  const client = await MongoClient.connect(withDatabaseName(server.uri, 'bench_cache_push'));
  try {
    const timelines = client.db().collection<{ _id: string; _c: EntryDocument[]; _h: string }>('timeline_cache');
    await timelines.deleteMany({});
    let clock = Date.UTC(2026, 0, 1);
    const nextPost = (): PostRecord => {
      const authorId = `author${Math.floor(Math.random() * 50)}`;
      const body = newBody('a post of about sixty characters, as most posts here are long');
      return { id: newPostId(authorId), authorId, createdAt: new Date((clock += 1000)), pulled: false, replyTo: null, repostOf: null, counts: null, body };
    };
    const entry = (post: PostRecord): EntryDocument => toEntryDocument(post, 'embed');
    for (let i = 0; i < caches; i++) {
      await timelines.insertOne({ _id: `user${i}`, _c: Array.from({ length: cacheSize }, () => entry(nextPost())), _h: 'bench' });
    }

    // The delivery's shapes: the guard and the sort each taken away, then both.
    const guard = (post: PostRecord) => ({ '_c._id': { $ne: post.id }, $or: aboveOldestOrWhole(post) });
    const push = (post: PostRecord, sorted: boolean): Document => ({ $push: { _c: { $each: [entry(post)], ...(sorted ? { $sort: entryOrder } : {}), $slice: -cacheSize } } });
    const shapes: Record<string, (post: PostRecord, userId: string) => { filter: Document; update: Document }> = {
      'guarded, sorted (the cache strategy)': (post, userId) => ({ filter: { _id: userId, ...guard(post) }, update: push(post, true) }),
      'guarded, not sorted': (post, userId) => ({ filter: { _id: userId, ...guard(post) }, update: push(post, false) }),
      'sorted, not guarded': (post, userId) => ({ filter: { _id: userId }, update: push(post, true) }),
      "neither (Socialite's push)": (post, userId) => ({ filter: { _id: userId }, update: push(post, false) }),
    };
    const spent = new Map<string, number>();
    let delivery = 0;
    for (let round = 0; round < rounds; round++) {
      for (const [name, shape] of Object.entries(shapes)) {
        const started = performance.now();
        for (let i = 0; i < deliveries; i++, delivery++) {
          const post = nextPost();
          const reached = Array.from({ length: recipients }, (_, j) => `user${(delivery * recipients + j) % caches}`);
          await timelines.bulkWrite(reached.map((userId) => ({ updateOne: shape(post, userId) })), { ordered: false });
        }
        if (round > 0) spent.set(name, (spent.get(name) ?? 0) + performance.now() - started);
      }
    }
    console.log(`\n${recipients} caches of ${cacheSize} entries a delivery, ${deliveries} deliveries a round, ${rounds - 1} rounds counted\n`);
    console.log('| shape | ms per cache |\n|---|--:|');
    for (const [name, ms] of spent) console.log(`| ${name} | ${(ms / ((rounds - 1) * deliveries * recipients)).toFixed(3)} |`);
    await client.db().dropDatabase();
  } finally {
    await client.close();
    await server.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
