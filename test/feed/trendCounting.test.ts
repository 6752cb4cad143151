import { ObjectId } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { feedStrategies } from '../../src/config.js';
import type { TaskDocument } from '../../src/queue/taskQueue.js';
import { RetryLater } from '../../src/queue/taskWorkers.js';
import { runQueuedAsWorker } from '../support/queuedTasks.js';
import { startTestApp, type TestApp } from '../support/testApp.js';

/** Trends are counted by the queue: a post's request never waits on, or fails with, its count. */
describe.each(feedStrategies)('trend counting through the queue: %s', (strategy) => {
  let app: TestApp;
  let token: string;
  const trending = async () => (await app.gql('{ trendingTags(first: 50) { tag accounts posts } }')).data.trendingTags;

  beforeAll(async () => {
    app = await startTestApp({ FEED_STRATEGY: strategy, FANOUT_WORKERS: '0' });
    token = await app.signUp(`trc_${strategy.replace(/-/g, '_')}`);
  });
  afterAll(() => app?.stop());

  it('counts a tagged post after its request, once however often its task runs, and never a repost or a limited post', async () => {
    const commands = await app.commandsDuring(async () => {
      const created = await app.gql('mutation { createPost(text: "queued #counted #later") { id } }', {}, token);
      expect(created.errors).toBeUndefined();
      await app.gql('mutation { createPost(text: "limited #counted", visibility: FOLLOWERS) { id } }', {}, token);
    });
    // The request writes nothing of trends: the count is queued with the post's other work.
    expect(commands.filter((command) => ['tag_uses', 'tag_hours'].includes(command.command[command.commandName]))).toEqual([]);
    const queued = await app.services.work.queue.tasks.find({ kind: 'count-tags' }).toArray();
    expect(queued).toHaveLength(1);
    expect(await trending()).toEqual([]);
    // A worker that died after counting leaves its task to run again: it counts nothing twice.
    await app.services.runTask(queued[0]!, { attempt: 1, checkpoint: async () => {} });
    await runQueuedAsWorker(app);
    await app.services.runTask(queued[0]!, { attempt: 2, checkpoint: async () => {} });
    const counted = [
      { tag: 'counted', accounts: 1, posts: 1 },
      { tag: 'later', accounts: 1, posts: 1 },
    ];
    expect(await trending()).toEqual(counted);
    // A repost is no use of the tags: it queues no count.
    const reposter = await app.signUp(`trc_re_${strategy.replace(/-/g, '_')}`);
    const original = (await app.gql('{ searchPosts(query: "queued") { edges { node { id } } } }')).data.searchPosts.edges[0].node.id;
    expect((await app.gql(`mutation { repost(id: "${original}") { id } }`, {}, reposter)).errors).toBeUndefined();
    expect(await app.services.work.queue.tasks.countDocuments({ kind: 'count-tags' })).toBe(0);
    await runQueuedAsWorker(app);
    expect(await trending()).toEqual(counted);
  });

  it('counts no post that was never stored: its request failed after queueing the count', async () => {
    const run = { attempt: 1, checkpoint: async () => {} };
    const task = (ageMs: number): TaskDocument => ({
      _id: `count-tags:ghost${ageMs}`,
      kind: 'count-tags',
      payload: { postId: new ObjectId(), authorId: `trc_${strategy.replace(/-/g, '_')}`, tags: ['ghost'], at: new Date() },
      state: 'ready',
      runAt: new Date(),
      claim: 'c',
      attempts: 1,
      createdAt: new Date(Date.now() - ageMs),
    });
    // In a batch it is left to run alone; alone, it waits for its request a while, then is dropped.
    const batch = app.services.batchTaskHandlers['count-tags']! as unknown as (tasks: TaskDocument[], run: unknown) => Promise<TaskDocument[]>;
    const young = task(0);
    expect(await batch([young], run)).toEqual([young]);
    await expect(app.services.runTask(young, run)).rejects.toBeInstanceOf(RetryLater);
    await app.services.runTask(task(120_000), run);
    expect((await trending()).map((trend: { tag: string }) => trend.tag)).not.toContain('ghost');
  });

  it('drops the count of a post deleted before it ran at once, and leaves the queue drained for the posts after it', async () => {
    const created = await app.gql('mutation { createPost(text: "gone before counted #vanished") { id } }', {}, token);
    expect((await app.gql(`mutation { deletePost(id: "${created.data.createPost.id}") }`, {}, token)).errors).toBeUndefined();
    const queued = await app.services.work.queue.tasks.find({ kind: 'count-tags' }).toArray();
    expect(queued).toHaveLength(1);
    // Run alone, as a batch leaves it: no wait for a request that will never store it.
    await app.services.runTask(queued[0]!, { attempt: 1, checkpoint: async () => {} });
    await app.services.work.queue.complete(queued[0]!);
    await runQueuedAsWorker(app);
    expect(await app.services.work.queue.isDrained()).toBe(true);
    expect((await trending()).map((trend: { tag: string }) => trend.tag)).not.toContain('vanished');
  });
});
