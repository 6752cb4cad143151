import type { CommandStartedEvent } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/testApp.js';
import { createPost } from './support.js';

const notificationCollections = ['notifications', 'notification_actors', 'notification_markers'];
const named = (command: CommandStartedEvent) => command.command[command.commandName] as string;
const taskInserts = (commands: CommandStartedEvent[]) =>
  commands.filter((command) => command.commandName === 'insert' && named(command) === 'fanout_tasks');

/**
 * What notifications add to a request: one queued task, written beside the action's own writes or
 * folded into a task the request queues anyway; the notification itself is the workers' job.
 */
describe.each(['fanout-on-read', 'time-buckets'])('the request path of an action that notifies, %s', (strategy) => {
  let app: TestApp;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    app = await startTestApp({ FEED_STRATEGY: strategy, FANOUT_WORKERS: '0' });
    for (const handle of ['poster', 'actor']) tokens[handle] = await app.signUp(handle);
  });
  afterAll(() => app?.stop());

  it('queues one task and touches no notification', async () => {
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
      const inserts = taskInserts(commands);
      expect(commands.filter((command) => notificationCollections.includes(named(command))), action).toEqual([]);
      // A repost also queues its own entry's delivery under a materialized strategy.
      const expected = action.includes('repost') && strategy !== 'fanout-on-read' ? 2 : 1;
      expect(inserts.length, action).toBe(expected);
      expect(inserts.flatMap((insert) => insert.command.documents.map((task: { kind: string }) => task.kind)).filter((kind: string) => kind.startsWith('notify'))).toHaveLength(1);
    }
  });

  it('folds a reply’s notification into the delivery task it queues anyway', async () => {
    const post = await createPost(app, tokens.poster!, 'reply to me');
    const commands = await app.commandsDuring(() =>
      app.gql('mutation($id: ID!) { createPost(text: "a reply to @poster", replyTo: $id) { id } }', { id: post }, tokens.actor),
    );
    const inserts = taskInserts(commands);
    expect(commands.filter((command) => notificationCollections.includes(named(command)))).toEqual([]);
    expect(inserts).toHaveLength(1);
    const kinds = inserts[0]!.command.documents.map((task: { kind: string }) => task.kind);
    expect(kinds).toEqual(strategy === 'fanout-on-read' ? ['notify-post'] : ['deliver', 'notify-post']);
  });
});
