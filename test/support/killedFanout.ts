import type { ChildProcess } from 'node:child_process';
import { ObjectId } from 'mongodb';
import type { TestApp } from './testApp.js';
import { startWorkerProcess } from './workerProcess.js';
import { internalId } from './ids.js';

/**
 * Posts through `app` while a real worker process (`npm run worker`, with `environment`) runs its
 * fanout, and kills that process with SIGKILL once its first sub-task is done: the kill lands
 * mid-fanout when the audience spans many sub-tasks. Started processes go into `workers`, for the
 * caller to clean up. Returns the post's id.
 */
export async function postAndKillWorker(
  app: TestApp,
  token: string,
  text: string,
  environment: Record<string, string>,
  workers: ChildProcess[],
): Promise<ObjectId> {
  const worker = await startWorkerProcess(environment);
  workers.push(worker);
  const created = await app.gql(`mutation { createPost(text: "${text}") { id } }`, {}, token);
  const postId = internalId(created.data.createPost.id as string);
  // The first sub-task has written once some follower's timeline holds the post, whichever strategy keeps it.
  const delivered = async () => {
    const counts = await Promise.all(['timed_buckets', 'sized_buckets', 'timeline_cache'].map((name) => app.database.db.collection(name).countDocuments({ '_c._id': postId }, { limit: 1 })));
    return counts.some((count) => count > 0);
  };
  while (!(await delivered())) await new Promise((resolve) => setTimeout(resolve, 2));
  worker.kill('SIGKILL');
  await new Promise((resolve) => worker.once('exit', resolve));
  return postId;
}
