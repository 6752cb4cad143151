import type { Logger } from '../logger.js';
import { contextFrom, failed, inSpan, runInContext, SpanKind, startSpan } from '../observability/tracing.js';
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
  /** Whether work was queued here while every worker was busy (see `wake`). */
  private workAnnounced = false;
  /** Tasks queued already claimed by this process (see `handOff`), not started yet. */
  private readonly handedOff: TaskDocument[] = [];

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

  /** Lets running tasks finish, gives back the claimed ones not started yet, then resolves. */
  async stop(): Promise<void> {
    this.running = false;
    for (const wake of this.sleepers) wake();
    this.sleepers.clear();
    await Promise.all(this.loops);
    this.loops = [];
    await this.giveBack(this.handedOff.splice(0));
  }

  /**
   * Whether a worker here would run work handed to it at once: one sleeps, with nothing handed to
   * it yet. Work queued claimed for this process only then is never left waiting behind a long task.
   */
  get idle(): boolean {
    return this.running && this.sleepers.size > 0 && this.handedOff.length === 0;
  }

  /**
   * Tasks this process queued already claimed (TaskQueue.enqueue with a claim): a worker runs them
   * as it would tasks it claimed, without the claim's two round trips. One whose lease is mostly
   * gone when a worker gets to it is left to whoever claims it when the lease ends.
   */
  handOff(tasks: readonly TaskDocument[]): void {
    if (tasks.length === 0) return;
    if (!this.running) return void this.giveBack([...tasks]);
    this.handedOff.push(...tasks);
    this.wake();
  }

  private takeHandedOff(limit: number): TaskDocument[] {
    const minLeaseMs = this.queue.options.leaseMs / 3;
    return this.handedOff.splice(0, limit).filter((task) => this.queue.leaseLeftMs(task) > minLeaseMs);
  }

  /**
   * New work was queued by this process: one sleeping worker looks now instead of at the next
   * poll. With none asleep, the first to finish what it runs looks again at once. One is enough:
   * a worker that claims a full batch wakes another for what may be left.
   */
  wake(): void {
    const [sleeper] = this.sleepers;
    if (!sleeper) {
      this.workAnnounced = true;
      return;
    }
    this.sleepers.delete(sleeper);
    sleeper();
  }

  /**
   * Claims and runs tasks while there are any. Work this process queues wakes a worker; the poll
   * finds what other processes queue, what was queued for later and what a dead worker's lease
   * left, within `maxIdleMs`. A worker that finds the queue empty, or finishes a batch short of
   * full with no work announced meanwhile, sleeps until either: an idle queue costs no command more
   * than one claim per poll, and a write's task is claimed once, by one worker.
   */
  private async loop(): Promise<void> {
    const pollMs = this.options.maxIdleMs ?? 250;
    const claimBatch = this.options.claimBatch ?? 1;
    while (this.running) {
      // Work announced from here on is looked for after this claim, whatever it finds.
      this.workAnnounced = false;
      let tasks: TaskDocument[] = [];
      try {
        await this.housekeeping();
        tasks = this.takeHandedOff(claimBatch);
        if (tasks.length === 0) tasks = claimBatch === 1 ? [await this.queue.claim()].filter((task) => task !== null) : await this.queue.claimBatch(claimBatch);
      } catch (error) {
        this.options.logger.error('fanout worker: could not claim a task', error);
      }
      if (tasks.length > 0) {
        // A full batch may have left more behind: another worker looks beside this one.
        if (tasks.length === claimBatch) this.wake();
        const lease = new BatchLease(this.queue, tasks);
        try {
          await this.runClaimed(tasks, lease);
        } finally {
          lease.end();
        }
        if (tasks.length === claimBatch) continue;
      }
      if (this.workAnnounced) continue;
      await sleep(pollMs, this.sleepers);
    }
  }

  /** A task postponed or retried in `ms`: a worker looks for it then, not at the poll after. */
  private wakeIn(ms: number): void {
    setTimeout(() => this.wake(), ms).unref();
  }

  /**
   * Kinds with a batch handler run together; whatever a batch could not finish, and every other
   * kind, one by one. Once the workers are stopping, what has not started goes back to the queue.
   */
  private async runClaimed(tasks: TaskDocument[], lease: BatchLease): Promise<void> {
    const byKind = new Map<string, TaskDocument[]>();
    for (const task of tasks) byKind.set(task.kind, [...(byKind.get(task.kind) ?? []), task]);
    for (const [kind, group] of byKind) {
      if (!this.running) {
        await this.giveBack(group, lease);
        continue;
      }
      const batchHandler = this.options.batchHandlers?.[kind];
      const alone = batchHandler ? await this.runBatch(batchHandler, group, lease) : group;
      for (const [index, task] of alone.entries()) {
        if (!this.running) {
          await this.giveBack(alone.slice(index), lease);
          break;
        }
        await this.run(task, lease);
      }
    }
  }

  /** The tasks still to run one by one: those the handler left, or all of them when it failed. */
  private async runBatch(handler: BatchHandler, tasks: TaskDocument[], lease: BatchLease): Promise<TaskDocument[]> {
    const started = performance.now();
    // One span per task, each in the trace of the request that queued it; the batch's own work runs in the first.
    const spans = tasks.map((task) => startSpan(`task ${task.kind}`, SpanKind.CONSUMER, taskAttributes(task, tasks.length), contextFrom(task.origin)));
    const work = () => handler(tasks, { attempt: Math.max(...tasks.map((task) => task.attempts)), checkpoint: lease.checkpoint });
    try {
      const left = new Set(await (spans[0] ? runInContext(spans[0].context, work) : work()));
      const finished = tasks.filter((task) => !left.has(task));
      await this.queue.completeBatch(finished);
      lease.settled(finished);
      for (const task of finished) this.logRun(task, 'done', started, tasks.length);
      return [...left];
    } catch (error) {
      for (const span of spans) if (span) failed(span.span, error);
      // Each task gets its own run, with its own outcome (retry later, failure, dead). A batch that
      // cannot proceed yet is no failure: its tasks say so again when they run alone.
      if (!(error instanceof RetryLater)) this.options.logger.error(`fanout worker: a batch of ${tasks.length} tasks failed; running each alone`, error);
      return tasks;
    } finally {
      for (const span of spans) span?.span.end();
    }
  }

  private async run(task: TaskDocument, lease: BatchLease): Promise<void> {
    const handler = this.handlers[task.kind];
    const started = performance.now();
    const parent = contextFrom(task.origin);
    try {
      await inSpan(`task ${task.kind}`, { kind: SpanKind.CONSUMER, attributes: taskAttributes(task, 1), parent }, async () => {
        if (!handler) throw new Error(`no handler for tasks of kind "${task.kind}"`);
        await handler(task, { attempt: task.attempts, checkpoint: lease.checkpoint });
      });
      await this.queue.complete(task);
      this.logRun(task, 'done', started, 1);
    } catch (error) {
      if (error instanceof RetryLater) {
        await this.queue.postpone(task, error.delayMs).then(
          () => {
            this.logRun(task, 'postponed', started, 1);
            this.wakeIn(error.delayMs);
          },
          (postponeError: unknown) => this.options.logger.error(`fanout worker: could not postpone task ${task._id}`, postponeError),
        );
        return;
      }
      try {
        const outcome = await this.queue.fail(task, error);
        if (outcome === 'retry') this.wakeIn(this.queue.retryDelayMs(task));
        this.options.logger.error(`fanout worker: task ${task._id} failed (attempt ${task.attempts}, ${outcome})`, error, taskFields(task));
      } catch (failError) {
        this.options.logger.error(`fanout worker: could not record the failure of task ${task._id}`, failError, taskFields(task));
      }
    } finally {
      lease.settled([task]);
    }
  }

  /** Claimed, not started, and the workers are stopping: back in line for another worker at once. */
  private async giveBack(tasks: TaskDocument[], lease?: BatchLease): Promise<void> {
    if (tasks.length === 0) return;
    try {
      await this.queue.release(tasks);
      for (const task of tasks) this.options.logger.debug('task given back', taskFields(task));
    } catch (error) {
      // Their lease runs out instead, and another worker takes them then.
      this.options.logger.error(`fanout worker: could not give back ${tasks.length} claimed tasks`, error);
    } finally {
      lease?.settled(tasks);
    }
  }

  /** One line per task run: what it was, which attempt, how long, how it ended, and the request that queued it. */
  private logRun(task: TaskDocument, outcome: 'done' | 'postponed', startedAt: number, batch: number): void {
    const fields = { ...taskFields(task), outcome, durationMs: Math.round((performance.now() - startedAt) * 10) / 10, ...(batch > 1 ? { batch } : {}) };
    // A task that cannot proceed yet may be postponed many times a second: not worth a line each at info.
    if (outcome === 'postponed') this.options.logger.vetted.debug('task', fields);
    else this.options.logger.vetted.info('task', fields);
  }

  private async housekeeping(): Promise<void> {
    const { periodic, periodicMs = 1000 } = this.options;
    if (!periodic || Date.now() - this.lastPeriodic < periodicMs) return;
    this.lastPeriodic = Date.now();
    await periodic();
  }
}

function taskFields(task: TaskDocument): Record<string, unknown> {
  return { taskId: task._id, kind: task.kind, attempt: task.attempts, ...(task.origin?.requestId ? { requestId: task.origin.requestId } : {}) };
}

function taskAttributes(task: TaskDocument, batch: number): Record<string, string | number> {
  return {
    'feed.task.kind': task.kind,
    'feed.task.attempt': task.attempts,
    ...(batch > 1 ? { 'feed.task.batch': batch } : {}),
    ...(task.origin?.requestId ? { 'feed.request_id': task.origin.requestId } : {}),
  };
}
