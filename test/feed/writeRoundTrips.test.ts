import type { CommandStartedEvent, CommandSucceededEvent } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { feedStrategies } from '../../src/config.js';
import { startTestApp, type TestApp } from '../support/testApp.js';

/**
 * Every command a write's request sends (its queued tasks and change announcements included), with
 * no worker or repair sweep running beside it. The budgets are what the write path is built to:
 * a change that adds a round trip to a write shows here first. docs/write-path.md explains each.
 */
const budgets: Record<string, Record<(typeof feedStrategies)[number], number>> = {
  follow: { 'fanout-on-read': 12, 'time-buckets': 13, 'sized-buckets': 13, cache: 13 },
  unfollow: { 'fanout-on-read': 11, 'time-buckets': 13, 'sized-buckets': 12, cache: 11 },
  post: { 'fanout-on-read': 3, 'time-buckets': 5, 'sized-buckets': 5, cache: 5 },
  like: { 'fanout-on-read': 7, 'time-buckets': 7, 'sized-buckets': 7, cache: 7 },
  delete: { 'fanout-on-read': 11, 'time-buckets': 12, 'sized-buckets': 12, cache: 12 },
};

const commandsOf = (commands: readonly CommandStartedEvent[]) =>
  commands.filter((command) => command.commandName !== 'getMore').map((command) => `${command.commandName} ${command.command[command.commandName]}`);

describe.each(feedStrategies)('commands per write: %s', (strategy) => {
  let app: TestApp;
  const tokens: Record<string, string> = {};
  const during = async (query: string, as: string) => {
    await heldAgain(as);
    let answer: any;
    const commands = await app.commandsDuring(async () => {
      answer = await app.gql(query, {}, tokens[as]);
    });
    expect(answer.errors).toBeUndefined();
    return { answer: answer.data, commands: commandsOf(commands) };
  };

  /**
   * Waits until the writer's account is held again and stays held: the announcements of earlier
   * writes come back through the change stream a moment later and make this process forget it.
   */
  const heldAgain = async (as: string) => {
    for (let quiet = 0; quiet < 2; ) {
      const commands = await app.commandsDuring(() => app.gql('{ viewer { handle } }', {}, tokens[as]));
      quiet = commandsOf(commands).length === 0 ? quiet + 1 : 0;
      await new Promise((resolve) => setTimeout(resolve, 30));
    }
  };

  beforeAll(async () => {
    app = await startTestApp({ FEED_STRATEGY: strategy, FANOUT_WORKERS: '0' });
    for (const handle of ['wrt_reader', 'wrt_author', 'wrt_other']) tokens[handle] = await app.signUp(handle);
    await app.gql('mutation { follow(handle: "wrt_other") { handle } }', {}, tokens.wrt_reader);
    await app.gql('{ timeline { edges { cursor } } }', {}, tokens.wrt_reader);
  });
  afterAll(() => app?.stop());

  it('stays within the budget of each write', async () => {
    const counts: Record<string, number> = {};
    counts.follow = (await during('mutation { follow(handle: "wrt_author") { followerCount } }', 'wrt_reader')).commands.length;
    const { answer, commands: post } = await during('mutation { createPost(text: "counted") { id } }', 'wrt_author');
    counts.post = post.length;
    counts.like = (await during(`mutation { likePost(id: "${answer.createPost.id}") { likeCount } }`, 'wrt_reader')).commands.length;
    counts.unfollow = (await during('mutation { unfollow(handle: "wrt_author") { followerCount } }', 'wrt_reader')).commands.length;
    counts.delete = (await during(`mutation { deletePost(id: "${answer.createPost.id}") }`, 'wrt_author')).commands.length;
    for (const [write, count] of Object.entries(counts)) expect({ write, count }).toEqual({ write, count: Math.min(count, budgets[write]![strategy]) });
  });
});

describe('what a reply waits on before it is stored', () => {
  let app: TestApp;
  afterAll(() => app?.stop());

  it('reads the post it answers beside the rate limit, not after it', async () => {
    app = await startTestApp({ FANOUT_WORKERS: '0' });
    const token = await app.signUp('wrt_replier');
    const parent = await app.gql('mutation { createPost(text: "asked") { id } }', {}, token);
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
