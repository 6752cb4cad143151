/**
 * What `_id: {$in: [...]}` lists cost the stand-in (the figures in mongo-standin/README.md):
 * `npx tsx mongo-standin/bench/inLists.ts [jar]` (default: the built mongo-standin/target/mongo-standin.jar).
 * 10,000 small documents with ObjectId `_id`s; 12 rounds of all cases, the first 5 to warm up; per case the
 * median (min, max) of the other 7, in ms.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { MongoClient, ObjectId } from 'mongodb';

const jar = process.argv[2] ?? new URL('../target/mongo-standin.jar', import.meta.url).pathname;
const java = spawn('java', ['-XX:+UseSerialGC', '-jar', jar], { stdio: ['pipe', 'pipe', 'inherit'] });
const uri = await new Promise<string>((resolve) => {
  createInterface({ input: java.stdout }).on('line', (line) => {
    if (line.startsWith('MONGODB_URI=')) resolve(line.slice('MONGODB_URI='.length));
  });
});
const client = await MongoClient.connect(uri);
try {
  const documents = client.db('bench').collection<{ _id: ObjectId; _c: { _id: number; t: string }[] }>('in_lists');
  const allIds = Array.from({ length: 10_000 }, () => new ObjectId());
  await documents.insertMany(allIds.map((_id) => ({ _id, _c: [{ _id: 1, t: 'x' }, { _id: 2, t: 'x' }] })));
  const ids = (count: number) => allIds.slice(0, count);
  let flip = 0;
  const cases: [string, () => Promise<unknown>][] = [
    ['countDocuments, 1,000 ids', () => documents.countDocuments({ _id: { $in: ids(1_000) } })],
    ['countDocuments, 4,000 ids', () => documents.countDocuments({ _id: { $in: ids(4_000) } })],
    ['find, 1,000 ids', () => documents.find({ _id: { $in: ids(1_000) } }).toArray()],
    ['find, 4,000 ids', () => documents.find({ _id: { $in: ids(4_000) } }).toArray()],
    ['updateMany positional, 1,000 ids', () =>
      documents.updateMany({ _id: { $in: ids(1_000) }, '_c._id': 2 }, { $set: { '_c.$.t': `y${flip++}` } })],
    ['updateMany positional, 4,000 ids', () =>
      documents.updateMany({ _id: { $in: ids(4_000) }, '_c._id': 2 }, { $set: { '_c.$.t': `y${flip++}` } })],
  ];
  const times = new Map<string, number[]>(cases.map(([name]) => [name, []]));
  for (let round = 0; round < 12; round++) {
    for (const [name, run] of cases) {
      const start = performance.now();
      await run();
      if (round >= 5) times.get(name)!.push(performance.now() - start); // the first rounds warm the JIT up
    }
  }
  for (const [name, measured] of times) {
    measured.sort((a, b) => a - b);
    console.log(`${name}: ${measured[3]!.toFixed(1)} ms (min ${measured[0]!.toFixed(1)}, max ${measured[6]!.toFixed(1)})`);
  }
} finally {
  await client.close();
  java.stdin.end();
}
