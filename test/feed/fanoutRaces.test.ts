import { ObjectId } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newBody } from '../../src/records/posts.js';
import { RetryLater, type TaskRun } from '../../src/queue/taskWorkers.js';
import { runQueued as runTasks } from '../support/queuedTasks.js';
import { startTestApp, type TestApp } from '../support/testApp.js';
import { apiPostId, internalId } from '../support/ids.js';
import { noRequest } from '../../src/observability/requestScope.js';

const strategies = [
  { strategy: 'time-buckets', collection: 'timed_buckets', ofUser: (handle: string) => ({ '_id._u': handle }) },
  { strategy: 'sized-buckets', collection: 'sized_buckets', ofUser: (handle: string) => ({ _u: handle }) },
  { strategy: 'cache', collection: 'timeline_cache', ofUser: (handle: string) => ({ _id: handle }) },
] as const;

/**
 * The races of the write path, each interleaving forced step by step: no fanout worker runs in this
 * process, and the test runs each queued sub-task itself, acting at the sub-task's checkpoints.
 */
describe.each(strategies)('write-path races: $strategy', ({ strategy, collection, ofUser }) => {
  let app: TestApp;
  const tokens: Record<string, string> = {};
  const gql = async (handle: string, query: string) => {
    const result = await app.gql(query, {}, tokens[handle]);
    if (result.errors) throw new Error(JSON.stringify(result.errors));
    return result.data;
  };
  const post = async (handle: string, text: string) => (await gql(handle, `mutation { createPost(text: "${text}") { id } }`)).createPost.id as string;
  const timelineTexts = async (handle: string, first = 50) =>
    (await gql(handle, `{ timeline(first: ${first}) { edges { node { text } } pageInfo { hasNextPage } } }`)).timeline;
  /** How many entries of this post the user's stored timeline holds. */
  const copies = async (handle: string, postId: string) => {
    const docs = await app.database.db.collection<any>(collection).find(ofUser(handle)).toArray();
    return docs.flatMap((doc) => doc._c as { _id: ObjectId }[]).filter((entry) => entry._id.equals(internalId(postId))).length;
  };
  const runQueued = (checkpoint?: TaskRun['checkpoint']) => runTasks(app, checkpoint);

  /**
   * Runs the queued tasks with `action` done once, at a sub-task's first checkpoint: its followers
   * and post read, nothing written. (The task that splits the audience checks in before it queues
   * the sub-tasks; that one is passed.)
   */
  const runQueuedInterruptedBy = async (action: () => Promise<unknown>) => {
    let done = false;
    await runQueued(async () => {
      if (done) return;
      if ((await app.services.fanout.queue.tasks.countDocuments({ kind: 'deliver', 'payload.range': { $exists: true } })) === 0) return;
      done = true;
      await action();
    });
    expect(done).toBe(true);
  };

  /**
   * Runs the queued tasks with `action` done once, inside the first delivery sub-task (one that
   * carries a range of followers), at its checkpoint after it found the post stored and read its
   * followers, before it writes.
   */
  const runQueuedWithDeliveryInterruptedBy = async (action: () => Promise<unknown>) => {
    const { fanout } = app.services;
    let done = false;
    for (let task = await fanout.queue.claim(); task; task = await fanout.queue.claim()) {
      const delivering = task.kind === 'deliver' && task.payload.range !== undefined;
      await app.services.runTask(task, {
        attempt: task.attempts,
        checkpoint: async () => {
          if (!delivering || done) return;
          done = true;
          await action();
        },
      });
      await fanout.queue.complete(task);
    }
    expect(done).toBe(true);
  };

  beforeAll(async () => {
    app = await startTestApp({ FEED_STRATEGY: strategy, FANOUT_WORKERS: '0', TIMELINE_BUCKET_SIZE: '3' });
    for (const handle of ['reader', 'author', 'other']) tokens[handle] = await app.signUp(handle);
    await gql('reader', '{ timeline { edges { cursor } } }'); // gives the reader a cache under the cache strategy
    for (let i = 0; i < 4; i++) await post('reader', `own ${i}`);
    await runQueued();
  });
  afterAll(() => app?.stop());

  it('never shows a post delivered after its author was unfollowed, and keeps the page full', async () => {
    await gql('reader', 'mutation { follow(handle: "author") { handle } }');
    const late = await post('author', 'late delivery');
    // The sub-task has read the follower list; the unfollow completes before it writes.
    await runQueuedInterruptedBy(() => gql('reader', 'mutation { unfollow(handle: "author") { handle } }'));
    expect(await copies('reader', late)).toBe(1);

    const page = await timelineTexts('reader', 3);
    expect(page.edges.map((edge: any) => edge.node.text)).toEqual(['own 3', 'own 2', 'own 1']);
    expect(page.pageInfo.hasNextPage).toBe(true);
    expect((await timelineTexts('reader')).edges.map((edge: any) => edge.node.text)).toEqual(['own 3', 'own 2', 'own 1', 'own 0']);
  });

  it('leaves nothing behind when the post is deleted while its delivery is split among the followers', async () => {
    await gql('reader', 'mutation { follow(handle: "author") { handle } }');
    const victim = await post('author', 'deleted mid-delivery');
    // The post's first task has found it in content and read the followers; the delete completes
    // before it queues their sub-tasks.
    await runQueuedInterruptedBy(() => gql('author', `mutation { deletePost(id: "${victim}") }`));
    expect(await copies('reader', victim)).toBe(0);
    expect(await copies('author', victim)).toBe(0);
    expect((await timelineTexts('reader')).edges.some((edge: any) => edge.node.text === 'deleted mid-delivery')).toBe(false);
  });

  it('leaves nothing behind when the post is deleted, and its retraction done, after a delivery found it stored and before it writes', async () => {
    await gql('reader', 'mutation { follow(handle: "author") { handle } }');
    const victim = await post('author', 'deleted while its delivery was writing');
    // Another worker runs the whole retraction while this sub-task sits between its check and its
    // write: nothing left to retract will ever come again, so the delivery must clean up after itself.
    await runQueuedWithDeliveryInterruptedBy(async () => {
      await gql('author', `mutation { deletePost(id: "${victim}") }`);
      await runQueued();
      expect(await copies('reader', victim)).toBe(0);
    });
    expect(await app.services.fanout.queue.isDrained()).toBe(true);
    expect(await copies('reader', victim)).toBe(0);
    expect(await copies('author', victim)).toBe(0);
    expect((await timelineTexts('reader')).edges.some((edge: any) => edge.node.text === 'deleted while its delivery was writing')).toBe(false);
  });

  it('stores a post once whether the follow backfill or the delivery comes first, and when a sub-task replays', async () => {
    await gql('other', '{ timeline { edges { cursor } } }'); // a cache, under the cache strategy
    // Delivery queued while "other" does not follow yet; the follow's backfill brings the post first.
    const first = await post('author', 'backfill first');
    await gql('other', 'mutation { follow(handle: "author") { handle } }');
    // The follow's notification rides the same queue; the post's delivery is the one timeline task.
    const queued = (await app.services.fanout.queue.tasks.find({ kind: { $in: ['deliver', 'retract'] } }).toArray()).map((task) => task._id);
    expect(queued).toHaveLength(1);
    await runQueued();
    expect(await copies('other', first)).toBe(1);

    // The delivery first, then the same sub-task again (its worker died before completing), then a repeated follow.
    const second = await post('author', 'delivery first');
    const task = (await app.services.fanout.queue.claim())!;
    await app.services.runTask(task, { attempt: 1, checkpoint: async () => {} });
    await app.services.runTask(task, { attempt: 2, checkpoint: async () => {} });
    await app.services.fanout.queue.complete(task);
    await runQueued();
    await gql('other', 'mutation { follow(handle: "author") { handle } }');
    expect(await copies('other', second)).toBe(1);
    expect(await copies('other', first)).toBe(1);
    const texts = (await timelineTexts('other')).edges.map((edge: any) => edge.node.text);
    expect(texts.filter((text: string) => text === 'delivery first')).toHaveLength(1);
  });

  it('ends 40 racing follows and unfollows of one pair consistent: edges, counts and timeline agree', async () => {
    const requests = Array.from({ length: 40 }, (_, i) =>
      gql('reader', `mutation { ${i % 2 ? 'unfollow' : 'follow'}(handle: "other") { handle } }`),
    );
    await Promise.all(requests);
    const db = app.database.db;
    const following = await db.collection('following').countDocuments({ _f: 'reader', _t: 'other' });
    const followers = await db.collection('followers').countDocuments({ _f: 'other', _t: 'reader' });
    expect(followers).toBe(following);
    const pair = await db.collection<any>('follow_pairs').findOne({ _id: 'reader other' });
    expect(pair).toMatchObject({ want: following === 1, applied: pair?.v, dirty: false });
    const users = await db.collection<any>('users').find({ _id: { $in: ['reader', 'other'] } }).toArray();
    const count = (handle: string, field: string) => users.find((user) => user._id === handle)[field];
    expect(count('reader', 'followingCount')).toBe(await db.collection('following').countDocuments({ _f: 'reader' }));
    expect(count('other', 'followerCount')).toBe(await db.collection('followers').countDocuments({ _f: 'other' }));

    await post('other', 'after the race');
    await runQueued();
    const shown = (await timelineTexts('reader')).edges.some((edge: any) => edge.node.text === 'after the race');
    expect(shown).toBe(following === 1);
  });

  it('delivers a post whose request died right after storing it, and drops the task of one never stored', async () => {
    await gql('reader', 'mutation { follow(handle: "author") { handle } }');
    const { content, fanout } = app.services;
    // Both requests queued their delivery, then died: one after storing its post, one before.
    const stored = content.preparePost('author', newBody('stored, then the server died'), { pulled: false });
    const lost = content.preparePost('author', newBody('never stored'), { pulled: false });
    await fanout.enqueueDelivery(stored, noRequest);
    await fanout.enqueueDelivery(lost, noRequest);
    await content.storePost(stored);
    // A minute later the lost post's task gives up waiting for it.
    await fanout.queue.tasks.updateOne({ 'payload.post.id': lost.id }, { $set: { createdAt: new Date(Date.now() - 120_000) } });
    await runQueued();
    expect(await fanout.queue.isDrained()).toBe(true);
    expect(await copies('reader', apiPostId(stored.id))).toBe(1);
    expect(await copies('reader', apiPostId(lost.id))).toBe(0);
  });

  it('never shows a post whose store failed, in its author’s own timeline or anywhere, and gives up its delivery a minute later', async () => {
    await gql('reader', 'mutation { follow(handle: "author") { handle } }');
    // Under the cache strategy both have a cache, which a delivery would write.
    for (const handle of ['author', 'reader']) await gql(handle, '{ timeline { edges { cursor } } }');
    const { content, fanout } = app.services;
    const storePost = content.storePost;
    content.storePost = async () => {
      throw new Error('the database went away');
    };
    try {
      const failed = await app.gql('mutation { createPost(text: "store failed") { id } }', {}, tokens.author);
      expect(failed.errors).toBeDefined();
    } finally {
      content.storePost = storePost;
    }
    const shown = async (handle: string) => (await timelineTexts(handle)).edges.map((edge: any) => edge.node.text);
    expect(await shown('author')).not.toContain('store failed');
    // Its delivery was queued before the store, and waits for a post that never comes.
    const task = (await fanout.queue.tasks.find({ kind: 'deliver' }).toArray()).find((each: any) => each.payload.post.body?.text === 'store failed');
    expect(task).toBeDefined();
    const postId = (task!.payload as { post: { id: ObjectId } }).post.id;
    // A minute later it gives up, and no timeline ever took the post.
    await fanout.queue.tasks.updateOne({ _id: task!._id }, { $set: { createdAt: new Date(Date.now() - 120_000) } });
    await runQueued();
    expect(await fanout.queue.isDrained()).toBe(true);
    for (const handle of ['author', 'reader']) {
      expect(await copies(handle, apiPostId(postId))).toBe(0);
      expect(await shown(handle)).not.toContain('store failed');
    }
  });

  it('finishes a deletion whose request died after queueing the retraction, leaving a live request time to do it first', async () => {
    await gql('reader', 'mutation { follow(handle: "author") { handle } }');
    const id = await post('author', 'its deleting request died');
    await runQueued();
    expect(await copies('reader', id)).toBe(1);
    const { content, fanout, feed } = app.services;
    // The author's own timeline holds it as a rebuild from `content` (or a cache built since) leaves it.
    await feed.backend.deliverTo(['author'], [(await content.getPost(internalId(id)))!]);
    expect(await copies('author', id)).toBe(1);
    // The request queued the retraction, then died before deleting the post.
    await fanout.enqueueRetraction((await content.getPost(internalId(id)))!, noRequest);
    const root = (await fanout.queue.claim())!;
    // While its request could still be deleting, the first sub-task waits for it.
    await expect(app.services.runTask(root, { attempt: 1, checkpoint: async () => {} })).rejects.toBeInstanceOf(RetryLater);
    expect(await content.getPost(internalId(id))).not.toBeNull();
    await fanout.queue.postpone(root, 0);
    // Long after, it finishes the deletion itself.
    await fanout.queue.tasks.updateOne({ _id: root._id }, { $set: { createdAt: new Date(Date.now() - 60_000) } });
    await runQueued();
    expect(await content.getPost(internalId(id))).toBeNull();
    expect(await copies('reader', id)).toBe(0);
    expect(await copies('author', id)).toBe(0);
  });

  it('takes a retracted post’s deliveries that no worker has started off the queue', async () => {
    await gql('reader', 'mutation { follow(handle: "author") { handle } }');
    const gone = await post('author', 'retracted before anyone delivered it');
    const { queue } = app.services.fanout;
    const ofPost = { kind: 'deliver', 'payload.post.id': internalId(gone) };
    // Every worker is busy elsewhere: the delivery waits while the post is deleted and retracted.
    await queue.tasks.updateMany(ofPost, { $set: { runAt: new Date(Date.now() + 3_600_000) } });
    await gql('author', `mutation { deletePost(id: "${gone}") }`);
    await runQueued();
    // Nothing of the post is left for a worker to do, or for an operator's queue status to show.
    expect(await queue.tasks.countDocuments(ofPost)).toBe(0);
    expect(await queue.isDrained()).toBe(true);
    expect(await copies('reader', gone)).toBe(0);
  });

  it('finishes at once the delivery of a post deleted before it ran, delivering nothing', async () => {
    await gql('reader', 'mutation { follow(handle: "author") { handle } }');
    const gone = await post('author', 'deleted before its delivery ran');
    await gql('author', `mutation { deletePost(id: "${gone}") }`);
    const { queue } = app.services.fanout;
    const delivery = (await queue.tasks.findOne({ kind: 'deliver', 'payload.post.id': internalId(gone) }))!;
    await queue.tasks.updateOne({ _id: delivery._id }, { $set: { runAt: new Date(0) } }); // ahead of the retraction
    const claimed = (await queue.claim())!;
    expect(claimed._id).toBe(delivery._id);
    // A worker in another process, which never saw the post stored: no "not stored yet" wait.
    const worker = await startTestApp({ MONGODB_URI: app.mongodbUri, FEED_STRATEGY: strategy, FANOUT_WORKERS: '0', TIMELINE_BUCKET_SIZE: '3' });
    try {
      await worker.services.runTask(claimed, { attempt: 1, checkpoint: async () => {} });
    } finally {
      await worker.stop();
    }
    await queue.complete(claimed);
    await runQueued();
    expect(await copies('reader', gone)).toBe(0);
    expect(await queue.isDrained()).toBe(true);
  });
});
