import { ObjectId, type AnyBulkWriteOperation, type Collection, type Db, type Document } from 'mongodb';
import { authorPlace, postPlace, type ContentDocument } from '../src/records/posts.js';
import type { FollowPairDocument } from '../src/graph/followPairs.js';
import type { EdgeDocument, UserDocument } from '../src/records/users.js';

export interface GraphSizes {
  users: number;
  followsPerUser: number;
  zipf: number;
  postsPerUser: number;
  days: number;
  seed: number;
}

/** What the measurements need to know about the loaded data, without reading it back. */
export interface GeneratedGraph {
  handles: string[];
  followerCounts: number[];
  followingCounts: number[];
  edges: number;
  posts: number;
  /** The simulated period: every post's `_d` lies in [from, to]. */
  from: Date;
  to: Date;
}

const batchSize = 2000;

/** mulberry32: tiny, fast and good enough to make runs with the same seed load identical data. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const handleOf = (index: number): string => `user_${String(index).padStart(6, '0')}`;

/**
 * Loads users, follows and posts into `db` (expected empty), reporting each written document.
 * Followees are drawn from a Zipf distribution over a shuffled popularity ranking, so a few
 * accounts collect a large share of all follows, as on real networks; the number each user
 * follows is exponential around the mean (many follow a few, some follow many).
 */
export async function generateGraph(
  db: Db,
  sizes: GraphSizes,
  onProgress: (written: number, total: number) => void,
): Promise<GeneratedGraph> {
  const random = seededRandom(sizes.seed);
  const n = sizes.users;
  const handles = Array.from({ length: n }, (_, i) => handleOf(i));

  // Drawn up front so the progress total is known before the first write.
  const maxFollowing = Math.floor((n - 1) / 2); // keeps rejection sampling of distinct followees cheap
  const followingCounts = handles.map(() =>
    Math.min(maxFollowing, Math.round(-Math.log(1 - random()) * sizes.followsPerUser)),
  );
  const edges = followingCounts.reduce((sum, count) => sum + count, 0);
  const posts = n * sizes.postsPerUser;
  const total = 2 * edges + n + posts;
  let written = 0;
  const wrote = (count: number) => onProgress((written += count), total);

  const byRank = shuffle([...handles.keys()], random); // popularity rank -> user index
  const pickRank = zipfSampler(n, sizes.zipf, random);
  const followerCounts = new Array<number>(n).fill(0);

  const followers = db.collection<EdgeDocument>('followers');
  const following = db.collection<EdgeDocument>('following');
  const pairs = db.collection<FollowPairDocument>('follow_pairs');
  const followerOps: EdgeDocument[] = [];
  const followingOps: EdgeDocument[] = [];
  const loadedAt = new Date();
  // Each edge as a follow made through the API leaves it: with its settled pair, so an unfollow
  // in the benchmark takes the path it takes in a service whose follows all came through the API.
  const settledPair = ({ _f, _t }: EdgeDocument): FollowPairDocument => ({ _id: `${_f} ${_t}`, f: _f, t: _t, want: true, v: 1, applied: 1, counted: true, lease: null, dirty: false, updatedAt: loadedAt });
  const flushEdges = async (force: boolean) => {
    if (followingOps.length < batchSize && !(force && followingOps.length > 0)) return;
    const count = followingOps.length;
    await Promise.all([
      insertUnordered(pairs, followingOps.map(settledPair)),
      insertUnordered(following, followingOps.splice(0)),
      insertUnordered(followers, followerOps.splice(0)),
    ]);
    wrote(2 * count);
  };
  for (let follower = 0; follower < n; follower++) {
    const chosen = new Set<number>();
    while (chosen.size < followingCounts[follower]!) {
      const followee = byRank[pickRank()]!;
      if (followee !== follower) chosen.add(followee);
    }
    for (const followee of chosen) {
      followerCounts[followee]!++;
      followingOps.push({ _f: handles[follower]!, _t: handles[followee]! });
      followerOps.push({ _f: handles[followee]!, _t: handles[follower]! });
    }
    await flushEdges(false);
  }
  await flushEdges(true);

  const to = new Date(Date.now() - 60_000);
  const from = new Date(to.getTime() - sizes.days * 86_400_000);
  const createdAt = from;
  const users = db.collection<UserDocument>('users');
  for (let start = 0; start < n; start += batchSize) {
    const docs = handles.slice(start, start + batchSize).map(
      (handle, offset): UserDocument => ({
        _id: handle,
        accountId: `bench-${handle}`,
        displayName: `User ${start + offset}`,
        nameLower: `user ${start + offset}`,
        passwordHash: 'bench-user-without-password', // tokens are minted directly
        createdAt,
        followerCount: followerCounts[start + offset]!,
        followingCount: followingCounts[start + offset]!,
      }),
    );
    await insertUnordered(users, docs);
    wrote(docs.length);
  }

  // Every user writes the same number of posts at random moments; sorted so `_d` (and the
  // ObjectId's embedded time) increase in insertion order, like real posting.
  const times = Array.from({ length: posts }, () => from.getTime() + random() * (to.getTime() - from.getTime()));
  times.sort((a, b) => a - b);
  const authors = shuffle(
    Array.from({ length: posts }, (_, i) => i % n),
    random,
  );
  const content = db.collection<ContentDocument>('content');
  for (let start = 0; start < posts; start += batchSize) {
    const docs: ContentDocument[] = [];
    for (let i = start; i < Math.min(posts, start + batchSize); i++) {
      const d = new Date(Math.floor(times[i]!));
      const author = handles[authors[i]!]!;
      const id = objectIdAt(d, i, authorPlace(author));
      docs.push({ _id: id, s: postPlace(id), _a: author, _m: sentence(random), _d: d });
    }
    await insertUnordered(content, docs);
    wrote(docs.length);
  }

  return { handles, followerCounts, followingCounts, edges, posts, from, to };
}

async function insertUnordered<T extends Document>(collection: Collection<T>, docs: T[]): Promise<void> {
  if (docs.length === 0) return;
  const operations = docs.map((document) => ({ insertOne: { document } }) as AnyBulkWriteOperation<T>);
  await collection.bulkWrite(operations, { ordered: false });
}

/** Returns ranks 0..n-1 with P(rank k) ∝ 1/(k+1)^s, by binary search over the cumulative weights. */
function zipfSampler(n: number, s: number, random: () => number): () => number {
  const cumulative = new Float64Array(n);
  let sum = 0;
  for (let k = 0; k < n; k++) cumulative[k] = sum += 1 / Math.pow(k + 1, s);
  return () => {
    const target = random() * sum;
    let low = 0;
    let high = n - 1;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (cumulative[mid]! < target) low = mid + 1;
      else high = mid;
    }
    return low;
  };
}

function shuffle<T>(items: T[], random: () => number): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

/** An ObjectId whose timestamp is the post's creation second, in its author's place (as `newPostId` makes them), unique by a counter in the rest. */
function objectIdAt(time: Date, counter: number, place: number): ObjectId {
  const bytes = Buffer.alloc(12);
  bytes.writeUInt32BE(Math.floor(time.getTime() / 1000), 0);
  bytes.writeUInt16BE(place, 4);
  bytes.writeUIntBE(counter, 6, 6);
  return new ObjectId(bytes);
}

const words = (
  'the a of to and in is it that for on with as was at by this be from or have an are not but what all ' +
  'were when we there can more if out so up said about than into them only new some could time these two ' +
  'may first then do any like my now over such our man me even most made after also did many before must ' +
  'through back years where much your way well down should because each just those people how too little ' +
  'state good very make world still own see men work long get here between both life being under never day ' +
  'same another know while last might us great old year off come since against go came right used take'
).split(' ');

/** 5 to 30 words: post texts of roughly 25 to 170 characters. */
function sentence(random: () => number): string {
  const count = 5 + Math.floor(random() * 26);
  const picked = Array.from({ length: count }, () => words[Math.floor(random() * words.length)]!);
  return picked.join(' ');
}
