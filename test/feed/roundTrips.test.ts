import type { CommandStartedEvent } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { feedStrategies, timelineContentModes } from '../../src/config.js';
import { requestCommands, startTestApp, type TestApp } from '../support/testApp.js';

const combinations = feedStrategies.flatMap((strategy) => timelineContentModes.map((content) => ({ strategy, content })));
const timelineCollection = { 'time-buckets': 'timed_buckets', 'sized-buckets': 'sized_buckets', cache: 'timeline_cache' } as const;
const readBatch = 2;
const pageSize = 5;

const finds = (commands: CommandStartedEvent[], collection: string) =>
  commands.filter((command) => command.commandName === 'find' && command.command.find === collection).length;

/** Database round trips for one first page, counted with the driver's command monitoring. */
describe.each(combinations)('round trips per first page: $strategy, $content', ({ strategy, content }) => {
  let app: TestApp;
  let token: string;

  beforeAll(async () => {
    app = await startTestApp({
      FEED_STRATEGY: strategy,
      TIMELINE_CONTENT: content,
      TIMELINE_BUCKET_SPAN: '0.01',
      TIMELINE_BUCKET_SIZE: '2',
      TIMELINE_CACHE_SIZE: '10',
      TIMELINE_READ_BATCH: String(readBatch),
    });
    token = await app.signUp('reader');
    const authors = await Promise.all(['writer1', 'writer2', 'writer3'].map((handle) => app.signUp(handle)));
    for (const handle of ['writer1', 'writer2', 'writer3']) await app.gql(`mutation { follow(handle: "${handle}") { handle } }`, {}, token);
    await app.gql('{ timeline { edges { cursor } } }', {}, token); // the cache strategy builds its cache here
    // One delivery at a time, so sized buckets fill in time order and the bound below is exact.
    for (let i = 0; i < 15; i++) {
      await app.gql(`mutation { createPost(text: "post ${i}") { id } }`, {}, authors[i % 3]);
      await app.settled();
    }
  });
  afterAll(() => app?.stop());

  it('stays within the strategy’s bound, with one batch for content and one for authors', async () => {
    await app.settled();
    await app.gql('{ timeline(first: 1) { edges { cursor } } }', {}, token); // records the reader as active
    // A cold process first: the reader's account, follow list, filters and the authors come from the database, once each.
    app.services.graph.invalidateAll();
    app.services.feed.readerFilters.invalidateAll();
    let page: any;
    const cold = await app.commandsDuring(async () => {
      page = await app.gql(`{ timeline(first: ${pageSize}) { edges { node { text author { handle } } } pageInfo { hasNextPage } } }`, {}, token);
    });
    expect(page.data.timeline.edges.map((e: any) => e.node.text)).toEqual(['post 14', 'post 13', 'post 12', 'post 11', 'post 10']);
    expect(page.data.timeline.pageInfo.hasNextPage).toBe(true);
    expect(finds(cold, 'users')).toBe(2); // the token's account, then every author of the page in one batch
    expect(finds(cold, 'following')).toBe(1);
    expect(finds(cold, 'reader_filters')).toBe(1);

    // Warm, as nearly every page is: only the timeline itself. The posts of linked entries are held
    // in the process like users (a page that asks for counts reads them apart; see below), and so
    // are the authors' newest posts that fanout on read merges (their outboxes).
    const heldCollections = ['users', 'following', 'reader_filters', ...(content === 'link' || strategy === 'fanout-on-read' ? ['content'] : [])];
    const commands = await app.warmCommandsDuring(
      () => app.gql(`{ timeline(first: ${pageSize}) { edges { node { text author { handle } } } pageInfo { hasNextPage } } }`, {}, token),
      heldCollections,
    );
    const pageCommands = requestCommands(commands);
    const total = pageCommands.length;
    for (const held of heldCollections) expect(finds(commands, held)).toBe(0);
    if (strategy === 'fanout-on-read') {
      expect(total, JSON.stringify(pageCommands.map((command) => command.command))).toBe(0);
      // A process that holds none of the outboxes reads them in one query, whatever the number of authors.
      app.services.content.forgetOutboxes(['reader', 'writer1', 'writer2', 'writer3']);
      const coldOutboxes = await app.commandsDuring(() =>
        app.gql(`{ timeline(first: ${pageSize}) { edges { node { text author { handle } } } pageInfo { hasNextPage } } }`, {}, token),
      );
      expect(finds(coldOutboxes, 'content')).toBe(1);
      expect(requestCommands(coldOutboxes)).toHaveLength(1);
      return;
    }
    // No followee has pulled posts: no pulled-posts query, and linked posts come from the tier.
    expect(finds(commands, 'content')).toBe(0);
    const collection = timelineCollection[strategy];
    if (strategy === 'cache') {
      // The cache this process read is held like the rest: a warm page makes no round trip.
      expect(total, JSON.stringify(pageCommands.map((command) => command.command))).toBe(0);
      // A process that holds no copy (another instance changed the cache) reads it, and only it.
      const coldCache = await app.commandsDuring(async () => {
        app.services.feed.backend.forgetHeld(['reader']);
        await app.gql(`{ timeline(first: ${pageSize}) { edges { node { text author { handle } } } pageInfo { hasNextPage } } }`, {}, token);
      });
      expect(finds(coldCache, collection)).toBe(1);
      expect(requestCommands(coldCache)).toHaveLength(1);
      // Counts change with every like, so they are never held: asking for them costs one batched read.
      const withCounts = await app.commandsDuring(() =>
        app.gql(`{ timeline(first: ${pageSize}) { edges { node { text likeCount replyCount author { handle } } } } }`, {}, token),
      );
      expect(finds(withCounts, 'content')).toBe(1);
      return;
    }
    // Buckets: at most one read per TIMELINE_READ_BATCH of the buckets that hold the page, the one
    // entry after it that proves hasNextPage (it must pass the reader's filters, so it is read like
    // the page), and the entry after that, which tells the page's source has more.
    const buckets = await app.database.db
      .collection<any>(collection)
      .find(strategy === 'time-buckets' ? { '_id._u': 'reader' } : { _u: 'reader' })
      .toArray();
    const newestFirst = buckets.sort((a, b) =>
      strategy === 'time-buckets' ? b._id._t - a._id._t : b._hi.getTime() - a._hi.getTime(),
    );
    let needed = 0;
    for (let held = 0; held < pageSize + 2; needed++) held += newestFirst[needed]!._c.length;
    expect(needed).toBeGreaterThan(readBatch); // the page really spans several round trips
    expect(finds(commands, collection)).toBeLessThanOrEqual(Math.ceil(needed / readBatch));
    expect(total).toBe(finds(commands, collection));
  });
});
