import { ObjectId, type Db, type Document } from 'mongodb';
import type { FanoutOptions } from '../config.js';
import type { FollowerRange } from '../graph/userGraphService.js';
import type { Logger } from '../logger.js';
import type { NotificationTasks } from '../notifications/notificationService.js';
import type { PostTask } from '../records/posts.js';
import { TaskQueue, type NewTask, type TaskDocument } from '../queue/taskQueue.js';
import { originOf, type Scope } from '../observability/requestScope.js';
import { TaskWorkers, type TaskRun } from '../queue/taskWorkers.js';

export const workCollection = 'fanout_tasks';

/** A post as a task carries it (records/posts.ts). Always public: limited posts are never queued. */
export type PostPayload = PostTask;

/**
 * A post's first task has no `recipients`: it reads the author's followers once and queues them as
 * sub-tasks of FANOUT_BATCH recipients each. A sub-task carries its recipients, so a replay reaches
 * exactly the same followers.
 */
export interface FanoutPayload {
  post: PostPayload;
  /** Set on a sub-task: the author's followers it reaches (the root task reads or splits the audience). */
  range?: FollowerRange;
}

export interface GapPayload {
  userId: string;
}

export interface AccountPayload {
  handle: string;
  accountId: string;
  /** Set on a sub-task: followers whose follow it ends. */
  followers?: string[];
}

/** A suspension (`episode`) of an account: its effects on counts taken out, or put back (`undo`). */
export interface SuspensionPayload {
  handle: string;
  episode: string;
  undo?: true;
  /** The second pass, once requests that raced the mark have finished: counts checked against the edges. */
  again?: true;
}

/** An unlocked account, whose waiting follow requests are all approved. */
export interface UnlockPayload {
  handle: string;
}

/**
 * Every kind of background work and what its tasks carry: the closed list the workers run. A new
 * kind is a line here, and the compiler then asks for its handler where services.ts registers them.
 */
export interface QueuedTasks extends NotificationTasks {
  /** A post into its followers' timelines. */
  deliver: FanoutPayload;
  /** A deleted post out of them. */
  retract: FanoutPayload;
  /** An edited post's body (an image's alt text) into the entries that embed it. */
  rewrite: FanoutPayload;
  /** What fanout skipped while a reader was away. */
  'fill-gap': GapPayload;
  'remove-account': AccountPayload;
  /** Every follow request of an account that was unlocked, approved. */
  'approve-requests': UnlockPayload;
  /** A suspended account's effects on others' counts, taken out or put back. */
  'suspend-account': SuspensionPayload;
  /** An edited text into the post's other copies, should the request that edited it die half-way (PostEdits). */
  'edit-copies': EditPayload;
  /** A public post's tags, counted for trending (TrendCounting). */
  'count-tags': TagCountPayload;
}

export interface EditPayload {
  postId: ObjectId;
}

/** A public post's tags, to count for trends (feed/trendCounting.ts), as its author used them when posting. */
export interface TagCountPayload {
  postId: ObjectId;
  authorId: string;
  tags: string[];
  at: Date;
}

export type TaskKind = keyof QueuedTasks;

/** A task to queue, its payload checked against its kind. */
export type QueuedTask = { [K in TaskKind]: NewTask<QueuedTasks[K] & Document> & { kind: K } }[TaskKind];

export type TaskHandlers = { [K in TaskKind]: (task: TaskDocument<QueuedTasks[K] & Document>, run: TaskRun) => Promise<void> };

/** Kinds whose claimed tasks run together; each returns the tasks it left for a run of their own. */
export type BatchTaskHandlers = { [K in TaskKind]?: (tasks: TaskDocument<QueuedTasks[K] & Document>[], run: TaskRun) => Promise<TaskDocument[]> };

/** Tasks queued for this process's workers, to hand over when their caller is ready (see `QueuedWork.enqueueHeld`). */
export interface HeldTasks {
  release(): void;
}

const notHeld: HeldTasks = { release: () => {} };

/**
 * The one durable queue of background work (fanout, notifications' clean-ups, account removal) and
 * the workers that run it in this process. Services queue through it; the handlers are given to
 * `start` in one table, by services.ts.
 */
export class QueuedWork {
  readonly queue: TaskQueue;
  private workers: TaskWorkers | null = null;
  /** The claim of the tasks this process queues for its own workers (see `enqueueHeld`). */
  private readonly ownClaim = new ObjectId().toHexString();

  constructor(
    db: Db,
    readonly options: FanoutOptions,
  ) {
    this.queue = new TaskQueue(db, workCollection, { leaseMs: options.leaseMs, maxAttempts: options.maxAttempts, retryBaseMs: options.retryBaseMs });
  }

  ensureIndexes(): Promise<void> {
    return this.queue.ensureIndexes();
  }

  /**
   * Queues tasks in one write (one already queued under its `_id` is left as it is) and wakes this
   * process's workers. `scope`: the request that queues them, which they name in their log lines.
   */
  async enqueue(tasks: readonly QueuedTask[], scope: Scope): Promise<void> {
    if (tasks.length === 0) return;
    await this.queue.enqueue(tasks, { origin: originOf(scope) });
    this.workers?.wake();
  }

  /**
   * Queues tasks that must not run before the caller has done what they follow (a post's delivery
   * is queued before the post is stored), for `release` to hand over once it has. While a worker
   * here is idle, they are queued claimed for it, and it runs them on release without claiming
   * them: a post's tasks cost their insert and completion, not the claim's two round trips more. A
   * process that dies before it releases them leaves them to whoever claims them once their lease
   * ends, as a worker that died would. Otherwise they are queued for any worker, as `enqueue` does.
   */
  async enqueueHeld(tasks: readonly QueuedTask[], scope: Scope): Promise<HeldTasks> {
    const workers = this.workers;
    if (!workers?.idle) {
      await this.enqueue(tasks, scope);
      return notHeld;
    }
    const added = await this.queue.enqueue(tasks, { claim: this.ownClaim, origin: originOf(scope) });
    const held = added.filter((task) => task.claim === this.ownClaim);
    return { release: () => workers.handOff(held) };
  }

  /**
   * Starts `workers` workers in this process (none for 0). They also run `periodic` (finishing what
   * dead requests left), so they run under fanout on read too, where the queue may stay empty.
   */
  start(handlers: TaskHandlers, batchHandlers: BatchTaskHandlers, logger: Logger, periodic: () => Promise<unknown>, workers = this.options.workers): void {
    if (this.workers || workers === 0) return;
    this.workers = new TaskWorkers(this.queue, handlers as never, {
      concurrency: workers,
      logger,
      periodic,
      periodicMs: 1000,
      claimBatch: this.options.claimBatch,
      batchHandlers: batchHandlers as never,
    });
    this.workers.start();
  }

  /** Gives this process's claimed tasks back and stops its workers. */
  async stop(): Promise<void> {
    await this.workers?.stop();
    this.workers = null;
  }

}

/** Runs one task as a worker would; tests use it with their own `run` to force interleavings. */
export function runTask(handlers: TaskHandlers, task: TaskDocument, run: TaskRun): Promise<void> {
  const handler = handlers[task.kind as TaskKind] as ((task: TaskDocument, run: TaskRun) => Promise<void>) | undefined;
  if (!handler) throw new Error(`no handler for tasks of kind "${task.kind}"`);
  return handler(task, run);
}
