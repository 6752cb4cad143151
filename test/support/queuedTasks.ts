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
