import type { Collection, Db } from 'mongodb';
import type { FanoutOptions } from '../config.js';
import type { ContentService } from '../content/contentService.js';
import { fromPostTask, sameEditableBody, toPostTask, toStoredBody, type PostRecord } from '../records/posts.js';
import type { UserFeedState } from '../graph/userFeedState.js';
import type { FollowerRange, UserGraphService } from '../graph/userGraphService.js';
import { deliveryLag, fanoutRecipients } from '../observability/metrics.js';
import type { QueueStatus, TaskDocument } from '../queue/taskQueue.js';
import { RetryLater, type TaskRun } from '../queue/taskWorkers.js';
import type { FeedBackend } from './feedBackend.js';
import type { BatchTaskHandlers, FanoutPayload, GapPayload, HeldTasks, PostPayload, QueuedTask, QueuedWork, TaskHandlers } from './queuedWork.js';
import { plannedCollection, plannedIndexes } from '../db/shardPlan.js';
import { noRequest, type Scope } from '../observability/requestScope.js';

/** Recipients reached per minute, for the delivery rate operators see. */
interface StatsDocument {
  /** Start of the minute, epoch ms. */
  _id: number;
  /** The same as a date, for the TTL index. */
  at: Date;
  recipients: number;
  subtasks: number;
}

export interface FanoutStatus extends QueueStatus {
  /** Over the last minute, across every worker process. */
  recipientsPerSecond: number;
  subtasksLastMinute: number;
}

/** A post still in `content` this long after its retraction was queued lost its request, which deletes it within milliseconds. */
const deletingRequestGraceMs = 5_000;

/** A post missing from `content` this long after its task was queued was never stored (its request died). */
const unstoredGraceMs = 60_000;
/** Sub-tasks of one edit's rewrite under way at once in one worker: enough to overlap round trips, few enough to share the database. */
const parallelRewrites = 4;
/**
 * An edit's rewrite sub-task covers this many FANOUT_BATCHes of readers: its one update only sets
 * fields of entries already there (no active-reader read, no push, sort or trim, as a delivery
 * has), and an edit is waited for, so fewer and larger updates reach every copy sooner (an edit in
 * 10,000 timelines: 0.1 to 0.15 s less than with sub-tasks of one batch, `npm run bench:conversations`).
 */
const rewriteBatches = 2;

const toPayload: (post: PostRecord) => PostPayload = toPostTask;
const fromPayload: (post: PostPayload) => PostRecord = fromPostTask;

/**
 * Fanout on write through the durable queue (the push part of push/pull): publishing queues one
 * task per post and returns; workers split it into sub-tasks of at most FANOUT_BATCH followers,
 * push to the active readers among them, and record the rate. Retractions of deleted posts, and
 * refills of timelines whose readers came back, travel the same way.
 *
 * Every handler is idempotent, because a task runs at least once: deliveries skip entries already
 * there, retractions and refills can repeat, and range cuts are recorded before they are used.
 */
export class Fanout {
  private readonly stats: Collection<StatsDocument>;
  /** Recipients reached this minute and not written yet (see `countDelivered`). */
  private tally: { minute: number; recipients: number; subtasks: number; since: number } | null = null;

  /** The queued work this class does, by kind. */
  readonly handlers: Pick<TaskHandlers, 'deliver' | 'retract' | 'rewrite' | 'fill-gap'> = {
    deliver: (task, run) => this.deliver(task, run),
    retract: (task, run) => this.retract(task, run),
    rewrite: (task, run) => this.rewrite(task, run),
    'fill-gap': (task, run) => this.fillGap(task, run),
  };

  /** Deliveries claimed together run as one piece of work (see `deliverEach`); rewrites side by side (`rewriteEach`). */
  readonly batchHandlers: Pick<BatchTaskHandlers, 'deliver' | 'rewrite'> = {
    deliver: (tasks, run) => this.deliverEach(tasks, run, { inline: true }),
    rewrite: (tasks, run) => this.rewriteEach(tasks, run),
  };

  constructor(
    db: Db,
    private readonly work: QueuedWork,
    private readonly graph: UserGraphService,
    private readonly feedState: UserFeedState,
    private readonly content: ContentService,
    private readonly backend: FeedBackend,
    readonly options: FanoutOptions,
  ) {
    this.stats = plannedCollection<StatsDocument>(db, 'fanout_stats');
  }

  /** The durable queue behind fanout and every other background work. */
  get queue() {
    return this.work.queue;
  }

  async ensureIndexes(): Promise<void> {
    await Promise.all([
      this.work.ensureIndexes(),
      // Minutes older than an hour say nothing about the current rate.
      plannedIndexes(this.stats, [{ key: { at: 1 }, name: 'minute_ttl', expireAfterSeconds: 3600 }]),
    ]);
  }

  /**
   * Queues the post's delivery to its followers (unless `deliver` is false: its readers pull it)
   * and the other work of the same moment (its notifications), in one write; call before storing
   * the post, and release what it returns once the post is stored (see QueuedWork.enqueueHeld).
   */
  enqueueDelivery(post: PostRecord, scope: Scope, alongside: QueuedTask[] = [], deliver = true): Promise<HeldTasks> {
    return this.work.enqueueHeld(this.withTimelineWork(deliver ? [rootTask('deliver', post)] : [], alongside), scope);
  }

  /** Queues taking a deleted post out of its followers' timelines, with the other work of the same moment. */
  async enqueueRetraction(post: PostRecord, scope: Scope, alongside: QueuedTask[] = [], retract = true): Promise<void> {
    await this.enqueueWith(retract ? [rootTask('retract', post)] : [], alongside, scope);
  }

  /**
   * Queues putting these posts' bodies as they are now (after an edit at `editedAt`) into every
   * timeline entry that embeds them: nothing where entries link to `content`.
   */
  async enqueueRewrites(posts: readonly PostRecord[], editedAt: Date, scope: Scope, alongside: QueuedTask[] = []): Promise<void> {
    const rewrites = this.backend.embedsBodies ? posts.map((post) => rootTask('rewrite', post, String(editedAt.getTime()))) : [];
    await this.enqueueWith(rewrites, alongside, scope);
  }

  /** Queues work for later, as a safety net for a request that does it itself, and takes it back once it has. */
  enqueueLater(task: QueuedTask, scope: Scope): Promise<void> {
    return this.work.enqueue([task], scope);
  }

  cancel(id: string): Promise<void> {
    return this.work.queue.cancel(id);
  }

  /** Queues redelivering what fanout skipped while `userId` was inactive (the gap on their user document). */
  async enqueueGapFill(userId: string, since: Date): Promise<void> {
    await this.enqueue([{ _id: `fill-gap:${userId}:${since.getTime()}`, kind: 'fill-gap', payload: { userId } }]);
  }

  async status(): Promise<FanoutStatus> {
    const minuteAgo = new Date(Date.now() - 60_000);
    const [queue, minutes] = await Promise.all([
      this.work.queue.status(),
      this.stats.find({ _id: { $gte: minuteStart(minuteAgo.getTime()) } }).toArray(),
    ]);
    // The oldest minute is partly outside the window; count it whole and divide by the time covered.
    const recipients = minutes.reduce((sum, minute) => sum + minute.recipients, 0);
    const covered = minutes.length ? (Date.now() - Math.min(...minutes.map((m) => m._id))) / 1000 : 60;
    return {
      ...queue,
      recipientsPerSecond: recipients / Math.max(1, covered),
      subtasksLastMinute: minutes.reduce((sum, minute) => sum + minute.subtasks, 0),
    };
  }

  /** Timeline work queued by no request: a reader's gap, a task's sub-tasks (which carry their parent's origin). */
  private async enqueue(tasks: QueuedTask[]): Promise<void> {
    if (!this.backend.materialized) return;
    await this.work.enqueue(tasks, noRequest);
  }

  private async enqueueWith(timelineWork: QueuedTask[], always: QueuedTask[], scope: Scope): Promise<void> {
    await this.work.enqueue(this.withTimelineWork(timelineWork, always), scope);
  }

  /** Timeline work only under a materialized strategy; `always` whatever the strategy. */
  private withTimelineWork(timelineWork: QueuedTask[], always: QueuedTask[]): QueuedTask[] {
    return [...(this.backend.materialized ? timelineWork : []), ...always];
  }

  /** One task alone: a post's first task always splits its audience into sub-tasks. */
  private async deliver(task: TaskDocument<FanoutPayload>, run: TaskRun): Promise<void> {
    const [notStored] = await this.deliverEach([task], run, { inline: false });
    if (notStored) await this.missing(task, fromPayload(task.payload.post));
  }

  /**
   * Deliveries claimed together, in as few round trips as one: which posts are stored, each small
   * audience read (`inline`; a larger one is split into sub-tasks instead), then per FANOUT_BATCH recipients,
   * across posts, one read of who is active, one write, one check that no post was deleted meanwhile,
   * and one stats update. Returns the tasks whose post is not stored, for their own run.
   */
  private async deliverEach(tasks: TaskDocument<FanoutPayload>[], run: TaskRun, { inline }: { inline: boolean }): Promise<TaskDocument[]> {
    const posts = tasks.map((task) => fromPayload(task.payload.post));
    const roots = inline ? [...new Set(tasks.filter((task) => !task.payload.range).map((task) => task.payload.post.authorId))] : [];
    const [stored, audiences] = await Promise.all([
      // A task is queued before its post is stored: one whose post never was is not delivered.
      this.content.lookups.storedOnce(posts.map((post) => post.id)),
      this.graph.smallAudiences(roots, this.options.batchSize),
    ]);
    const notStored: TaskDocument[] = [];
    const deliveries: { post: PostRecord; recipients: string[] }[] = [];
    await Promise.all(
      tasks.map(async (task, index) => {
        const post = posts[index]!;
        if (!stored.has(post.id.toHexString())) return notStored.push(task);
        const { range } = task.payload;
        const recipients = range ? await this.graph.followerIdsIn(post.authorId, range) : (audiences.get(post.authorId) ?? null);
        if (recipients) deliveries.push({ post, recipients });
        else await this.split(task, run);
      }),
    );
    const cutoff = new Date(Date.now() - this.options.activeReaderMs);
    for (const chunk of byRecipients(deliveries, this.options.batchSize)) {
      const active = new Set(await this.feedState.activeReadersAmong([...new Set(chunk.flatMap((delivery) => delivery.recipients))], cutoff));
      const reached = chunk.map(({ post, recipients }) => ({ post, recipients: recipients.filter((userId) => active.has(userId)) }));
      await run.checkpoint();
      await this.backend.deliverEach(reached.map(({ post, recipients }) => ({ recipients, posts: [post] })));
      this.delivered(reached);
      // Written, then checked: a delete that came first has retracted already and would miss these
      // entries, and an edit that came first has rewritten the entries before these. A post that
      // reached no active reader wrote nothing that could be missed, so it is not checked.
      const written = reached.filter(({ recipients }) => recipients.length > 0);
      const stillStored = await this.content.lookups.editableBodies(written.map((delivery) => delivery.post.id));
      for (const { post, recipients } of written) {
        const stored = stillStored.get(post.id.toHexString());
        if (!stored) await this.backend.removeFrom(recipients, post);
        else if (!sameEditableBody(stored, toStoredBody(post.body))) await this.rewriteCurrent(recipients, post.id);
      }
      await this.countDelivered(reached.reduce((sum, delivery) => sum + delivery.recipients.length, 0), chunk.length);
    }
    return notStored;
  }

  /**
   * Adds to this process's tally of the minute, written at most every `statsFlushMs` (and when the
   * minute ends): one write for many deliveries. What the last seconds before a crash counted is lost,
   * which a rate over a minute can afford.
   */
  private async countDelivered(recipients: number, subtasks: number): Promise<void> {
    const minute = minuteStart(Date.now());
    if (this.tally && this.tally.minute !== minute) await this.flushStats();
    this.tally ??= { minute, recipients: 0, subtasks: 0, since: Date.now() };
    this.tally.recipients += recipients;
    this.tally.subtasks += subtasks;
    if (Date.now() - this.tally.since >= statsFlushMs) await this.flushStats();
  }

  /** Writes this process's tally of delivered recipients; also called when the workers stop. */
  async flushStats(): Promise<void> {
    const tally = this.tally;
    this.tally = null;
    if (!tally || (tally.recipients === 0 && tally.subtasks === 0)) return;
    await this.stats.updateOne(
      { _id: tally.minute },
      { $inc: { recipients: tally.recipients, subtasks: tally.subtasks }, $setOnInsert: { at: new Date(tally.minute) } },
      { upsert: true },
    );
  }

  /** What operators watch of deliveries: recipients reached, and how long after its creation each post reached them. */
  private delivered(reached: readonly { post: PostRecord; recipients: readonly string[] }[]): void {
    const now = Date.now();
    let recipients = 0;
    for (const delivery of reached) {
      if (delivery.recipients.length === 0) continue;
      recipients += delivery.recipients.length;
      deliveryLag.observe(Math.max(0, now - delivery.post.createdAt.getTime()) / 1000);
    }
    if (recipients > 0) fanoutRecipients.inc({ strategy: this.backend.strategy }, recipients);
  }


  /**
   * The first sub-task of a retraction finishes the deletion itself: its request may have died
   * between queueing this task and deleting the post, and the delete was already promised. A
   * request still alive deletes it a moment later and answers for it, so the sub-task waits for
   * that first, briefly.
   */
  private async retract(task: TaskDocument<FanoutPayload>, run: TaskRun): Promise<void> {
    const post = fromPayload(task.payload.post);
    const { range } = task.payload;
    if (!range) {
      const requestAlive = Date.now() - task.createdAt.getTime() < deletingRequestGraceMs;
      if (requestAlive && (await this.content.lookups.exists(post.id))) throw new RetryLater(25, 'the deleting request has not removed the post yet');
      await this.content.deletePost(post);
      // Deliveries not yet run have nothing left to deliver; running ones remove what they wrote
      // (they check after writing).
      await this.work.queue.tasks.deleteMany({ kind: 'deliver', 'payload.post.id': post.id });
      // Its request may have died before taking it out of the author's own timeline too: the author
      // goes with a small audience, in one read and one write, rather than by a sub-task.
      const audience = (await this.graph.smallAudiences([post.authorId], this.options.batchSize)).get(post.authorId);
      await run.checkpoint();
      await this.backend.removeFrom([post.authorId, ...(audience ?? [])], post);
      if (!audience) await this.split(task, run);
      return;
    }
    const recipients = await this.graph.followerIdsIn(post.authorId, range);
    await run.checkpoint();
    await this.backend.removeFrom(recipients, post);
  }

  /**
   * The root task rewrites the author's own timeline and splits the followers into sub-tasks, a
   * range of handles each, as a delivery does; each reads the post as it is when it runs, so of two
   * edits in quick succession the later wins wherever the earlier's tasks run last.
   */
  private async rewrite(task: TaskDocument<FanoutPayload>, run: TaskRun): Promise<void> {
    const post = fromPayload(task.payload.post);
    const { range } = task.payload;
    await run.checkpoint();
    if (!range) {
      // A small audience is rewritten here with the author's own timeline, in one write; a large one by sub-tasks.
      const audience = (await this.graph.smallAudiences([post.authorId], this.options.batchSize)).get(post.authorId);
      if (!audience) {
        await this.rewriteCurrent([post.authorId], post.id);
        return this.split(task, run);
      }
      await run.checkpoint();
      return this.rewriteCurrent([post.authorId, ...audience], post.id);
    }
    const recipients = await this.graph.followerIdsIn(post.authorId, range);
    await run.checkpoint();
    await this.rewriteCurrent(recipients, post.id);
  }

  /**
   * The sub-tasks of an edit's rewrite claimed together, `parallelRewrites` at a time: each is a
   * read of its range and one update of other documents, so one claim of a large audience's
   * sub-tasks no longer waits for each round trip in turn (an edit reaches every copy sooner).
   * Root tasks run on their own, as they split.
   */
  private async rewriteEach(tasks: TaskDocument<FanoutPayload>[], run: TaskRun): Promise<TaskDocument[]> {
    const ranged = tasks.filter((task) => task.payload.range);
    let next = 0;
    const lane = async () => {
      while (next < ranged.length) await this.rewrite(ranged[next++]!, run);
    };
    // Every lane ends before a failure is reported: the tasks then run again one by one, never beside a lane still writing.
    const lanes = await Promise.allSettled(Array.from({ length: Math.min(parallelRewrites, ranged.length) }, lane));
    const failed = lanes.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
    if (failed) throw failed.reason;
    return tasks.filter((task) => !task.payload.range);
  }

  /** Rewrites these recipients' entries of a post (or repost) from `content`; nothing for a deleted one. */
  private async rewriteCurrent(recipients: readonly string[], postId: PostRecord['id']): Promise<void> {
    const current = await this.content.lookups.getEntry(postId);
    if (current) await this.backend.rewrite(recipients, current);
  }

  /**
   * Queues the post's followers as sub-tasks of FANOUT_BATCH followers each, a range of handles
   * apiece (see `followerRanges`), numbered in handle order, so a replay of this task queues the
   * same ids again (and adds nothing already queued). Each sub-task reads its range when it runs.
   */
  private async split(task: TaskDocument<FanoutPayload>, run: TaskRun): Promise<void> {
    const post = fromPayload(task.payload.post);
    const kind = task.kind as FanoutKind;
    let pending: QueuedTask[] = [];
    let index = 0;
    const size = kind === 'rewrite' ? this.options.batchSize * rewriteBatches : this.options.batchSize;
    for await (const range of this.graph.followerRanges(post.authorId, size)) {
      // The sub-tasks carry the origin of the task that split them: the request that posted.
      pending.push({ ...subTask(kind, post, index++, range, String(task._id)), ...(task.origin ? { origin: task.origin } : {}) });
      if (pending.length === splitInsertSize) {
        await run.checkpoint();
        await this.enqueue(pending);
        pending = [];
      }
    }
    await run.checkpoint();
    await this.enqueue(pending);
  }

  private async fillGap(task: TaskDocument<GapPayload>, run: TaskRun): Promise<void> {
    const { userId } = task.payload;
    const reader = await this.feedState.readerActivity(userId);
    const gap = reader?.timelineGap;
    if (!gap) return;
    const authors = await this.graph.followingIds(userId);
    let batch: PostRecord[] = [];
    for await (const post of this.content.scans.pushedPostsSince(authors, gap.from)) {
      batch.push(post);
      if (batch.length === this.options.batchSize) {
        await run.checkpoint();
        await this.backend.deliverTo([userId], batch);
        batch = [];
      }
    }
    await run.checkpoint();
    await this.backend.deliverTo([userId], batch);
    await this.feedState.closeTimelineGap(userId, gap.since);
  }

  /**
   * A deleted post has nothing to deliver; one not stored yet is waited for, a minute at most, and
   * one never stored is given up: no timeline took it.
   */
  private async missing(task: TaskDocument<FanoutPayload>, post: PostRecord): Promise<void> {
    if (await this.content.lookups.wasDeleted(post.id)) return;
    if (Date.now() - task.createdAt.getTime() < unstoredGraceMs) throw new RetryLater(200, 'the post is not stored yet');
  }
}

type FanoutKind = 'deliver' | 'retract' | 'rewrite';

/** Deliveries in groups of about `limit` recipients, so that one write stays the size of one sub-task. */
function byRecipients<T extends { recipients: readonly string[] }>(deliveries: readonly T[], limit: number): T[][] {
  const chunks: T[][] = [];
  let chunk: T[] = [];
  let size = 0;
  for (const delivery of deliveries) {
    chunk.push(delivery);
    size += delivery.recipients.length;
    if (size >= limit) {
      chunks.push(chunk);
      chunk = [];
      size = 0;
    }
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}

/** Sub-tasks queued per insert while a post's followers are split. */
const splitInsertSize = 100;

/** `edit` tells apart the rewrites of successive edits of one post, each a task of its own. */
function rootTask(kind: FanoutKind, post: PostRecord, edit?: string): QueuedTask {
  return { _id: `${kind}:${post.id.toHexString()}${edit ? `@${edit}` : ''}`, kind, payload: { post: toPayload(post) } };
}

/** Numbered under the task that split them: a rewrite's root id names its edit. */
function subTask(kind: FanoutKind, post: PostRecord, index: number, range: FollowerRange, parentId = `${kind}:${post.id.toHexString()}`): QueuedTask {
  return { _id: `${parentId}:${index}`, kind, payload: { post: toPayload(post), range } };
}

const minuteStart = (ms: number) => ms - (ms % 60_000);

/** How often a worker process writes what it delivered, at most. */
const statsFlushMs = 5_000;
