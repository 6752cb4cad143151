import type { TaskDocument } from '../../src/queue/taskQueue.js';
import type { TaskRun } from '../../src/queue/taskWorkers.js';
import type { TestApp } from './testApp.js';

/**
 * Runs every queued fanout task once, in queue order, as a worker would, with `checkpoint` called
 * where a worker checks its lease: after a sub-task has read what it needs, before it writes. With
 * no worker running in the app (`FANOUT_WORKERS=0`), tests act at those points to force an ordering.
 */
export async function runQueued(app: TestApp, checkpoint: TaskRun['checkpoint'] = async () => {}): Promise<void> {
  const { fanout } = app.services;
  for (let task = await fanout.queue.claim(); task; task = await fanout.queue.claim()) {
    await app.services.runTask(task, { attempt: task.attempts, checkpoint });
    await fanout.queue.complete(task);
  }
}

/**
 * Claims and runs the queued work as one worker does: batches of up to 50 due tasks, each kind's
 * batch handler first (it may leave tasks to run one by one), until none is due. `during` wraps
 * each kind's run, so a caller can tell which commands which kind of work sent.
 */
export async function runQueuedAsWorker(app: TestApp, during: (kind: string, run: () => Promise<void>) => Promise<void> = (_, run) => run()): Promise<void> {
  const { work, batchTaskHandlers, runTask } = app.services;
  for (let claimed = await work.queue.claimBatch(50); claimed.length > 0; claimed = await work.queue.claimBatch(50)) {
    const byKind = new Map<string, TaskDocument[]>();
    for (const task of claimed) byKind.set(task.kind, [...(byKind.get(task.kind) ?? []), task]);
    for (const [kind, group] of byKind) {
      await during(kind, async () => {
        const batch = batchTaskHandlers[kind as keyof typeof batchTaskHandlers] as ((tasks: TaskDocument[], run: TaskRun) => Promise<TaskDocument[]>) | undefined;
        const run: TaskRun = { attempt: 1, checkpoint: async () => {} };
        const left = batch ? await batch(group, run) : group;
        await work.queue.completeBatch(group.filter((task) => !left.includes(task)));
        for (const task of left) {
          await runTask(task, run);
          await work.queue.complete(task);
        }
      });
    }
  }
}
