import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../support/testApp.js';

/** What an unfollow does to the follower's time buckets: the author's entries go, and so do the buckets they leave empty. */
describe('time buckets: unfollow', () => {
  let app: TestApp;
  const tokens: Record<string, string> = {};
  const timeline = async () => (await app.gql('{ timeline { edges { node { text author { handle } } } } }', {}, tokens.tb_reader)).data.timeline.edges.map((edge: any) => `${edge.node.author.handle}: ${edge.node.text}`);
  const emptyBuckets = () => app.database.db.collection('timed_buckets').countDocuments({ '_id._u': 'tb_reader', _c: { $size: 0 } });

  beforeAll(async () => {
    app = await startTestApp({ FEED_STRATEGY: 'time-buckets' });
    for (const handle of ['tb_reader', 'tb_quiet', 'tb_loud']) tokens[handle] = await app.signUp(handle);
    for (const followee of ['tb_quiet', 'tb_loud']) await app.gql(`mutation { follow(handle: "${followee}") { handle } }`, {}, tokens.tb_reader);
    await app.gql('mutation { createPost(text: "only post") { id } }', {}, tokens.tb_loud);
    await app.settled();
  });
  afterAll(() => app?.stop());

  it('leaves the buckets alone when the unfollowed account has nothing in them', async () => {
    const commands = await app.commandsDuring(() => app.gql('mutation { unfollow(handle: "tb_quiet") { handle } }', {}, tokens.tb_reader));
    const bucketCommands = commands.filter((command) => command.command[command.commandName] === 'timed_buckets').map((command) => command.commandName);
    // One look for the account's entries, which finds none: no bucket was emptied, so none is deleted.
    expect(bucketCommands).toEqual(['update']);
    expect(await timeline()).toEqual(['tb_loud: only post']);
  });

  it('takes the account out and deletes the buckets it leaves empty', async () => {
    await app.gql('mutation { unfollow(handle: "tb_loud") { handle } }', {}, tokens.tb_reader);
    expect(await timeline()).toEqual([]);
    expect(await emptyBuckets()).toBe(0);
  });
});
