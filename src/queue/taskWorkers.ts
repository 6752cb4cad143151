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

export interface TaskWorkersOptions {
  concurrency: number;
  logger: Logger;
  /** Longest wait between two looks at an empty queue. */
  maxIdleMs?: number;
  /** Called between tasks, at most every `periodicMs`: housekeeping such as repairs. */
  periodic?: () => Promise<unknown>;
  periodicMs?: number;
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
    let idleMs = 10;
    while (this.running) {
      let task: TaskDocument | null = null;
      try {
        await this.housekeeping();
        task = await this.queue.claim();
      } catch (error) {
        this.options.logger.error('fanout worker: could not claim a task', error);
      }
      if (!task) {
        await sleep(idleMs, this.sleepers);
        idleMs = Math.min(idleMs * 2, maxIdleMs);
        continue;
      }
      idleMs = 10;
      await this.run(task);
    }
  }

  private async run(task: TaskDocument): Promise<void> {
    const handler = this.handlers[task.kind];
    let held = true;
    const renewEvery = Math.max(10, Math.floor(this.queue.options.leaseMs / 3));
    const heartbeat = setInterval(() => {
      this.queue.extend(task).then(
        (renewed) => (held &&= renewed),
        () => (held = false),
      );
    }, renewEvery);
    try {
      if (!handler) throw new Error(`no handler for tasks of kind "${task.kind}"`);
      const checkpoint = async () => {
        if (!held) throw new Error(`lost the lease on task ${task._id} to another worker`);
      };
      await handler(task, { attempt: task.attempts, checkpoint });
      clearInterval(heartbeat);
      await this.queue.complete(task);
    } catch (error) {
      clearInterval(heartbeat);
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
    }
  }

  private async housekeeping(): Promise<void> {
    const { periodic, periodicMs = 1000 } = this.options;
    if (!periodic || Date.now() - this.lastPeriodic < periodicMs) return;
    this.lastPeriodic = Date.now();
    await periodic();
  }
}
