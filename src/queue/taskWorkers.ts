import type { Logger } from '../logger.js';
import type { TaskDocument, TaskQueue } from './taskQueue.js';
import { sleep } from '../sleep.js';

export interface TaskRun {
  /** 1 for the first attempt; more means an earlier attempt may have done part of the work. */
  attempt: number;
  /**
   * Called before each write: throws once the lease was lost to another worker, which carries on
   * from here, so this one must not write. Tests also use it to force interleavings.
   */
  checkpoint(): Promise<void>;
}

/** Thrown by a handler that cannot proceed yet, for a reason that is not a failure. */
export class RetryLater extends Error {
  constructor(
    readonly delayMs: number,
    reason: string,
  ) {
    super(reason);
  }
}

export type TaskHandler = (task: TaskDocument, run: TaskRun) => Promise<void>;

/**
 * Runs many tasks of one kind as one piece of work (one read and one write for all of them, say),
 * and returns those it left for a run of their own (their handler knows what to do with them).
 * Idempotent like a TaskHandler: when it throws, each task is run again on its own.
 */
export type BatchHandler = (tasks: TaskDocument[], run: TaskRun) => Promise<TaskDocument[]>;

export interface TaskWorkersOptions {
  concurrency: number;
  logger: Logger;
  /** Longest wait between two looks at an empty queue. */
  maxIdleMs?: number;
  /** Called between tasks, at most every `periodicMs`: housekeeping such as repairs. */
  periodic?: () => Promise<unknown>;
  periodicMs?: number;
  /** Tasks claimed at once (one claim, one lease renewal, one completion for all); 1 claims one at a time. */
  claimBatch?: number;
  /** Kinds whose claimed tasks run together, however many were claimed. */
  batchHandlers?: Record<string, BatchHandler>;
}

/**
 * The lease of tasks claimed together, renewed for all of them every third of the lease time. A
 * renewal that misses any (another worker took it over after a stall) ends the holder's right to
 * write for the whole batch: every checkpoint throws from then on.
 */
class BatchLease {
  private held = true;
  private readonly outstanding: Set<TaskDocument>;
  private readonly heartbeat: NodeJS.Timeout;

  constructor(
    private readonly queue: TaskQueue,
    tasks: readonly TaskDocument[],
  ) {
    this.outstanding = new Set(tasks);
    const renewEvery = Math.max(10, Math.floor(queue.options.leaseMs / 3));
    this.heartbeat = setInterval(() => {
      this.queue.extendBatch([...this.outstanding]).then(
        (renewed) => (this.held &&= renewed),
        () => (this.held = false),
      );
    }, renewEvery);
  }

  readonly checkpoint = async (): Promise<void> => {
    if (!this.held) throw new Error('lost the lease on a claimed task to another worker');
  };

  /** These tasks left the queue (or went back to it): renewals no longer include them. */
  settled(tasks: readonly TaskDocument[]): void {
    for (const task of tasks) this.outstanding.delete(task);
  }

  end(): void {
    clearInterval(this.heartbeat);
  }
}

/**
 * Runs `concurrency` loops that claim tasks and hand them to the handler of their kind. While a
 * task runs, its lease is renewed every third of the lease time; a worker that cannot renew it
 * (its process stalled, the database was away) lets the task go to whoever claims it next.
 */
export class TaskWorkers {
  private running = false;
  private loops: Promise<void>[] = [];
  private readonly sleepers = new Set<() => void>();
  private lastPeriodic = 0;

  constructor(
    private readonly queue: TaskQueue,
    private readonly handlers: Record<string, TaskHandler>,
    private readonly options: TaskWorkersOptions,
  ) {}

  start(): void {
    if (this.running || this.options.concurrency === 0) return;
    this.running = true;
    this.loops = Array.from({ length: this.options.concurrency }, () => this.loop());
  }

  /** Lets running tasks finish, then resolves. */
  async stop(): Promise<void> {
    this.running = false;
    this.wake();
    await Promise.all(this.loops);
    this.loops = [];
  }

  /** New work was queued by this process: look now instead of at the next poll. */
  wake(): void {
    for (const wake of this.sleepers) wake();
    this.sleepers.clear();
  }

  private async loop(): Promise<void> {
    const maxIdleMs = this.options.maxIdleMs ?? 250;
    const claimBatch = this.options.claimBatch ?? 1;
    let idleMs = 10;
    while (this.running) {
      let tasks: TaskDocument[] = [];
      try {
        await this.housekeeping();
        tasks = claimBatch === 1 ? [await this.queue.claim()].filter((task) => task !== null) : await this.queue.claimBatch(claimBatch);
      } catch (error) {
        this.options.logger.error('fanout worker: could not claim a task', error);
      }
      if (tasks.length === 0) {
        await sleep(idleMs, this.sleepers);
        idleMs = Math.min(idleMs * 2, maxIdleMs);
        continue;
      }
      idleMs = 10;
      const lease = new BatchLease(this.queue, tasks);
      try {
        await this.runClaimed(tasks, lease);
      } finally {
        lease.end();
      }
    }
  }

  /** Kinds with a batch handler run together; whatever a batch could not finish, and every other kind, one by one. */
  private async runClaimed(tasks: TaskDocument[], lease: BatchLease): Promise<void> {
    const byKind = new Map<string, TaskDocument[]>();
    for (const task of tasks) byKind.set(task.kind, [...(byKind.get(task.kind) ?? []), task]);
    for (const [kind, group] of byKind) {
      const batchHandler = this.options.batchHandlers?.[kind];
      const alone = batchHandler ? await this.runBatch(batchHandler, group, lease) : group;
      for (const task of alone) await this.run(task, lease);
    }
  }

  /** The tasks still to run one by one: those the handler left, or all of them when it failed. */
  private async runBatch(handler: BatchHandler, tasks: TaskDocument[], lease: BatchLease): Promise<TaskDocument[]> {
    try {
      const left = new Set(await handler(tasks, { attempt: Math.max(...tasks.map((task) => task.attempts)), checkpoint: lease.checkpoint }));
      const finished = tasks.filter((task) => !left.has(task));
      await this.queue.completeBatch(finished);
      lease.settled(finished);
      return [...left];
    } catch (error) {
      // Each task gets its own run, with its own outcome (retry later, failure, dead). A batch that
      // cannot proceed yet is no failure: its tasks say so again when they run alone.
      if (!(error instanceof RetryLater)) this.options.logger.error(`fanout worker: a batch of ${tasks.length} tasks failed; running each alone`, error);
      return tasks;
    }
  }

  private async run(task: TaskDocument, lease: BatchLease): Promise<void> {
    const handler = this.handlers[task.kind];
    try {
      if (!handler) throw new Error(`no handler for tasks of kind "${task.kind}"`);
      await handler(task, { attempt: task.attempts, checkpoint: lease.checkpoint });
      await this.queue.complete(task);
    } catch (error) {
      if (error instanceof RetryLater) {
        await this.queue.postpone(task, error.delayMs).catch((postponeError: unknown) => {
          this.options.logger.error(`fanout worker: could not postpone task ${task._id}`, postponeError);
        });
        return;
      }
      try {
        const outcome = await this.queue.fail(task, error);
        this.options.logger.error(`fanout worker: task ${task._id} failed (attempt ${task.attempts}, ${outcome})`, error);
      } catch (failError) {
        this.options.logger.error(`fanout worker: could not record the failure of task ${task._id}`, failError);
      }
    } finally {
      lease.settled([task]);
    }
  }

  private async housekeeping(): Promise<void> {
    const { periodic, periodicMs = 1000 } = this.options;
    if (!periodic || Date.now() - this.lastPeriodic < periodicMs) return;
    this.lastPeriodic = Date.now();
    await periodic();
  }
}
