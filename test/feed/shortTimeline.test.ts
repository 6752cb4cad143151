import type { CommandStartedEvent } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/testApp.js';

const held = ['users', 'following', 'reader_filters'];
/** The page's own commands: the fanout workers' queue polls and the live path's getMores are not. */
const pageCommands = (commands: CommandStartedEvent[]) =>
  commands.filter((command) => {
    const collection = command.commandName === 'getMore' ? command.command.collection : command.command[command.commandName];
    return collection !== 'fanout_tasks' && collection !== 'live_events';
  });

/**
 * The cache strategy for a reader whose whole timeline is shorter than a page: once a read has
 * found nothing below the cache, later pages are one round trip, and what changes the timeline
 * below the cache (a follow, a capped push that trims, deletions that shrink it) is still read.
 */
describe('the cache strategy with a timeline shorter than a page', () => {
  let app: TestApp;
  let reader: string;
  let early: string;
  let writer: string;

  const texts = async () => {
    const page = await app.gql('{ timeline(first: 10) { edges { node { text } } pageInfo { hasNextPage } } }', {}, reader);
    expect(page.data.timeline.pageInfo.hasNextPage).toBe(false);
    return page.data.timeline.edges.map((edge: any) => edge.node.text);
  };
  const post = async (token: string, text: string) => {
    const created = await app.gql(`mutation { createPost(text: "${text}") { id } }`, {}, token);
    await app.settled();
    return created.data.createPost.id as string;
  };

  beforeAll(async () => {
    app = await startTestApp({ FEED_STRATEGY: 'cache', TIMELINE_CACHE_SIZE: '4' });
    reader = await app.signUp('reader');
    early = await app.signUp('early');
    writer = await app.signUp('writer');
    await post(early, 'early 1');
    await post(early, 'early 2');
    for (const text of ['w1', 'w2', 'w3']) await post(writer, text);
    await app.gql('mutation { follow(handle: "writer") { handle } }', {}, reader);
  });
  afterAll(() => app?.stop());

  it('reads a warm page in one round trip, the cache alone', async () => {
    expect(await texts()).toEqual(['w3', 'w2', 'w1']); // builds the cache
    expect(await texts()).toEqual(['w3', 'w2', 'w1']);
    const commands = pageCommands(
      await app.warmCommandsDuring(() => app.gql('{ timeline(first: 10) { edges { node { text author { handle } } } } }', {}, reader), held),
    );
    expect(commands.map((command) => `${command.commandName} ${command.command[command.commandName]}`)).toEqual(['find timeline_cache']);
  });

  it('shows the older posts of an account followed later', async () => {
    await app.gql('mutation { follow(handle: "early") { handle } }', {}, reader);
    expect(await texts()).toEqual(['w3', 'w2', 'w1', 'early 2', 'early 1']);
    await app.gql('mutation { unfollow(handle: "early") { handle } }', {}, reader);
    expect(await texts()).toEqual(['w3', 'w2', 'w1']);
  });

  it('shows posts a full cache dropped once deletions have shrunk it', async () => {
    const newer = [];
    for (const text of ['w4', 'w5', 'w6']) newer.push(await post(writer, text));
    // The cache holds 4: w6..w3; w2 and w1 were trimmed from it and are read below it.
    expect(await texts()).toEqual(['w6', 'w5', 'w4', 'w3', 'w2', 'w1']);
    for (const id of newer) await app.gql(`mutation { deletePost(id: "${id}") }`, {}, writer);
    await app.settled();
    expect(await texts()).toEqual(['w3', 'w2', 'w1']);
    expect(await texts()).toEqual(['w3', 'w2', 'w1']);
  });
});
