import { startWorkers } from '../../src/services.js';
import { ObjectId } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { feedStrategies, timelineContentModes } from '../../src/config.js';
import { quietLogger } from '../../src/logger.js';
import { insertFollowers } from '../support/bulkGraph.js';
import { startTestApp, type TestApp } from '../support/testApp.js';
import { internalId } from '../support/ids.js';

const combinations = feedStrategies.flatMap((strategy) => timelineContentModes.map((content) => ({ strategy, content })));
const followerCount = 5000;
const timelineCollection: Record<string, string | null> = {
  'fanout-on-read': null,
  'time-buckets': 'timed_buckets',
  'sized-buckets': 'sized_buckets',
  cache: 'timeline_cache',
};

describe.each(combinations)('a user with 5,000 followers posts: $strategy, $content', ({ strategy, content }) => {
  let app: TestApp;
  const followers = Array.from({ length: followerCount }, (_, i) => `fan_${String(i).padStart(4, '0')}`);
  const readers = [followers[0]!, followers[2500]!, followers[4999]!];
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    // Workers start only after the request is measured, so its commands are its own.
    app = await startTestApp({ FEED_STRATEGY: strategy, TIMELINE_CONTENT: content, FANOUT_WORKERS: '0' });
    const star = await app.signUp('star');
    tokens.star = star;
    await insertFollowers(app.database.db, 'star', followers);
    for (const handle of readers) {
      tokens[handle] = await app.services.accounts.tokenFor(handle);
      // Reading first gives these followers a cache under the cache strategy.
      await app.gql('{ timeline { edges { cursor } } }', {}, tokens[handle]);
    }
  }, 120_000);
  afterAll(() => app?.stop());

  it('returns before fanout, then reaches every follower through sub-tasks of at most 1,000 recipients', async () => {
    let postId = '';
    const requestCommands = await app.commandsDuring(async () => {
      const result = await app.gql('mutation { createPost(text: "hello, all of you") { id } }', {}, tokens.star);
      postId = result.data.createPost.id;
    });
    const collection = timelineCollection[strategy];
    // The request itself writes no timeline, whatever the audience: the author's own pages merge their outbox.
    const requestWrites = requestCommands.filter((command) => command.commandName === 'update' && command.command.update === collection);
    expect(requestWrites).toEqual([]);

    const fanoutCommands = await app.commandsDuring(async () => {
      startWorkers(app.services, quietLogger, 2);
      await app.settled();
    });
    for (const handle of readers) {
      const page = await app.gql('{ timeline(first: 1) { edges { node { id text author { handle } } } } }', {}, tokens[handle]);
      expect(page.data.timeline.edges).toEqual([{ node: { id: postId, text: 'hello, all of you', author: { handle: 'star' } } }]);
    }
    if (!collection) {
      expect([...requestCommands, ...fanoutCommands].filter((command) => command.commandName === 'update')).toHaveLength(0);
      return;
    }
    const writes = fanoutCommands.filter((command) => command.commandName === 'update' && command.command.update === collection);
    expect(writes.reduce((sum, write) => sum + write.command.updates.length, 0)).toBe(followerCount);
    for (const write of writes) {
      expect(write.command.updates.length).toBeLessThanOrEqual(1000);
      expect(write.command.ordered).toBe(false);
    }

    // Sub-tasks carry a range of followers, not the followers: five small documents, and no one cursor over the audience.
    const subTasks = fanoutCommands
      .filter((command) => command.commandName === 'insert' && command.command.insert === 'fanout_tasks')
      .flatMap((command) => command.command.documents as { payload: { range?: unknown } }[]);
    expect(subTasks).toHaveLength(followerCount / 1000);
    for (const task of subTasks) {
      expect(task.payload.range).toBeDefined();
      expect(JSON.stringify(task).length).toBeLessThan(1000);
    }
    expect(fanoutCommands.filter((command) => command.commandName === 'getMore' && command.command.collection === 'followers')).toHaveLength(0);

    const holders = await app.database.db.collection(collection).countDocuments({ '_c._id': internalId(postId) });
    // Buckets hold the post for every follower (the author's own pages merge their outbox); a cache exists only for those who read.
    expect(holders).toBe(strategy === 'cache' ? readers.length : followerCount);
  });
});
