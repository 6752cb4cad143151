import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quietLogger } from '../../src/logger.js';
import { insertFollowers } from '../support/bulkGraph.js';
import { startTestApp, type TestApp } from '../support/testApp.js';

const strategies = [
  { strategy: 'time-buckets', collection: 'timed_buckets' },
  { strategy: 'sized-buckets', collection: 'sized_buckets' },
  { strategy: 'cache', collection: 'timeline_cache' },
] as const;
const authorCount = 50;
const postsPerAuthor = 4;
const followersPerAuthor = 3;

/**
 * 200 posts of 50 authors wait in the queue; then one worker claiming 50 tasks at a time delivers
 * them. Small audiences are read by the post's own task and written across posts together.
 */
describe.each(strategies)('many small deliveries claimed together: $strategy', ({ strategy, collection }) => {
  let app: TestApp;
  const tokens = new Map<string, string>();
  const authors = Array.from({ length: authorCount }, (_, i) => `bulk_author_${i}`);
  const followersOf = (author: string) => Array.from({ length: followersPerAuthor }, (_, i) => `${author}_fan_${i}`);

  beforeAll(async () => {
    app = await startTestApp({ FEED_STRATEGY: strategy, FANOUT_WORKERS: '0', FANOUT_CLAIM: '50', FANOUT_BATCH: '1000' });
    await Promise.all(
      authors.map(async (author) => {
        const token = await app.signUp(author);
        tokens.set(author, token);
        await insertFollowers(app.database.db, author, followersOf(author), { withCaches: strategy === 'cache' });
        for (let i = 0; i < postsPerAuthor; i++) await app.gql(`mutation { createPost(text: "${author} post ${i}") { id } }`, {}, token);
      }),
    );
  }, 120_000);
  afterAll(() => app?.stop());

  /** One worker, claiming 50 tasks at a time, runs everything queued. */
  const deliverQueued = async () => {
    app.services.work.start(app.services.taskHandlers, app.services.batchTaskHandlers, quietLogger, async () => {}, 1);
    await app.settled(60_000);
    await app.services.work.stop();
  };

  it('puts every post in every follower’s timeline once, with one bulk write per 50 tasks claimed', async () => {
    expect(await app.services.fanout.queue.tasks.countDocuments()).toBe(authorCount * postsPerAuthor);
    const commands = await app.commandsDuring(deliverQueued);
    const timelineWrites = commands.filter((command) => command.commandName === 'update' && command.command.update === collection);
    expect(timelineWrites).toHaveLength((authorCount * postsPerAuthor) / 50);
    // This process stored the posts: it reads `content` only to check, after each bulk write, that none was deleted meanwhile.
    const contentReads = commands.filter((command) => command.commandName === 'find' && command.command.find === 'content');
    expect(contentReads).toHaveLength(timelineWrites.length);

    const docs = await app.database.db.collection<any>(collection).find().toArray();
    const owner = (doc: any) => (strategy === 'time-buckets' ? doc._id._u : strategy === 'sized-buckets' ? doc._u : doc._id);
    const received = new Map<string, string[]>();
    for (const doc of docs) received.set(owner(doc), [...(received.get(owner(doc)) ?? []), ...doc._c.map((entry: any) => entry._id.toHexString())]);
    const posts = await app.database.db.collection<any>('content').find().toArray();
    for (const author of authors) {
      const expected = posts.filter((post) => post._a === author).map((post) => post._id.toHexString()).sort();
      for (const follower of followersOf(author)) expect([...(received.get(follower) ?? [])].sort()).toEqual(expected);
    }
  });

  it('writes nothing and checks nothing for posts whose followers have all stopped reading', async () => {
    const db = app.database.db;
    const everyFollower = authors.flatMap(followersOf);
    // Longer ago than ACTIVE_READER_DAYS: fanout skips them; their timelines are completed when they come back.
    await db.collection<any>('users').updateMany({ _id: { $in: everyFollower } }, { $set: { readAt: new Date(Date.now() - 30 * 24 * 3600 * 1000) } });
    const before = await db.collection<any>(collection).find().toArray();
    for (const author of authors) await app.gql(`mutation { createPost(text: "${author} posts to nobody awake") { id } }`, {}, tokens.get(author));
    const commands = await app.commandsDuring(deliverQueued);
    expect(commands.filter((command) => command.commandName === 'update' && command.command.update === collection)).toHaveLength(0);
    // Nothing written, so no delete or edit made meanwhile could have been missed.
    expect(commands.filter((command) => command.commandName === 'find' && command.command.find === 'content')).toHaveLength(0);
    expect(await app.services.fanout.queue.tasks.countDocuments()).toBe(0);
    expect(await db.collection<any>(collection).find().toArray()).toEqual(before);
  });
});
