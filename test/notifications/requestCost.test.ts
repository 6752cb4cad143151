import type { CommandStartedEvent } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/testApp.js';
import { createPost } from './support.js';

const named = (command: CommandStartedEvent) => command.command[command.commandName] as string;
const onCollection = (commands: CommandStartedEvent[], collection: string) => commands.filter((command) => named(command) === collection);
const queuedKinds = (commands: CommandStartedEvent[]) =>
  onCollection(commands, 'fanout_tasks')
    .filter((command) => command.commandName === 'insert')
    .flatMap((insert) => insert.command.documents.map((task: { kind: string }) => task.kind));

/**
 * What notifications add to a request: a like, repost or follow changes its group in one write of
 * the group, in the request, and queues nothing; a reply's notification is folded into the
 * delivery task the post queues anyway.
 */
describe.each(['fanout-on-read', 'time-buckets'])('the request path of an action that notifies, %s', (strategy) => {
  let app: TestApp;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    app = await startTestApp({ FEED_STRATEGY: strategy, FANOUT_WORKERS: '0' });
    for (const handle of ['poster', 'actor']) tokens[handle] = await app.signUp(handle);
  });
  afterAll(() => app?.stop());

  it('writes the group once and queues no notification work', async () => {
    const post = await createPost(app, tokens.poster!, 'hello');
    const actions = [
      `mutation { likePost(id: "${post}") { likeCount } }`,
      `mutation { unlikePost(id: "${post}") { likeCount } }`,
      `mutation { repost(id: "${post}") { repostCount } }`,
      'mutation { follow(handle: "poster") { handle } }',
      'mutation { unfollow(handle: "poster") { handle } }',
    ];
    for (const action of actions) {
      const commands = await app.commandsDuring(() => app.gql(action, {}, tokens.actor));
      expect(onCollection(commands, 'notifications').map((command) => command.commandName), action).toEqual([/^mutation { un/.test(action) ? 'update' : 'findAndModify']);
      expect(onCollection(commands, 'notification_markers'), action).toEqual([]);
      // A repost queues its own entry's delivery under a materialized strategy, and nothing else does.
      expect(queuedKinds(commands), action).toEqual(action.includes('repost') && strategy !== 'fanout-on-read' ? ['deliver'] : []);
    }
  });

  it('folds a reply’s notification into the delivery task it queues anyway', async () => {
    const post = await createPost(app, tokens.poster!, 'reply to me');
    const commands = await app.commandsDuring(() =>
      app.gql('mutation($id: ID!) { createPost(text: "a reply to @poster", replyTo: $id) { id } }', { id: post }, tokens.actor),
    );
    expect(onCollection(commands, 'notifications')).toEqual([]);
    const inserts = onCollection(commands, 'fanout_tasks').filter((command) => command.commandName === 'insert');
    expect(inserts).toHaveLength(1);
    expect(queuedKinds(commands)).toEqual(strategy === 'fanout-on-read' ? ['notify-post'] : ['deliver', 'notify-post']);
  });
});
