import type { Collection, Db, Document, IndexDescription } from 'mongodb';

/**
 * How every collection this service creates would be split over a sharded cluster: its shard key,
 * or why it stays on one shard and what keeps it small. Collections are opened through
 * `plannedCollection`, whose name must be one of this table's, so a new collection without a plan
 * does not compile; `plannedIndexes` creates each key's index and refuses a unique index the key
 * would break. `npm run --silent shard-keys` prints the table, and test/db/shardPlan.test.ts runs
 * every operation of the API and fails on a command that would reach every shard without being
 * listed here as such by design. docs/scaling.md explains each choice.
 */
export const shardPlan = {
  users: {
    key: { _id: 'hashed' },
    why: 'every per-request read is by handle; a page of authors or a delivery batch asks the shards of the handles it names',
    everyShard: [
      { command: 'find', fields: ['_id', 'deletedAt', 'suspended'], why: 'people search by handle prefix: at most `first` (20) answers from each shard' },
      { command: 'find', fields: ['deletedAt', 'nameLower', 'suspended'], why: 'people search by display name prefix: at most `first` (20) answers from each shard' },
      { command: 'find', fields: ['hidden'], why: "an unsuspension finding whose counts its suspension changed: once per unsuspension, indexed to the suspended account's followers and followees" },
      { command: 'update', fields: ['hidden'], why: 'an unsuspension putting those counts back: once per kind of count per unsuspension, indexed likewise' },
    ],
  },
  followers: { key: { _f: 1, _t: 1 }, why: "an author's followers are one range, split by follower for the largest accounts: a delivery sub-task reads one chunk range" },
  following: { key: { _f: 1, _t: 1 }, why: 'whom a reader follows is one range: every page reads it from one shard' },
  follow_pairs: {
    key: { _id: 'hashed' },
    why: 'every request names its pair',
    everyShard: [
      { command: 'find', fields: ['dirty', 'updatedAt'], why: "the sweep finishing follows whose request died: once a second per worker process, indexed to the pairs in flight" },
      { command: 'find', fields: ['tp'], why: 'the sweep pruning settled tokens: once a second per worker process, at most 500 pairs, indexed to those with tokens' },
      { command: 'delete', fields: ['$or', 'dirty'], why: "a deleted account's pairs, either side: once per account deletion, indexed by each side" },
      { command: 'find', fields: ['$or', 'g'], why: 'the next actor of a FOLLOW group shown in full (20) after a shown one leaves: indexed by group' },
      { command: 'find', fields: ['gc.to'], why: 'the follows joining a FOLLOW group, read only on that careful path: indexed by group' },
      { command: 'find', fields: ['t', 'rq'], why: "a locked account's follow requests, oldest first (its requests page, its unlock's approvals): indexed by followee, one page at a time" },
      { command: 'aggregate', fields: ['t', 'rq'], why: "how many follow requests wait for a locked account, with its requests page: a count on the same index" },
    ],
  },
  reader_filters: {
    key: { _id: 'hashed' },
    why: "one document per reader, read by the reader's handle",
    everyShard: [{ command: 'update', fields: ['$or'], why: "a deleted account leaves others' mutes and blocks: once per account deletion, indexed" }],
  },
  lists: {
    key: { _o: 1, s: 1 },
    why: 'lists are private: every read names the owner, and an owner\'s lists are one range (the unique place of each)',
    everyShard: [{ command: 'find', fields: ['deletingAt'], why: 'the sweep finishing list deletions whose request died: once a second per worker process, indexed to lists being deleted' }],
  },
  rate_limits: { key: { key: 1 }, why: 'every request names the limit it counts' },
  content: {
    key: { s: 1, _id: 1 },
    why: "a post's place (`s`, one of 4,096, chosen by its author's handle) is written into its id: an author's posts are one place, and a post by id, its counters and a page of posts by id name theirs (records/posts.ts)",
    everyShard: [
      { command: 'find', fields: ['sh'], why: 'an unsuspension finding the posts whose counts its suspension changed: twice per unsuspension, indexed to the posts the account liked or reposted' },
      { command: 'update', fields: ['sh'], why: 'an unsuspension putting those counts back: twice per unsuspension, indexed likewise' },
      { command: 'find', fields: ['_cq', '_d'], why: 'the sweep counting replies whose request died: once a second per worker process, indexed to uncounted replies' },
      { command: 'find', fields: ['_to'], why: 'a deleted account leaves the audiences of posts addressed to it: once per account deletion, indexed' },
      { command: 'find', fields: ['$or'], why: "a reader's inbox: the mentioned-only posts addressed to them come from any author; asked only by readers someone addressed (their feed state says so), one indexed query per page" },
      { command: 'find', fields: ['$and'], why: "a post's replies, its thread's descendants and its quotes come from any author: one indexed query per page, at most `first` (50) answers from each shard" },
      { command: 'find', fields: ['_o', '_r._id', '_rt'], why: "the migration giving replies stored before replies kept their thread place theirs: `_rt` absent, once per database" },
      { command: 'find', fields: ['_qc', '_d'], why: 'the sweep counting quotes whose request died: once a second per worker process, indexed to uncounted quotes' },
      { command: 'find', fields: ['_o._id'], why: "a deleted post's reposts, by whoever made them: once per deleted post, indexed by original" },
      { command: 'find', fields: ['_o._a'], why: "reposts of a deleted account's posts: once per account deletion, indexed by original author" },
      { command: 'count', fields: ['_v'], why: 'rebuilding timelines counts and reads every public post: an operator command, never a request' },
      { command: 'find', fields: ['_v'], why: 'rebuilding timelines counts and reads every public post: an operator command, never a request' },
      { command: 'count', fields: ['sx'], why: 'once per start: whether posts stored before ids carried their place remain away from their authors' },
      { command: 'find', fields: ['_w', '_v'], why: "a tag's public posts (a tag page, the followed tags of a home page) come from any author: one query per page on the `discovery_newest_first` index, at most a page (+1) from each shard, merged by mongos in index order" },
      { command: 'find', fields: ['_w', '_v', '$and'], why: "the same, past a cursor" },
      { command: 'find', fields: ['_w', '$and'], why: "a post search: one query per round of a page on the `discovery_newest_first` index (equality on the query's longest token), at most a page (+1) from each shard" },
      { command: 'find', fields: ['s'], why: "the migration giving posts stored before ids carried their place theirs: `s` absent, once per database" },
    ],
  },
  deleted_posts: {
    key: { _id: 'hashed' },
    why: 'read by the id of the deleted post',
    everyShard: [
      { command: 'find', fields: ['uncount.at'], why: 'the sweep uncounting deleted replies: once a second per worker process, indexed to those pending' },
      { command: 'find', fields: ['unquote.at'], why: 'the sweep uncounting deleted quotes: once a second per worker process, indexed to those pending' },
    ],
  },
  likes: { key: { u: 1, r: 1 }, why: "a page asks which of its posts the viewer liked: the viewer's edges are one range", everyShard: interactionScans('likes') },
  reposts: { key: { u: 1, r: 1 }, why: "a page asks which of its posts the viewer reposted: the viewer's edges are one range", everyShard: interactionScans('reposts') },
  bookmarks: {
    key: { u: 1 },
    why: "a reader's bookmarks page and a page's viewer states are the reader's range",
    everyShard: [{ command: 'delete', fields: ['p'], why: "a deleted post's bookmarks, whoever made them: once per deleted post, indexed by post" }],
  },
  notifications: {
    key: { r: 1 },
    why: "a recipient's page is their range, and every write names the recipient",
    everyShard: [
      {
        command: 'delete',
        fields: ['p'],
        why: "a deleted post's notifications: its likes' and reposts' groups, and the reply or mentions it made, for several recipients; twice per deleted post, indexed by post",
      },
      { command: 'find', fields: ['sh'], why: 'a suspension finding the groups it left its actor out of (its second pass, its unsuspension): indexed to those groups' },
      { command: 'update', fields: ['sh'], why: 'an unsuspension counting its actor back in those groups, and showing its posts\' notifications again: twice per unsuspension, indexed likewise' },
      { command: 'update', fields: ['k', 'p', 'sh'], why: "a suspension hiding the notifications its posts made (replies, mentions, quotes) for any recipients: once per 1,000 of its posts, indexed by post" },
    ],
  },
  pins: { key: { _id: 'hashed' }, why: "one document per author, read by the author's handle (a profile's pins, a page's `pinned`)" },
  notification_markers: { key: { _id: 'hashed' }, why: "one document per reader, read by the reader's handle" },
  timed_buckets: { key: { '_id._u': 1 }, why: "a reader's buckets are one range" },
  sized_buckets: { key: { _u: 1 }, why: "a reader's buckets are one range" },
  timeline_cache: { key: { _id: 'hashed' }, why: 'one document per reader' },
  media: {
    key: { _id: 'hashed' },
    why: "every serve, attach and alt text change names the image; a post's images are named by the ids its body carries",
    everyShard: [
      { command: 'update', fields: ['owner', 'state'], why: "a deleted account's uploads stop answering: once per account deletion, indexed by owner" },
      { command: 'find', fields: ['owner'], why: "a deleted account's uploads, deleted 100 at a time: once per account deletion, indexed by owner" },
      { command: 'find', fields: ['at', 'state'], why: 'the sweep of uploads stalled while storing: at most every few seconds per worker process, indexed by state and age' },
      { command: 'find', fields: ['at', 'post', 'state'], why: 'the sweep of uploads never attached within MEDIA_ORPHAN_HOURS: at most every few seconds per worker process, indexed by state and age' },
      { command: 'find', fields: ['goneAt', 'state'], why: 'the sweep finishing deletions whose request died: at most every few seconds per worker process, indexed by state and age' },
      { command: 'find', fields: ['claimedAt'], why: 'the sweep confirming attachments: at most every few seconds per worker process, indexed to attachments not yet confirmed' },
      { command: 'find', fields: ['editedAt'], why: 'the sweep finishing alt text changes whose request died: at most every few seconds per worker process, indexed to changes under way' },
    ],
  },
  'media_bytes.files': { key: { _id: 'hashed' }, why: "GridFS's file documents, read and deleted by the ids the `media` document names" },
  'media_bytes.chunks': { key: { files_id: 1, n: 1 }, why: "GridFS's chunks: a file's are one range, read in order while serving (the key GridFS's documentation gives)" },
  fanout_tasks: {
    unsharded: 'pending work only: a task is deleted when done, so its size is the backlog; claiming takes the oldest due tasks of the whole queue, which one shard answers from one index',
  },
  live_events: {
    key: { ch: 1, _id: 1 },
    why: 'written once and read only by change streams: each event names its partition or one of 16 broadcast channels (changes/partitions.ts), so inserts spread over the shards by channel, and an instance group\'s stream filters on `ch` on every shard before anything is sent (docs/live.md, instance groups)',
  },
  // Discovery (docs/discovery.md): trends counted per tag and hour, and each account's latest use of a tag.
  tag_hours: {
    key: { _id: 'hashed' },
    why: "each post's counting names its (hour, tag) buckets: the writes of one busy hour spread over the shards instead of one hot chunk",
    everyShard: [{ command: 'aggregate', fields: ['h'], why: 'the trending ranking: the last 24 hours of buckets, indexed by hour, read at most every 30 s per instance' }],
  },
  tag_uses: { key: { _id: 'hashed' }, why: "each post's counting names its (tag, account) pairs" },
  fanout_stats: { unsharded: 'one document per minute of deliveries, kept an hour: at most 60' },
  feed_meta: { unsharded: 'a handful of documents: the token secret and the timeline state' },
  migrations: { unsharded: 'one document per migration this code knows' },
  reports: {
    unsharded: "made by people, rate limited (RATE_LIMIT_REPORTS_PER_HOUR) and read by staff oldest open first: one shard answers the staff's list from one index, and one open report per reporter and target stays unique without a shard key in it",
  },
  audit_log: { unsharded: 'one entry per staff action: written once, never changed, read newest first by the staff command' },
} as const satisfies Record<string, CollectionPlan>;

/** What reaches every shard of `likes` or `reposts`: the sweep's, a deleted post's, and a notification group's few scans. */
function interactionScans(name: 'likes' | 'reposts'): EveryShardShape[] {
  return [
    { command: 'find', fields: ['at', 'state'], why: `the sweep finishing ${name} whose request died: once a second per worker process, indexed to those in flight` },
    { command: 'find', fields: ['tp'], why: 'the sweep pruning settled tokens: once a second per worker process, at most 500 edges, indexed to those with tokens' },
    { command: 'delete', fields: ['p'], why: `a deleted post's ${name}, whoever made them: twice per deleted post, indexed by post` },
    { command: 'find', fields: ['$or', 'g'], why: 'the next actor of a group shown in full (20) after a shown one leaves: indexed by group' },
    { command: 'find', fields: ['gc.to'], why: 'the members joining a group, read only on that careful path: indexed by group' },
  ];
}

export type PlannedCollectionName = keyof typeof shardPlan;

/** MongoDB's shard keys are ascending ranges or hashed: no descending field. */
export type ShardKey = Readonly<Record<string, 1 | 'hashed'>>;

/** A command shape that reaches every shard on purpose: the command and the fields its filter names, with why and what bounds it. */
export interface EveryShardShape {
  readonly command: 'find' | 'aggregate' | 'update' | 'delete' | 'findAndModify' | 'count' | 'distinct';
  readonly fields: readonly string[];
  readonly why: string;
}

export type CollectionPlan =
  | { readonly key: ShardKey; readonly why: string; readonly everyShard?: readonly EveryShardShape[] }
  | { readonly unsharded: string };

/** The one way the service opens a collection: only planned names compile. */
export function plannedCollection<T extends Document>(db: Db, name: PlannedCollectionName): Collection<T> {
  return db.collection<T>(name);
}

/**
 * Creates `indexes` on a planned collection, after checking each unique one against its shard key:
 * MongoDB keeps an index unique across shards only when it starts with the shard key, so start-up
 * fails on a unique index the plan would break. (The index a key needs is made by
 * `shardCollection`, when a deployment shards the collection: docs/scaling.md.)
 */
export async function plannedIndexes(collection: Collection<any>, indexes: readonly IndexDescription[]): Promise<void> {
  const plan: CollectionPlan | undefined = (shardPlan as Record<string, CollectionPlan>)[collection.collectionName];
  if (!plan) throw new Error(`collection ${collection.collectionName} has no shard plan (src/db/shardPlan.ts)`);
  for (const index of indexes) {
    if (index.unique && 'key' in plan && !startsWithKey(index.key as Record<string, unknown>, plan.key)) {
      throw new Error(`unique index ${index.name} of ${collection.collectionName} does not start with its shard key ${JSON.stringify(plan.key)}`);
    }
  }
  await collection.createIndexes([...indexes]);
}

/**
 * A TTL index of `field` on a planned collection, made or changed to `expireAfterSeconds`: a
 * retention setting changed since the index was made is applied with `collMod`.
 */
export async function plannedExpiry(db: Db, collection: Collection<any>, field: string, name: string, expireAfterSeconds: number): Promise<void> {
  const index = { name, expireAfterSeconds };
  try {
    await plannedIndexes(collection, [{ key: { [field]: 1 }, ...index }]);
  } catch (error) {
    // IndexOptionsConflict: the index exists with another period.
    if ((error as { code?: unknown }).code !== 85) throw error;
    await db.command({ collMod: collection.collectionName, index });
  }
}

function startsWithKey(index: Record<string, unknown>, key: ShardKey): boolean {
  const indexFields = Object.keys(index);
  return Object.keys(key).every((field, i) => indexFields[i] === field);
}

/** How many shards a command would reach: one key value, several named values, or every shard. */
export type Reach = 'one' | 'named' | 'every';

/**
 * The reach of a filter on a collection with this key: `one` when it fixes the key (the hashed
 * field, or a range key's first field) to one value, `named` when to a list of values (`$in`), and
 * `every` otherwise. A range key's first field is enough: it names the chunks of that value, one
 * shard but for the largest accounts.
 */
export function reachOf(key: ShardKey, filter: Document | undefined): Reach {
  const field = Object.keys(key)[0]!;
  return valueReach(field, filter ?? {});
}

function valueReach(field: string, filter: Document): Reach {
  const reaches: Reach[] = [];
  for (const [name, condition] of Object.entries(filter)) {
    if (name === '$and' && Array.isArray(condition)) reaches.push(...condition.map((part: Document) => valueReach(field, part)));
    else if (name === '$or' && Array.isArray(condition)) reaches.push(widest(condition.map((part: Document) => valueReach(field, part))));
    else if (name === field) reaches.push(conditionReach(condition));
    else if (field.startsWith(`${name}.`) && isPlainDocument(condition) && !hasOperators(condition)) {
      // `_id: { _u, _t }` fixes `_id._u`.
      reaches.push(valueReach(field.slice(name.length + 1), condition));
    }
  }
  return narrowest(reaches);
}

function conditionReach(condition: unknown): Reach {
  if (!isPlainDocument(condition) || !hasOperators(condition)) return 'one';
  if ('$eq' in condition) return 'one';
  if ('$in' in condition && Array.isArray(condition.$in)) return condition.$in.length === 1 ? 'one' : 'named';
  return 'every';
}

const order: Reach[] = ['one', 'named', 'every'];
const narrowest = (reaches: Reach[]): Reach => (reaches.length === 0 ? 'every' : order[Math.min(...reaches.map((reach) => order.indexOf(reach)))]!);
const widest = (reaches: Reach[]): Reach => (reaches.length === 0 ? 'every' : order[Math.max(...reaches.map((reach) => order.indexOf(reach)))]!);

function isPlainDocument(value: unknown): value is Document {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.getPrototypeOf(value) === Object.prototype;
}

const hasOperators = (value: Document) => Object.keys(value).some((name) => name.startsWith('$'));
