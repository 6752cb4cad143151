import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/testApp.js';
import { noRequest } from '../../src/observability/requestScope.js';

/**
 * A post's work queued for this process's own idle workers: run without a claim once the post is
 * stored, and still run by whoever claims it when the process dies before handing it over.
 */
describe('work queued for this process’s workers', () => {
  let app: TestApp;
  const tokens: Record<string, string> = {};
  const timelineTexts = async (handle: string) =>
    (await app.gql('{ timeline(first: 10) { edges { node { text } } } }', {}, tokens[handle])).data.timeline.edges.map((edge: any) => edge.node.text);

  beforeAll(async () => {
    app = await startTestApp({ FEED_STRATEGY: 'cache', FANOUT_LEASE_SECONDS: '1' });
    for (const handle of ['qw_author', 'qw_reader']) tokens[handle] = await app.signUp(handle);
    await app.gql('mutation { follow(handle: "qw_author") { handle } }', {}, tokens.qw_reader);
    await timelineTexts('qw_reader');
    await app.settled();
  });
  afterAll(() => app?.stop());

  it('delivers a post with no claim of the queue: its tasks cost their insert and their completion', async () => {
    const commands = await app.commandsDuring(async () => {
      expect((await app.gql('mutation { createPost(text: "handed over") { id } }', {}, tokens.qw_author)).errors).toBeUndefined();
      await app.settled();
    });
    expect(await timelineTexts('qw_reader')).toContain('handed over');
    // A renewal of the running tasks' lease (only `runAt` set, under their claim) is no claim: with
    // this file's 1 s lease a loaded machine renews it while the delivery runs.
    const renewsLease = (command: (typeof commands)[number]) =>
      command.commandName === 'update' && command.command.updates.every((update: any) => Object.keys(update.u.$set ?? {}).join() === 'runAt' && Object.keys(update.u).join() === '$set');
    const queueWrites = commands.filter(
      (command) => command.command[command.commandName] === 'fanout_tasks' && command.commandName !== 'find' && command.commandName !== 'aggregate' && !renewsLease(command),
    );
    expect(queueWrites.map((command) => command.commandName)).toEqual(['insert', 'delete']);
  });

  it('has the post delivered by whoever claims its tasks when the request dies after storing it, before handing them over', async () => {
    const { content, work } = app.services;
    const store = content.storePost.bind(content);
    // The request stores the post and never returns: its process holds the claimed tasks until their lease ends.
    content.storePost = async (record) => {
      await store(record);
      await new Promise(() => {});
    };
    try {
      void app.services.publishing.post('qw_author', 'orphaned', noRequest);
      const deadline = Date.now() + 20_000;
      while ((await app.database.db.collection('content').countDocuments({ _m: 'orphaned' })) === 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      // Stored, and its delivery queued claimed by this process, which will never hand it over.
      expect(await work.queue.tasks.countDocuments({ claim: { $ne: null } })).toBe(1);
    } finally {
      content.storePost = store;
    }
    // Once the lease ends, a worker's poll claims the task and delivers the post.
    await app.settled();
    expect(await timelineTexts('qw_reader')).toContain('orphaned');
  });
});
