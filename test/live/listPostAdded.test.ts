import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/testApp.js';
import { createPost, eventually, LiveClients, Subscription, subscriptionsOpen, type PostEdge } from './liveClient.js';

const listPostAddedQuery = `
  subscription($id: ID!) {
    listPostAdded(id: $id) { cursor repostedBy { handle } node { id text author { handle } } }
  }`;

describe('listPostAdded across two instances', () => {
  let a: TestApp;
  let b: TestApp;
  let listId: string;
  const tokens: Record<string, string> = {};
  const clients = new LiveClients(() => a, tokens);
  const ok = async (app: TestApp, handle: string, query: string, variables: Record<string, unknown> = {}) => {
    const result = await app.gql(query, variables, tokens[handle]);
    if (result.errors) throw new Error(JSON.stringify(result.errors));
    return result.data;
  };
  const subscribe = (handle: string, id: string) => new Subscription<PostEdge>(clients.connect(handle), listPostAddedQuery, 'listPostAdded', { id });

  beforeAll(async () => {
    a = await startTestApp();
    b = await startTestApp({ MONGODB_URI: a.mongodbUri });
    for (const handle of ['owner', 'ann', 'ben', 'dan', 'nosy']) tokens[handle] = await a.signUp(handle);
    for (const other of ['ann', 'ben', 'dan']) await ok(a, 'owner', 'mutation($h: String!) { follow(handle: $h) { handle } }', { h: other });
    listId = (await ok(a, 'owner', 'mutation { createList(name: "live") { id } }')).createList.id;
    await ok(a, 'owner', 'mutation($id: ID!) { addToList(id: $id, handle: "ann") { id } }', { id: listId });
    await ok(a, 'owner', 'mutation { addKeywordFilter(phrase: "hidden") { id } }');
  });
  afterAll(async () => {
    await clients.disposeAll();
    await b?.stop();
    await a?.stop();
  });

  it('delivers the members’ posts made through the other instance, with the list timeline’s cursors and rules', async () => {
    const live = subscribe('owner', listId);
    await subscriptionsOpen(a, 1);

    await createPost(b, tokens.dan!, 'dan is followed but no member');
    await createPost(b, tokens.owner!, 'the owner is no member');
    await createPost(b, tokens.ann!, 'ann says hidden things');
    const first = await createPost(b, tokens.ann!, 'ann, a member');
    const [edge] = await live.waitFor(1);
    expect(edge!.node).toMatchObject({ id: first.id, text: 'ann, a member', author: { handle: 'ann' } });
    const page = await a.gql('query($id: ID!) { list(id: $id) { timeline(first: 1) { edges { cursor node { id } } } } }', { id: listId }, tokens.owner);
    expect(page.data.list.timeline.edges).toEqual([{ cursor: edge!.cursor, node: { id: first.id } }]);

    // A member added through B is delivered on A from then on; one removed is not.
    await ok(b, 'owner', 'mutation($id: ID!) { addToList(id: $id, handle: "ben") { id } }', { id: listId });
    await ok(b, 'owner', 'mutation($id: ID!) { removeFromList(id: $id, handle: "ann") { id } }', { id: listId });
    await createPost(b, tokens.ann!, 'ann, no longer a member');
    const bens = await createPost(b, tokens.ben!, 'ben, a new member');
    // A repost by a member of a non-member's post comes as the repost.
    const dans = await createPost(b, tokens.dan!, 'dan again');
    await ok(b, 'ben', 'mutation($id: ID!) { repost(id: $id) { id } }', { id: dans.id });
    const edges = await live.waitFor(3);
    expect(edges.map((e) => [e.node.text, e.repostedBy?.handle ?? null])).toEqual([
      ['ann, a member', null],
      ['ben, a new member', null],
      ['dan again', 'ben'],
    ]);
    expect(edges[1]!.node.id).toBe(bens.id);

    // Unfollowing through B removes ben from the list, and his posts stop.
    await ok(b, 'owner', 'mutation { unfollow(handle: "ben") { handle } }');
    await createPost(b, tokens.ben!, 'ben, unfollowed');
    await ok(b, 'owner', 'mutation($id: ID!) { addToList(id: $id, handle: "ann") { id } }', { id: listId });
    await createPost(b, tokens.ann!, 'ann, back again');
    expect((await live.waitFor(4)).map((e) => e.node.text).at(-1)).toBe('ann, back again');
    expect(live.results).toHaveLength(4);

    // A deleted list delivers nothing more.
    await ok(b, 'owner', 'mutation($id: ID!) { deleteList(id: $id) }', { id: listId });
    await createPost(b, tokens.ann!, 'after the list is gone');
    const home = new Subscription<PostEdge>(clients.connect('owner'), 'subscription { timelinePostAdded { node { text } } }', 'timelinePostAdded');
    await subscriptionsOpen(a, 2);
    await createPost(b, tokens.ann!, 'seen at home');
    await home.waitFor(1);
    expect(live.results).toHaveLength(4);
  });

  it('refuses a list that is not the viewer’s', async () => {
    const own = (await ok(a, 'owner', 'mutation { createList(name: "private") { id } }')).createList.id;
    const nosy = subscribe('nosy', own);
    await nosy.ended;
    expect(nosy.errors.map((error: any) => error.extensions?.code ?? error[0]?.extensions?.code)).toEqual(['NOT_FOUND']);
    const unknown = subscribe('owner', 'not-a-list');
    await unknown.ended;
    expect(unknown.errors).toHaveLength(1);
    await eventually(() => a.services.live.stats().subscriptions <= 2, 'refused subscriptions are closed');
  });
});
