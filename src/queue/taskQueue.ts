/**
 * queue/ owns durable background work: a MongoDB-backed task queue with leases, retries and dead
 * tasks (TaskQueue), and the workers that claim and run tasks (TaskWorkers). It knows no kind of
 * task; fanout and account removal register theirs.
 */
import { MongoBulkWriteError, ObjectId, type Collection, type Db, type Document } from 'mongodb';
import { duplicateKeyFailures } from '../errors.js';
import type { QueueSnapshot, QueueTaskState } from '../observability/metrics.js';
import type { TaskOrigin } from '../observability/requestScope.js';
import { plannedCollection, type PlannedCollectionName, plannedIndexes } from '../db/shardPlan.js';

/**
 * One unit of background work. A task is either `ready` (waiting, retrying, or held by a worker)
 * or `dead` (out of attempts, kept for an operator to inspect and re-drive).
 *
 * `runAt` does double duty, as the visibility timeout of a message queue: a new task has
 * `runAt: now`, a task waiting to retry has its back-off time, and a claimed task has the end of
 * its lease. So "claimable" is always `state: 'ready', runAt <= now`, which also covers a claim
 * whose holder died: once its lease runs out, the next worker takes the task over.
 */
export interface TaskDocument<P extends Document = Document> {
  /** Deterministic where a replay must not create the same work twice. */
  _id: string;
  kind: string;
  payload: P;
  state: 'ready' | 'dead';
  runAt: Date;
  /** Random per claim; every write of the holder is fenced by it, so a holder that lost its lease writes nothing. */
  claim: string | null;
  attempts: number;
  createdAt: Date;
  lastError?: string;
  /**
   * Queued for a later time (`NewTask.runAt`), until first claimed: work planned ahead, such as a
   * clean-up's second pass, which a queue with nothing else to do counts as drained.
   */
  later?: true;
  /** The request that queued it (its id, its trace), for the worker's log line and span; absent when none is known. */
  origin?: TaskOrigin;
}

export interface NewTask<P extends Document = Document> {
  _id: string;
  kind: string;
  payload: P;
  /** Not before this time; default now. */
  runAt?: Date;
  /** Default: the `origin` the queuer gives `enqueue` (its request's). A task queued by a task passes its own. */
  origin?: TaskOrigin;
}

export interface QueueOptions {
  leaseMs: number;
  maxAttempts: number;
  retryBaseMs: number;
}

export interface QueueStatus {
  /** Ready and not held by a live lease: what workers would claim next. */
  waiting: number;
  /** Queued for later and not due yet (see TaskDocument.later). */
  scheduled: number;
  /** Held by a worker whose lease has not run out. */
  running: number;
  dead: number;
  /** Creation time of the oldest task not yet done (waiting or running). */
  oldestPendingAt: Date | null;
}

const claimable = (now: Date) => ({ state: 'ready' as const, runAt: { $lte: now } });

/**
 * A small lease-based work queue in one MongoDB collection: claim with findOneAndUpdate, extend by
 * heartbeat, complete by delete, retry with exponential back-off, park as dead after
 * `maxAttempts`. Delivery is at least once; handlers make their writes idempotent.
 */
export class TaskQueue {
  readonly tasks: Collection<TaskDocument>;

  /**
   * `now`: the clock of every lease, back-off and due time this queue writes or compares, epoch ms.
   * Every such time is this process's, never the database server's.
   */
  constructor(
    db: Db,
    collectionName: PlannedCollectionName,
    readonly options: QueueOptions,
    private readonly now: () => number = Date.now,
  ) {
    this.tasks = plannedCollection<TaskDocument>(db, collectionName);
  }

  private at(delayMs = 0): Date {
    return new Date(this.now() + delayMs);
  }

  async ensureIndexes(): Promise<void> {
    await plannedIndexes(this.tasks, [
      { key: { state: 1, runAt: 1 }, name: 'state_run_at' },
      { key: { state: 1, createdAt: 1 }, name: 'state_created_at' },
    ]);
  }

  /**
   * Adds tasks; one whose `_id` is already queued is left as it is. Returns the tasks it added.
   * With `claim`, those due now are added already claimed under it, leased from now, as a claim
   * would leave them: their queuer runs them (TaskWorkers.handOff) without claiming them, and
   * anyone may claim them once the lease ends, should it die first. `origin`: the request that
   * queues them (observability/requestScope.ts), for tasks that carry none of their own.
   */
  async enqueue(tasks: readonly NewTask[], { claim, origin }: { claim?: string; origin?: TaskOrigin } = {}): Promise<TaskDocument[]> {
    if (tasks.length === 0) return [];
    const now = this.at();
    const docs: TaskDocument[] = tasks.map((task) => {
      const taskOrigin = task.origin ?? origin;
      const later = task.runAt !== undefined && task.runAt > now;
      return {
        _id: task._id,
        kind: task.kind,
        payload: task.payload,
        state: 'ready',
        ...(claim && !later ? { runAt: this.at(this.options.leaseMs), claim, attempts: 1 } : { runAt: task.runAt ?? now, claim: null, attempts: 0 }),
        createdAt: now,
        ...(later ? { later: true as const } : {}),
        ...(taskOrigin ? { origin: taskOrigin } : {}),
      };
    });
    try {
      await this.tasks.insertMany(docs, { ordered: false });
      return docs;
    } catch (error) {
      if (!duplicateKeyFailures(error)) throw error;
      const refused = new Set(error instanceof MongoBulkWriteError ? [error.writeErrors].flat().map((failure) => failure.index) : docs.keys());
      return docs.filter((_, index) => !refused.has(index));
    }
  }

  /** How long the lease of a claimed task has left, on the queue's clock. */
  leaseLeftMs(task: TaskDocument): number {
    return task.runAt.getTime() - this.now();
  }

  /**
   * The oldest claimable task, now leased to the caller; null when there is none. A task that has
   * already used every attempt (its holders kept dying) is parked as dead instead.
   */
  async claim(): Promise<TaskDocument | null> {
    for (;;) {
      const now = this.at();
      const task = await this.tasks.findOneAndUpdate(
        claimable(now),
        { $set: { claim: new ObjectId().toHexString(), runAt: new Date(now.getTime() + this.options.leaseMs) }, $inc: { attempts: 1 }, $unset: { later: '' } },
        { sort: { runAt: 1 }, returnDocument: 'after' },
      );
      if (!task) return null;
      if (task.attempts <= this.options.maxAttempts) return task;
      await this.park(task, task.lastError ?? `its worker stopped ${this.options.maxAttempts} times before finishing`);
    }
  }

  /**
   * Up to `limit` of the oldest claimable tasks, leased to the caller under one claim: the tasks,
   * then the claim of those still claimable. When the claim won all of them, they are what was
   * read with the claim's own fields; when a racing worker won some, a third round trip reads the
   * tasks this claim won. Tasks out of attempts are parked.
   */
  async claimBatch(limit: number): Promise<TaskDocument[]> {
    const now = this.at();
    const candidates = await this.tasks.find(claimable(now)).sort({ runAt: 1 }).limit(limit).toArray();
    if (candidates.length === 0) return [];
    const ids = candidates.map((task) => task._id);
    const claim = new ObjectId().toHexString();
    const leaseEnd = new Date(now.getTime() + this.options.leaseMs);
    const { modifiedCount } = await this.tasks.updateMany(
      { _id: { $in: ids }, ...claimable(now) },
      { $set: { claim, runAt: leaseEnd }, $inc: { attempts: 1 }, $unset: { later: '' } },
    );
    if (modifiedCount === 0) return [];
    // Won by this claim means nobody else claimed, completed or removed it in between; payloads
    // never change. (A holder whose lease ran out may still record its own outcome in that instant:
    // then only the attempt count and last error read here can be one behind.)
    const claimed =
      modifiedCount === candidates.length
        ? candidates.map(({ later: _, ...task }) => ({ ...task, claim, runAt: leaseEnd, attempts: task.attempts + 1 })).sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime())
        : await this.tasks.find({ _id: { $in: ids }, claim }).sort({ createdAt: 1 }).toArray();
    const usable: TaskDocument[] = [];
    for (const task of claimed) {
      if (task.attempts <= this.options.maxAttempts) usable.push(task);
      else await this.park(task, task.lastError ?? `its worker stopped ${this.options.maxAttempts} times before finishing`);
    }
    return usable;
  }

  /**
   * Renews the lease of tasks claimed together; false when any was taken over. One that left the
   * queue meanwhile (a retraction drops the deliveries of its post) was not taken over.
   */
  async extendBatch(tasks: readonly TaskDocument[]): Promise<boolean> {
    if (tasks.length === 0) return true;
    const ids = tasks.map((task) => task._id);
    const claim = tasks[0]!.claim;
    const result = await this.tasks.updateMany({ _id: { $in: ids }, claim }, { $set: { runAt: this.at(this.options.leaseMs) } });
    if (result.matchedCount === tasks.length) return true;
    return (await this.tasks.countDocuments({ _id: { $in: ids }, claim: { $ne: claim } }, { limit: 1 })) === 0;
  }

  /** Done, together: they leave the queue, except any another worker holds by now. */
  async completeBatch(tasks: readonly TaskDocument[]): Promise<void> {
    if (tasks.length === 0) return;
    await this.tasks.deleteMany({ _id: { $in: tasks.map((task) => task._id) }, claim: tasks[0]!.claim });
  }

  /**
   * Takes back a task queued for later that its request finished itself (a safety net for a crash
   * half-way): gone unless a worker has claimed it by now, in which case it runs.
   */
  async cancel(id: string): Promise<void> {
    await this.tasks.deleteOne({ _id: id, claim: null });
  }

  /** Done: the task leaves the queue, unless another worker holds it by now. */
  async complete(task: TaskDocument): Promise<void> {
    await this.tasks.deleteOne({ _id: task._id, claim: task.claim });
  }

  /** How long a failed task waits before its next attempt: doubling with each. */
  retryDelayMs(task: TaskDocument): number {
    return this.options.retryBaseMs * 2 ** (task.attempts - 1);
  }

  /** Records the failure; retries after `retryDelayMs`, or parks the task as dead. */
  async fail(task: TaskDocument, error: unknown): Promise<'retry' | 'dead'> {
    const message = error instanceof Error ? error.message : String(error);
    if (task.attempts >= this.options.maxAttempts) {
      await this.park(task, message);
      return 'dead';
    }
    const delay = this.retryDelayMs(task);
    await this.tasks.updateOne(
      { _id: task._id, claim: task.claim },
      { $set: { claim: null, runAt: this.at(delay), lastError: message } },
    );
    return 'retry';
  }

  /** Not now, and not a failure: the task goes back in line without using up an attempt. */
  async postpone(task: TaskDocument, delayMs: number): Promise<void> {
    await this.tasks.updateOne(
      { _id: task._id, claim: task.claim },
      { $set: { claim: null, runAt: this.at(delayMs) }, $inc: { attempts: -1 } },
    );
  }

  /**
   * Claimed tasks this worker will not run after all (its process is stopping): back in line at
   * once, with the attempt given back, so another worker need not wait for the lease to run out.
   */
  async release(tasks: readonly TaskDocument[]): Promise<void> {
    if (tasks.length === 0) return;
    await this.tasks.updateMany(
      { _id: { $in: tasks.map((task) => task._id) }, claim: tasks[0]!.claim },
      { $set: { claim: null, runAt: this.at() }, $inc: { attempts: -1 } },
    );
  }

  /** Puts dead tasks back in line with fresh attempts; returns how many. */
  async redrive(ids?: readonly string[]): Promise<number> {
    const result = await this.tasks.updateMany(
      { state: 'dead', ...(ids ? { _id: { $in: [...ids] } } : {}) },
      { $set: { state: 'ready', claim: null, runAt: this.at(), attempts: 0 } },
    );
    return result.modifiedCount;
  }

  async status(): Promise<QueueStatus> {
    const now = this.at();
    const notYet = { state: 'ready' as const, runAt: { $gt: now } };
    const [waiting, running, dead, oldest, scheduled] = await Promise.all([
      this.tasks.countDocuments(claimable(now)),
      this.tasks.countDocuments(notYet),
      this.tasks.countDocuments({ state: 'dead' }),
      this.tasks.find({ state: 'ready', later: { $exists: false } }, { projection: { createdAt: 1 } }).sort({ createdAt: 1 }).limit(1).next(),
      this.tasks.countDocuments({ ...notYet, later: true }),
    ]);
    // A task waiting out its retry back-off is neither claimable nor held; count it as running
    // would mislead, so it is counted with the waiting ones.
    const backingOff = (await this.tasks.countDocuments({ ...notYet, claim: null })) - scheduled;
    return { waiting: waiting + backingOff, scheduled, running: running - backingOff - scheduled, dead, oldestPendingAt: oldest?.createdAt ?? null };
  }

  /** Tasks by kind and state, and the oldest not done, for the metrics (feed_queue_tasks, feed_queue_oldest_ready_seconds). */
  async snapshot(): Promise<QueueSnapshot> {
    const now = this.at();
    const [groups, oldest] = await Promise.all([
      this.tasks
        .aggregate<{ _id: { kind: string; state: QueueTaskState }; count: number }>([
          {
            $group: {
              _id: {
                kind: '$kind',
                // As status() counts them: a task backing off before its retry is waiting, not running;
                // one queued for later and not yet due is scheduled.
                state: {
                  $cond: [
                    { $eq: ['$state', 'dead'] },
                    'dead',
                    {
                      $cond: [
                        { $and: [{ $eq: ['$later', true] }, { $gt: ['$runAt', now] }] },
                        'scheduled',
                        { $cond: [{ $and: [{ $ne: ['$claim', null] }, { $gt: ['$runAt', now] }] }, 'running', 'waiting'] },
                      ],
                    },
                  ],
                },
              },
              count: { $sum: 1 },
            },
          },
        ], { maxTimeMS: 5000 })
        .toArray(),
      this.tasks.find({ state: 'ready', later: { $exists: false } }, { projection: { createdAt: 1 } }).sort({ createdAt: 1 }).limit(1).next(),
    ]);
    return { tasks: groups.map(({ _id, count }) => ({ ..._id, count })), oldestReadyAt: oldest?.createdAt ?? null };
  }

  dead(limit: number): Promise<TaskDocument[]> {
    return this.tasks.find({ state: 'dead' }).sort({ createdAt: 1 }).limit(limit).toArray();
  }

  /** True when no task is waiting or running (dead ones, and work queued for later, do not count). */
  async isDrained(): Promise<boolean> {
    return (await this.tasks.countDocuments({ state: 'ready', later: { $exists: false } }, { limit: 1 })) === 0;
  }

  private async park(task: TaskDocument, reason: string): Promise<void> {
    await this.tasks.updateOne({ _id: task._id, claim: task.claim }, { $set: { state: 'dead', claim: null, lastError: reason } });
  }
}
