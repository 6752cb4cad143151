import { MongoClient, ObjectId } from 'mongodb';
import { startStandIn } from '/work/main/src/db/standIn.js';
const s = await startStandIn({ log: () => {} });
const c = new MongoClient(s.uri); await c.connect();
const col = c.db('t').collection<any>('tc');
await col.createIndex({ '_c._id': 1 }).catch(() => {});
const pid = new ObjectId();
const ids = Array.from({ length: 10000 }, (_, i) => `fan_${String(i).padStart(5, '0')}`);
await col.insertMany(ids.map((id) => ({ _id: id, _c: [{ _id: pid, t: 'x', a: 'star' }], _h: 'h', _e: '' })));
const end = Date.now() + 12000; let n = 0; const t0 = performance.now();
while (Date.now() < end) { const batch = ids.slice((n % 10) * 1000, (n % 10) * 1000 + 1000); await col.updateMany({ _id: { $in: batch }, '_c._id': pid }, { $set: { '_c.$.t': 'y' + n++ } }); }
console.log('per update ms', ((performance.now() - t0) / n).toFixed(1));
await c.close(); await s.stop();
