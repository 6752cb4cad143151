import { ObjectId } from 'mongodb';
import type { ChangeStream, ChangeStreamDocument, ChangeStreamInsertDocument, Collection, Db, Document, ResumeToken } from 'mongodb';
import { ConfigError } from '../config.js';
import { UnreachableCaseError } from '../errors.js';
import {
  contentCollection,
  fromAnnouncedPost,
  fromRef,
  toAnnouncedPost,
  toRef,
  toStoredVisibility,
  toVisibility,
  type ContentDocument,
  type PostCounts,
  type PostRefDocument,
} from '../records/posts.js';
import type { Logger } from '../logger.js';
import type { NotificationRecord } from '../records/notifications.js';
import type { UserCounts } from '../records/users.js';
import { carriedEventsField, type CarriedEvents, type ChangeEvent, type ChangeListener, type ChangeSource, type ViewerState } from './events.js';
import { Listeners } from './listeners.js';
import { changeStreamLag } from '../observability/metrics.js';
import { sleep } from '../sleep.js';
import { plannedCollection, plannedExpiry } from '../db/shardPlan.js';
import { channelOf, LiveGroup } from './partitions.js';

export const liveEventsCollection = 'live_events';

/**
 * One small document per change. Post events copy the post (author, text, creation time), so no
 * instance has to read it back, and a delete still names the author after the post is gone.
 */
export type LiveEventDocument = {
  _id?: ObjectId;
  /** Publication time, for the TTL index. */
  at: Date;
  /** The partition or broadcast channel (changes/partitions.ts); absent in an event an older version stored. */
  ch?: number;
} & (
  | { kind: 'postAdded'; post: ContentDocument }
  | { kind: 'postRemoved'; postId: ObjectId; authorId: string; originalAuthorId?: string | null; replyToId?: ObjectId; _v?: ContentDocument['_v']; _to?: string[]; _tg?: string[] }
  | { kind: 'postEdited'; post: PostRefDocument; reposts: PostRefDocument[]; _to?: string[]; edited?: ContentDocument }
  | { kind: 'followed' | 'unfollowed'; followerId: string; followeeId: string; counts?: UserCounts[] }
  | {
      kind: 'changed';
      users: string[];
      filters: string[];
      allFilters: boolean;
      timelines?: string[];
      lists?: string[];
      edits?: { delivered?: { recipients: string[]; posts: ContentDocument[] }[]; removed?: ObjectId[] };
    }
  | { kind: 'notificationAdded'; notification: NotificationRecord }
  | { kind: 'counted'; postId: ObjectId; counts?: PostCounts; countsStale?: true; viewer?: { id: string; state: ViewerState } }
);

export function toDocument(event: ChangeEvent, at = new Date()): LiveEventDocument {
  switch (event.kind) {
    case 'postAdded':
      return { at, kind: event.kind, post: toAnnouncedPost(event.post) };
    case 'postRemoved':
      return {
        at,
        kind: event.kind,
        postId: event.postId,
        authorId: event.authorId,
        originalAuthorId: event.originalAuthorId,
        ...(event.replyToId ? { replyToId: event.replyToId } : {}),
        // Stored as a post's are, absent for a public post.
        ...toStoredVisibility(event),
        ...(event.tags ? { _tg: [...event.tags] } : {}),
      };
    case 'postEdited':
      return {
        at,
        kind: event.kind,
        post: fromRef(event.post),
        reposts: event.reposts.map(fromRef),
        ...(event.audience ? { _to: [...event.audience] } : {}),
        ...(event.edited ? { edited: toAnnouncedPost(event.edited) } : {}),
      };
    case 'followed':
    case 'unfollowed':
      return { at, kind: event.kind, followerId: event.followerId, followeeId: event.followeeId, ...(event.counts ? { counts: [...event.counts] } : {}) };
    case 'changed': {
      const { edits } = event;
      const stored = edits && {
        ...(edits.delivered ? { delivered: edits.delivered.map(({ recipients, posts }) => ({ recipients: [...recipients], posts: posts.map(toAnnouncedPost) })) } : {}),
        ...(edits.removed ? { removed: [...edits.removed] } : {}),
      };
      return { at, kind: event.kind, users: event.users, filters: event.filters, allFilters: event.allFilters, timelines: event.timelines, lists: event.lists, ...(stored ? { edits: stored } : {}) };
    }
    case 'notificationAdded':
      return { at, kind: event.kind, notification: event.notification };
    case 'counted':
      return {
        at,
        kind: event.kind,
        postId: event.postId,
        ...(event.counts ? { counts: event.counts } : {}),
        ...(event.countsStale ? { countsStale: true as const } : {}),
        ...(event.viewer ? { viewer: event.viewer } : {}),
      };
    default:
      throw new UnreachableCaseError(event);
  }
}

/** Null for a document this version does not understand (written by a newer one, say). */
export function fromDocument(doc: LiveEventDocument): ChangeEvent | null {
  switch (doc.kind) {
    case 'postAdded':
      return { kind: 'postAdded', post: fromAnnouncedPost(doc.post) };
    case 'postRemoved':
      return {
        kind: 'postRemoved',
        postId: doc.postId,
        authorId: doc.authorId,
        originalAuthorId: doc.originalAuthorId ?? null,
        ...(doc.replyToId ? { replyToId: doc.replyToId } : {}),
        ...toVisibility(doc),
        ...(doc._tg ? { tags: doc._tg } : {}),
      };
    case 'postEdited':
      return {
        kind: doc.kind,
        post: toRef(doc.post)!,
        reposts: doc.reposts.map((repost) => toRef(repost)!),
        ...(doc._to ? { audience: doc._to } : {}),
        ...(doc.edited ? { edited: fromAnnouncedPost(doc.edited) } : {}),
      };
    case 'followed':
    case 'unfollowed':
      return { kind: doc.kind, followerId: doc.followerId, followeeId: doc.followeeId, ...(doc.counts ? { counts: doc.counts } : {}) };
    case 'changed': {
      const edits = doc.edits && {
        ...(doc.edits.delivered
          ? { delivered: doc.edits.delivered.map(({ recipients, posts }) => ({ recipients, posts: posts.map(fromAnnouncedPost) })) }
          : {}),
        ...(doc.edits.removed ? { removed: doc.edits.removed } : {}),
      };
      return { kind: doc.kind, users: doc.users, filters: doc.filters, allFilters: doc.allFilters, timelines: doc.timelines ?? [], lists: doc.lists ?? [], ...(edits ? { edits } : {}) };
    }
    case 'notificationAdded':
      return { kind: doc.kind, notification: doc.notification };
    case 'counted':
      return {
        kind: doc.kind,
        postId: doc.postId,
        ...(doc.counts ? { counts: doc.counts } : {}),
        ...(doc.countsStale ? { countsStale: true as const } : {}),
        ...(doc.viewer ? { viewer: doc.viewer } : {}),
      };
    default:
      return null;
  }
}

/**
 * How long the server holds an empty getMore. Short enough that opening the stream (aggregate, then
 * a first getMore) does not hold up the start; an idle instance asks four times a second.
 */
const maxAwaitTimeMs = 250;
const maxRestartDelayMs = 10_000;

/** What one change stream reads: the inserts of events and of posts, and the writes that carry events, in commit order. */
type StreamedChange = ChangeStreamDocument<LiveEventDocument | ContentDocument>;

/**
 * The events to store, each under its channel. A new post is left out: its insert into `content`
 * is its announcement, a replayed store (which inserts nothing) included.
 */
function toStored(events: readonly ChangeEvent[]): LiveEventDocument[] {
  return events.filter((event) => event.kind !== 'postAdded').map((event): LiveEventDocument => ({ ...toDocument(event), ch: channelOf(event) }));
}

/** Where an update carries its change's events (see CarriedEvents). */
const carriedPath = `updateDescription.updatedFields.${carriedEventsField}`;

/**
 * Cross-instance delivery through MongoDB: `publish` inserts a document into `live_events`, and
 * each instance runs one change stream over the database that hands every insert there to its
 * listeners, in commit order. Some changes need no document of their own, as the write that makes
 * them is read by the same stream: a new post's insert into `content` is its `postAdded`, and a
 * write that carries its change's events (field `an`, see `carry`) is those events: a follow
 * pair's write that records a follow as applied, a like's settling write. So they keep their place
 * among the other events (a removal never arrives before its post) and cost no write more than
 * the change. The driver resumes by itself after resumable errors (failover, network); anything
 * else is logged and the stream is reopened after the last event seen, with a growing delay.
 */
export class ChangeStreamEventSource implements ChangeSource {
  readonly mode = 'change-stream' as const;
  private readonly collection: Collection<LiveEventDocument>;
  private readonly listeners = new Listeners((error) => this.logger?.error('live events: a listener failed', error));
  private logger: Logger | null = null;
  private stream: ChangeStream<Document, StreamedChange> | null = null;
  private resumeToken: ResumeToken | undefined;
  private loop: Promise<void> | null = null;
  private stopping = false;
  /** Wakes a pause between restarts when the source stops. */
  private readonly sleepers = new Set<() => void>();
  /** Times the stream was reopened after an error. */
  restarts = 0;
  /** Failures in a row: the stream is being reopened. */
  private failures = 0;

  constructor(
    private readonly db: Db,
    private readonly ttlSeconds: number,
    /** The share of the events this instance reads. */
    private readonly group: LiveGroup = new LiveGroup(0, 1),
  ) {
    this.collection = plannedCollection<LiveEventDocument>(db, liveEventsCollection);
  }

  async ensureIndexes(): Promise<void> {
    await plannedExpiry(this.db, this.collection, 'at', 'expire', this.ttlSeconds);
  }

  async start(logger: Logger): Promise<void> {
    if (this.loop) return;
    this.logger = logger;
    this.stopping = false;
    const stream = this.open();
    let first: StreamedChange | null;
    try {
      // Opens the cursor now, so a server without change streams fails the start, not a client later.
      first = await stream.tryNext();
    } catch (error) {
      await stream.close().catch(() => {});
      throw changeStreamsUnsupported(error) ? unavailable(error) : error;
    }
    this.stream = stream;
    if (first) this.deliver(first);
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    if (!this.loop) return;
    this.stopping = true;
    for (const wake of this.sleepers) wake();
    await this.stream?.close().catch(() => {});
    await this.loop;
    this.loop = null;
    this.stream = null;
  }

  /** A new post was announced by its insert: it is not written again. */
  async publish(events: readonly ChangeEvent[]): Promise<void> {
    const stored = toStored(events);
    if (stored.length === 1) await this.collection.insertOne(stored[0]!);
    else if (stored.length > 1) await this.collection.insertMany(stored);
  }

  /** Every event goes in the write of the change: the stream reads it from that update. */
  carry(events: readonly ChangeEvent[]): { carried: CarriedEvents | undefined; rest: readonly ChangeEvent[] } {
    const stored = toStored(events);
    return { carried: stored.length === 0 ? undefined : { t: new ObjectId().toHexString(), e: stored }, rest: [] };
  }

  listen(listener: ChangeListener): () => void {
    return this.listeners.add(listener);
  }

  listenerCount(): number {
    return this.listeners.size;
  }

  flowing(): boolean {
    return this.loop !== null && !this.stopping && this.failures === 0;
  }

  private open(): ChangeStream<Document, StreamedChange> {
    const resume = this.resumeToken === undefined ? {} : { startAfter: this.resumeToken };
    // An instance of one group of several reads its own partitions and the broadcast channels
    // only; posts are for every group.
    const events = { operationType: 'insert', 'ns.coll': liveEventsCollection, ...this.group.streamFilter() };
    const posts = { operationType: 'insert', 'ns.coll': contentCollection };
    const carried = { operationType: 'update', [carriedPath]: { $exists: true }, ...this.group.streamFilter(`${carriedPath}.e.ch`) };
    return this.db.watch<Document, StreamedChange>([{ $match: { $or: [events, posts, carried] } }], {
      maxAwaitTimeMS: maxAwaitTimeMs,
      ...resume,
    });
  }

  private async run(): Promise<void> {
    this.failures = 0;
    while (!this.stopping) {
      const stream = this.stream!;
      try {
        const change = await stream.tryNext();
        if (change) {
          this.failures = 0;
          this.deliver(change);
          continue;
        }
        // After an empty batch the driver holds the post-batch token: resuming from it skips nothing.
        this.resumeToken = stream.resumeToken ?? this.resumeToken;
        this.failures = 0;
        // Nothing left to read: caught up.
        changeStreamLag.set(0);
        // An invalidate (the collection was dropped or renamed) closes the stream without an error.
        if (stream.closed && !this.stopping) throw new Error('the change stream was closed by the server');
      } catch (error) {
        if (this.stopping) break;
        this.failures += 1;
        this.restarts += 1;
        await stream.close().catch(() => {});
        if (this.failures > 2 && this.resumeToken !== undefined) {
          // The token itself may be what fails (history rolled off the oplog): start from now.
          this.resumeToken = undefined;
          this.logger?.error('live events: cannot resume the change stream; continuing from now, so open subscriptions may miss events', error);
        } else {
          this.logger?.error(`live events: the change stream failed; reopening it (attempt ${this.failures})`, error);
        }
        await sleep(Math.min(250 * 2 ** (this.failures - 1), maxRestartDelayMs), this.sleepers);
        if (!this.stopping) this.stream = this.open();
      }
    }
  }

  private deliver(change: StreamedChange): void {
    this.resumeToken = change._id;
    if (change.operationType === 'update') {
      const carried = (change.updateDescription.updatedFields as Document | undefined)?.[carriedEventsField] as CarriedEvents | undefined;
      if (carried) this.deliverCarried(carried.e as LiveEventDocument[]);
      return;
    }
    if (change.operationType !== 'insert') return;
    if (change.ns.coll === contentCollection) return this.deliverPost(change as ChangeStreamInsertDocument<ContentDocument>);
    this.deliverStored((change as ChangeStreamInsertDocument<LiveEventDocument>).fullDocument);
  }

  private deliverStored(document: LiveEventDocument): void {
    this.noteLag(document.at);
    const event = fromDocument(document);
    if (event) this.listeners.emit(event);
    else this.logger?.warn(`live events: ignoring an event of unknown kind ${JSON.stringify(document.kind)}`);
  }

  /** A write's events: those of the channels this instance's group reads (the stream matched the write on any one). */
  private deliverCarried(documents: readonly LiveEventDocument[]): void {
    for (const document of documents) if (document.ch === undefined || this.group.readsChannel(document.ch)) this.deliverStored(document);
  }

  private deliverPost({ fullDocument: post }: ChangeStreamInsertDocument<ContentDocument>): void {
    this.noteLag(post._d);
    this.listeners.emit({ kind: 'postAdded', post: fromAnnouncedPost(post) });
  }

  /** The writer's clock against this one's: good to the clock skew between instances. */
  private noteLag(writtenAt: Date): void {
    changeStreamLag.set(Math.max(0, Date.now() - writtenAt.getTime()) / 1000);
  }
}

/** A standalone server answers 40573 ("The $changeStream stage is only supported on replica sets"). */
function changeStreamsUnsupported(error: unknown): boolean {
  const { code, message } = error as { code?: unknown; message?: unknown };
  return code === 40573 || (typeof message === 'string' && /replica set|changeStream/i.test(message));
}

function unavailable(cause: unknown): Error {
  const message = cause instanceof Error ? cause.message : String(cause);
  return new ConfigError(
    'LIVE_EVENTS=change-stream needs MongoDB change streams, which need a replica set ' +
      '(a single-node replica set is enough: start mongod with --replSet rs0 and run rs.initiate() once). ' +
      'For a single server instance on a standalone MongoDB, set LIVE_EVENTS=local.\n' +
      `  MongoDB said: ${message}`,
  );
}
