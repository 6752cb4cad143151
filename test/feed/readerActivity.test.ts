import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/testApp.js';

/**
 * What recording a reader's activity costs a page of a materialized timeline: one write for a
 * reader who is still active, on an instance that has not seen them read yet.
 */
describe.each(['cache', 'time-buckets'] as const)('reader activity: %s', (strategy) => {
  let first: TestApp;
  let second: TestApp;
  let token: string;
  const page = (app: TestApp) => app.gql('{ timeline { edges { node { text } } } }', {}, token);

  beforeAll(async () => {
    first = await startTestApp({ FEED_STRATEGY: strategy });
    token = await first.signUp('ra_reader');
    const author = await first.signUp('ra_author');
    await first.gql('mutation { follow(handle: "ra_author") { handle } }', {}, token);
    await page(first); // the reader is active from here on
    await first.gql('mutation { createPost(text: "seen by an active reader") { id } }', {}, author);
    await first.settled();
    second = await startTestApp({ FEED_STRATEGY: strategy, MONGODB_URI: first.mongodbUri });
  });
  afterAll(async () => {
    await second?.stop();
    await first?.stop();
  });

  it('marks an active reader’s read and learns of an open gap in one write', async () => {
    let answer: any;
    const commands = await second.commandsDuring(async () => {
      answer = await page(second);
    });
    expect(answer.data.timeline.edges.map((edge: any) => edge.node.text)).toEqual(['seen by an active reader']);
    const activity = commands.filter((command) => command.command[command.commandName] === 'users' && command.commandName !== 'find');
    expect(activity.map((command) => command.commandName)).toEqual(['findAndModify']);
    const readAt = (await second.database.db.collection<any>('users').findOne({ _id: 'ra_reader' }))!.readAt as Date;
    expect(Date.now() - readAt.getTime()).toBeLessThan(60_000);
  });
});
