import type { CommandStartedEvent, CommandSucceededEvent } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { feedStrategies } from '../../src/config.js';
import { runQueuedAsWorker } from '../support/queuedTasks.js';
import { startTestApp, type TestApp } from '../support/testApp.js';

/**
 * Every command a write costs, its request and what runs after the answer: the queued work a
 * worker claims and runs, and the sweep's pruning of the tokens the write left, which both run in
 * batches. Each write is made ten times and the total divided by ten, as a worker shares its
 * claims and a sweep pass its writes among the writes of a moment. The change stream's own reads
 * are not counted. The budgets are what the write path is built to: a change that adds a command
 * to a write shows here first. docs/write-path.md explains each.
 */
const budgets: Record<string, Record<(typeof feedStrategies)[number], number>> = {
  // The writers followed someone earlier in the minute: the follow spends a point of the rate
  // limit's lease, as an account's later writes in a minute do (one command more for its first).
  // A bucket strategy's backfill reads the followee's newest posts: from their outbox where this
  // process holds it (the followees here read their own timelines moments before), else one query.
  follow: { 'fanout-on-read': 8.5, 'time-buckets': 9.5, 'sized-buckets': 9.5, cache: 8.5 },
  // Under buckets the unfollowed author's entries leave in the sweep's pass, a batch's in one write
  // after the pass leases their pairs (time buckets then delete the buckets left empty).
  unfollow: { 'fanout-on-read': 7.5, 'time-buckets': 8, 'sized-buckets': 7.9, cache: 7.5 },
  post: { 'fanout-on-read': 2, 'time-buckets': 3.9, 'sized-buckets': 3.9, cache: 4 },
  // A public post with two tags: a post's, its count task (in the delivery's insert where one is
  // queued, an insert of its own under fanout on read), and its share of the worker's batched count
  // (which posts are stored, one find and two bulk writes per batch, with the batch's claim and completion).
  // (The authors' second post of the minute: its rate limit is a leased point.)
  taggedPost: { 'fanout-on-read': 2.9, 'time-buckets': 3.4, 'sized-buckets': 3.4, cache: 3.5 },
  like: { 'fanout-on-read': 4.5, 'time-buckets': 4.5, 'sized-buckets': 4.5, cache: 4.5 },
  unlike: { 'fanout-on-read': 4.7, 'time-buckets': 4.7, 'sized-buckets': 4.7, cache: 4.7 },
  repost: { 'fanout-on-read': 6.5, 'time-buckets': 8, 'sized-buckets': 8, cache: 8 },
  delete: { 'fanout-on-read': 14.5, 'time-buckets': 24.5, 'sized-buckets': 24.5, cache: 25.5 },
  edit: { 'fanout-on-read': 7.5, 'time-buckets': 16.5, 'sized-buckets': 16.5, cache: 18.5 },
  quote: { 'fanout-on-read': 11.4, 'time-buckets': 11.7, 'sized-buckets': 11.7, cache: 11.7 },
};

const times = 10;

const commandsOf = (commands: readonly CommandStartedEvent[]) =>
  commands.filter((command) => command.commandName !== 'getMore').map((command) => `${command.commandName} ${command.command[command.commandName]}`);

describe.each(feedStrategies)('commands per write: %s', (strategy) => {
  let app: TestApp;
  const tokens: Record<string, string> = {};
  const tallies: Record<string, string> = {};
  const writers = Array.from({ length: times }, (_, i) => `wrt_writer_${i}`);
  const authors = Array.from({ length: times }, (_, i) => `wrt_author_${i}`);

  const runAsWorker = () => runQueuedAsWorker(app);

  /**
   * The sweep's pass over the documents a write leaves tokens on, as the workers run it every
   * second: the write's share of it. (A pass over a kind of document no write touched costs its one
   * empty read whatever the traffic, and is no write's.)
   */
  const prune = async (kind: string) => {
    const { interactions, graph, relations } = app.services;
    if (kind === 'follow' || kind === 'unfollow') await graph.pairs.pruneSettled(relations.followEffects);
    if (kind === 'like' || kind === 'unlike') await interactions.likes.pruneSettled();
    if (kind === 'repost') await interactions.reposts.pruneSettled();
  };

  /** The commands of `times` writes made one after another, their queued work and the pruning after them, per write. */
  const perWrite = async (kind: string, write: (i: number) => [query: string, as: string]) => {
    const commands: CommandStartedEvent[] = [];
    const record = (event: CommandStartedEvent) => commands.push(event);
    app.database.client.on('commandStarted', record);
    try {
      for (let i = 0; i < times; i++) {
        const [query, as] = write(i);
        const answer = await app.gql(query, {}, tokens[as]);
        expect(answer.errors).toBeUndefined();
      }
      // A worker's look at an empty queue is no write's: it runs only when the writes queued work.
      if (commands.some((command) => command.commandName === 'insert' && command.command.insert === 'fanout_tasks')) await runAsWorker();
      await prune(kind);
    } finally {
      app.database.client.off('commandStarted', record);
    }
    const tally = new Map<string, number>();
    for (const name of commandsOf(commands)) tally.set(name, (tally.get(name) ?? 0) + 1);
    // Said with a failing budget, so that a run which went over shows which command it was.
    tallies[kind] = [...tally].map(([name, n]) => `${n / times} ${name}`).join(', ');
    if (process.env.SHOW_COMMANDS) console.log(strategy, write(0)[0].slice(0, 30), tallies[kind]);
    return commandsOf(commands).length / times;
  };

  /** Waits until every writer's and author's account is held again: earlier writes' announcements make this process forget them. */
  const heldAgain = async () => {
    for (let quiet = 0; quiet < 2; ) {
      const commands = await app.commandsDuring(() => Promise.all([...writers, ...authors].map((handle) => app.gql('{ viewer { handle } }', {}, tokens[handle]))));
      quiet = commandsOf(commands).length === 0 ? quiet + 1 : 0;
      await new Promise((resolve) => setTimeout(resolve, 30));
    }
  };

  beforeAll(async () => {
    app = await startTestApp({ FEED_STRATEGY: strategy, FANOUT_WORKERS: '0' });
    for (const handle of [...writers, ...authors, 'wrt_other']) tokens[handle] = await app.signUp(handle);
    for (const writer of writers) {
      await app.gql('mutation { follow(handle: "wrt_other") { handle } }', {}, tokens[writer]);
      await app.gql('{ timeline { edges { cursor } } }', {}, tokens[writer]);
    }
    // Everyone has read a page: what an active account's filters are, this process holds.
    for (const author of authors) await app.gql('{ timeline { edges { cursor } } }', {}, tokens[author]);
    await runAsWorker();
  }, 60_000);
  afterAll(() => app?.stop());

  it('stays within the budget of each write, request and after', async () => {
    const counts: Record<string, number> = {};
    await heldAgain();
    counts.follow = await perWrite('follow', (i) => [`mutation { follow(handle: "${authors[i]}") { followerCount } }`, writers[i]!]);
    await heldAgain();
    const posts: string[] = [];
    counts.post = await perWrite('post', (i) => ['mutation { createPost(text: "counted") { id } }', authors[i]!]);
    for (const author of authors) posts.push((await app.gql(`{ user(handle: "${author}") { posts(first: 1) { edges { node { id } } } } }`, {}, tokens[author])).data.user.posts.edges[0].node.id);
    await runAsWorker();
    await heldAgain();
    counts.taggedPost = await perWrite('taggedPost', (i) => ['mutation { createPost(text: "counted #once #twice") { id } }', authors[i]!]);
    await runAsWorker();
    // People like what a page showed them.
    for (const writer of writers) await app.gql('{ timeline(first: 5) { edges { cursor } } }', {}, tokens[writer]);
    await heldAgain();
    counts.like = await perWrite('like', (i) => [`mutation { likePost(id: "${posts[i]}") { likeCount } }`, writers[i]!]);
    await heldAgain();
    counts.unlike = await perWrite('unlike', (i) => [`mutation { unlikePost(id: "${posts[i]}") { likeCount } }`, writers[i]!]);
    await heldAgain();
    counts.repost = await perWrite('repost', (i) => [`mutation { repost(id: "${posts[i]}") { repostCount } }`, writers[i]!]);
    await heldAgain();
    counts.unfollow = await perWrite('unfollow', (i) => [`mutation { unfollow(handle: "${authors[i]}") { followerCount } }`, writers[i]!]);
    await heldAgain();
    counts.edit = await perWrite('edit', (i) => [`mutation { editPost(id: "${posts[i]}", text: "counted, then edited") { id } }`, authors[i]!]);
    await heldAgain();
    counts.quote = await perWrite('quote', (i) => [`mutation { createPost(text: "quoting", quoteOf: "${posts[i]}") { id } }`, writers[i]!]);
    await heldAgain();
    const deleted: string[] = [];
    for (const author of authors) deleted.push((await app.gql('mutation { createPost(text: "deleted") { id } }', {}, tokens[author])).data.createPost.id);
    await runAsWorker();
    await heldAgain();
    counts.delete = await perWrite('delete', (i) => [`mutation { deletePost(id: "${deleted[i]}") }`, authors[i]!]);
    if (process.env.SHOW_COMMANDS) console.log(strategy, JSON.stringify(counts));
    for (const [write, count] of Object.entries(counts)) expect({ write, count }, tallies[write]).toEqual({ write, count: Math.min(count, budgets[write]![strategy]) });
  }, 60_000);
});

describe('what a reply waits on before it is stored', () => {
  let app: TestApp;
  afterAll(() => app?.stop());

  it('reads the post it answers beside the rate limit, not after it', async () => {
    app = await startTestApp({ FANOUT_WORKERS: '0' });
    // The reply is the replier's first write of the minute: its rate limit takes a lease (see RateLimits).
    const parent = await app.gql('mutation { createPost(text: "asked") { id } }', {}, await app.signUp('wrt_asker'));
    const token = await app.signUp('wrt_replier');
    const steps: string[] = [];
    const started = (event: CommandStartedEvent) => steps.push(`started ${event.commandName} ${event.command[event.commandName]}`);
    const answered = (event: CommandSucceededEvent) => steps.push(`answered ${event.commandName}`);
    app.database.client.on('commandStarted', started);
    app.database.client.on('commandSucceeded', answered);
    try {
      const reply = await app.gql('mutation($to: ID!) { createPost(text: "answered", replyTo: $to) { replyTo { id } } }', { to: parent.data.createPost.id }, token);
      expect(reply.data?.createPost.replyTo.id).toBe(parent.data.createPost.id);
    } finally {
      app.database.client.off('commandStarted', started);
      app.database.client.off('commandSucceeded', answered);
    }
    const parentRead = steps.indexOf('started find content');
    const rateLimit = steps.indexOf('started findAndModify rate_limits');
    expect(parentRead).toBeGreaterThanOrEqual(0);
    expect(rateLimit).toBeGreaterThanOrEqual(0);
    // No answer came between the two: neither waited on the other.
    expect(steps.slice(Math.min(parentRead, rateLimit), Math.max(parentRead, rateLimit)).filter((step) => step.startsWith('answered'))).toEqual([]);
  });
});
