import type { Client } from 'graphql-ws';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { feedStrategies } from '../../src/config.js';
import { startTestApp, type TestApp } from '../support/testApp.js';
import {
  createPost,
  follow,
  liveClient,
  subscribePostAdded,
  subscribePostRemoved,
  subscriptionsOpen,
  LiveClients,
  type PostEdge,
} from './liveClient.js';

const timelineQuery = `
  query Timeline($first: Int, $after: String, $last: Int, $before: String) {
    timeline(first: $first, after: $after, last: $last, before: $before) {
      edges { cursor node { id text createdAt author { handle } } }
    }
  }`;

async function timeline(app: TestApp, token: string, variables: Record<string, unknown>): Promise<PostEdge[]> {
  const result = await app.gql(timelineQuery, variables, token);
  expect(result.errors).toBeUndefined();
  return result.data.timeline.edges;
}

// Every FEED_STRATEGY, and the in-process event bus: live updates must not depend on either.
const variants: { name: string; environment: Record<string, string> }[] = [
  ...feedStrategies.map((strategy) => ({ name: `FEED_STRATEGY=${strategy}`, environment: { FEED_STRATEGY: strategy } })),
  { name: 'LIVE_EVENTS=local', environment: { LIVE_EVENTS: 'local' } },
];

describe.each(variants)('timelinePostAdded with $name', ({ environment }) => {
  let app: TestApp;
  let client: Client;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    app = await startTestApp(environment);
    for (const handle of ['alice', 'bob', 'carol']) tokens[handle] = await app.signUp(handle);
    await follow(app, tokens.alice!, 'bob');
    client = liveClient(app, tokens.alice!);
  });
  afterAll(async () => {
    await client?.dispose();
    await app?.stop();
  });

  it('pushes own and followed posts in order, with the cursors the timeline query gives them', async () => {
    // Posts from before the subscription; a probe sees them arrive, so they are not in flight when
    // the subscription under test opens (events still in flight then would reach it too).
    const probe = subscribePostAdded(client);
    await subscriptionsOpen(app, 1);
    const before = [await createPost(app, tokens.bob!, 'before 1'), await createPost(app, tokens.alice!, 'before 2')];
    await probe.waitFor(2);
    probe.stop();
    await subscriptionsOpen(app, 0);
    const live = subscribePostAdded(client);
    await subscriptionsOpen(app, 1);

    const expected: { id: string; text: string; author: string }[] = [];
    for (let i = 0; i < 9; i++) {
      const author = (['bob', 'carol', 'alice'] as const)[i % 3]!;
      const post = await createPost(app, tokens[author]!, `post ${i} by ${author}`);
      if (author !== 'carol') expected.push({ id: post.id, text: `post ${i} by ${author}`, author });
    }
    const sentinel = await createPost(app, tokens.bob!, 'sentinel');
    expected.push({ id: sentinel.id, text: 'sentinel', author: 'bob' });

    // The sentinel arrives last, so carol's posts, had they been sent, would be here by now.
    const received = await live.waitFor(expected.length);
    expect(received.map((edge) => ({ id: edge.node.id, text: edge.node.text, author: edge.node.author.handle }))).toEqual(expected);
    expect(live.errors).toEqual([]);

    // Once fanout has delivered them (live events go out as soon as a post is stored), the timeline
    // holds exactly the pushed edges, newest first, cursors included...
    await app.settled();
    const page = await timeline(app, tokens.alice!, { first: expected.length });
    expect(page).toEqual([...received].reverse());
    // ...so a client that prepended them pages on from the oldest one to what it had before...
    const older = await timeline(app, tokens.alice!, { first: 10, after: received[0]!.cursor });
    expect(older.map((edge) => edge.node.id)).toEqual([before[1]!.id, before[0]!.id]);
    // ...and refreshes from the newest one without gaps or repeats.
    expect(await timeline(app, tokens.alice!, { last: 10, before: received.at(-1)!.cursor })).toEqual([]);
    live.stop();
    await subscriptionsOpen(app, 0);
  });
});

describe('timeline subscriptions while the viewer follows, unfollows and authors delete', () => {
  let app: TestApp;
  const tokens: Record<string, string> = {};
  const clients = new LiveClients(() => app, tokens);
  const connect = (handle: string) => clients.connect(handle);

  beforeAll(async () => {
    app = await startTestApp();
    for (const handle of ['dave', 'erin', 'frank', 'gwen']) tokens[handle] = await app.signUp(handle);
  });
  afterEach(async () => {
    await clients.disposeAll();
    await subscriptionsOpen(app, 0);
  });
  afterAll(() => app?.stop());

  it('applies follow and unfollow to an open subscription without reconnecting', async () => {
    const live = subscribePostAdded(connect('dave'));
    await subscriptionsOpen(app, 1);

    await createPost(app, tokens.erin!, 'erin before the follow');
    await follow(app, tokens.dave!, 'erin');
    const followed = await createPost(app, tokens.erin!, 'erin while followed');
    await follow(app, tokens.dave!, 'erin', true);
    await createPost(app, tokens.erin!, 'erin after the unfollow');
    const sentinel = await createPost(app, tokens.dave!, 'dave sentinel');

    const received = await live.waitFor(2);
    expect(received.map((edge) => edge.node.id)).toEqual([followed.id, sentinel.id]);
    expect(live.results).toHaveLength(2);
  });

  it('pushes the id of a deleted timeline post, once it is gone, and nothing for other deletions', async () => {
    await follow(app, tokens.dave!, 'frank');
    const client = connect('dave');
    const added = subscribePostAdded(client);
    const removed = subscribePostRemoved(client);
    await subscriptionsOpen(app, 2);

    const franks = await createPost(app, tokens.frank!, 'frank will delete this');
    const strangers = await createPost(app, tokens.gwen!, 'gwen will delete this');
    const own = await createPost(app, tokens.dave!, 'dave will delete this');
    await added.waitFor(2);

    const postStillThere: Promise<unknown>[] = [];
    const deletePost = async (token: string, id: string) => {
      const result = await app.gql('mutation($id: ID!) { deletePost(id: $id) }', { id }, token);
      expect(result.data).toEqual({ deletePost: true });
    };
    await deletePost(tokens.frank!, franks.id);
    // Checked as soon as the event is here: the post must already be gone for everyone.
    await removed.waitFor(1);
    postStillThere.push(app.gql('query($id: ID!) { post(id: $id) { id } }', { id: franks.id }));
    await deletePost(tokens.gwen!, strangers.id);
    await deletePost(tokens.dave!, own.id);

    expect(await removed.waitFor(2)).toEqual([franks.id, own.id]);
    expect(removed.results).toHaveLength(2);
    expect((await Promise.all(postStillThere)).map((r: any) => r.data.post)).toEqual([null]);
    expect(added.results.map((edge) => edge.node.id)).toEqual([franks.id, own.id]);
  });

  it('resolves each event afresh: counts and viewer-specific fields are current for every subscriber', async () => {
    await follow(app, tokens.erin!, 'frank');
    const query = `subscription { timelinePostAdded { node { text author { handle followerCount viewerIsFollowing } } } }`;
    const daves = subscribePostAdded(connect('dave'), query);
    const erins = subscribePostAdded(connect('erin'), query);
    const franks = subscribePostAdded(connect('frank'), query);
    await subscriptionsOpen(app, 3);

    await createPost(app, tokens.frank!, 'first');
    // Fields resolve when the event is sent: let the first one reach everyone before the count changes.
    await Promise.all([daves.waitFor(1), erins.waitFor(1), franks.waitFor(1)]);
    await follow(app, tokens.gwen!, 'frank');
    await createPost(app, tokens.frank!, 'second');

    const authorOf = (edge: any) => edge.node.author;
    expect((await daves.waitFor(2)).map(authorOf)).toEqual([
      { handle: 'frank', followerCount: 2, viewerIsFollowing: true },
      { handle: 'frank', followerCount: 3, viewerIsFollowing: true },
    ]);
    expect((await erins.waitFor(2)).map(authorOf)).toEqual((await daves.waitFor(2)).map(authorOf));
    // Frank sees his own posts, and does not follow himself.
    expect((await franks.waitFor(2)).map(authorOf)).toEqual([
      { handle: 'frank', followerCount: 2, viewerIsFollowing: false },
      { handle: 'frank', followerCount: 3, viewerIsFollowing: false },
    ]);
  });
});
