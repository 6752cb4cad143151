import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { follow, LiveClients, Subscription, subscriptionsOpen } from './liveClient.js';
import { startTestApp, type TestApp } from '../support/testApp.js';

const editedQuery = 'subscription { timelinePostEdited { id text editedAt } }';

interface Edited {
  id: string;
  text: string;
  editedAt: string | null;
}

/** Two instances on one database: an edit made on one reaches the subscribers of the other. */
describe.each(['fanout-on-read', 'cache'])('timelinePostEdited across two instances: %s', (strategy) => {
  let a: TestApp;
  let b: TestApp;
  const tokens: Record<string, string> = {};
  const clients = new LiveClients(() => b, tokens);

  beforeAll(async () => {
    a = await startTestApp({ FEED_STRATEGY: strategy });
    b = await startTestApp({ FEED_STRATEGY: strategy, MONGODB_URI: a.mongodbUri });
    for (const handle of ['ada', 'bea', 'cal', 'dan', 'eve']) tokens[handle] = await a.signUp(handle);
    await follow(a, tokens.bea!, 'ada');
    await follow(a, tokens.cal!, 'bea');
    await follow(a, tokens.eve!, 'ada');
    await a.gql('mutation { mute(handle: "ada") { handle } }', {}, tokens.eve);
  });
  afterAll(async () => {
    await clients.disposeAll();
    await b?.stop();
    await a?.stop();
  });

  it('tells each subscriber whose timeline shows the post once, with the new text; nobody else', async () => {
    const post = (await a.gql('mutation { createPost(text: "first take") { id } }', {}, tokens.ada)).data.createPost.id;
    await a.settled();
    await a.gql('mutation($id: ID!) { repost(id: $id) { id } }', { id: post }, tokens.bea);
    const limited = (await a.gql('mutation { createPost(text: "hi @dan", visibility: MENTIONED) { id } }', {}, tokens.ada)).data.createPost.id;
    await a.settled();

    const subscribe = (handle: string) => new Subscription<Edited>(clients.connect(handle), editedQuery, 'timelinePostEdited');
    const subscriptions = Object.fromEntries(['ada', 'bea', 'cal', 'dan', 'eve'].map((handle) => [handle, subscribe(handle)]));
    await subscriptionsOpen(b, 5);

    await a.gql('mutation($id: ID!) { editPost(id: $id, text: "second take") { id } }', { id: post }, tokens.ada);
    await a.gql('mutation($id: ID!) { editPost(id: $id, text: "hi again @dan") { id } }', { id: limited }, tokens.ada);
    // ada (author), bea (follower), cal (follows the reposter) hear of the public edit; dan of the one addressed to him.
    for (const handle of ['ada', 'bea', 'cal']) {
      const [first] = await subscriptions[handle]!.waitFor(1);
      expect(first).toMatchObject({ id: post, text: 'second take' });
      expect(first!.editedAt).not.toBeNull();
    }
    const [addressed] = await subscriptions.dan!.waitFor(1);
    expect(addressed).toMatchObject({ id: limited, text: 'hi again @dan' });
    // ada also hears of her limited post; the others nothing more (eve muted ada), and nobody twice.
    await subscriptions.ada!.waitFor(2);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(Object.fromEntries(Object.entries(subscriptions).map(([handle, subscription]) => [handle, subscription.results.map((edit) => edit.id)]))).toEqual({
      ada: [post, limited],
      bea: [post],
      cal: [post],
      dan: [limited],
      eve: [],
    });
  });
});
