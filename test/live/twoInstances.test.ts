import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/testApp.js';
import { createPost, follow, liveClient, subscribePostAdded, subscribePostRemoved, subscriptionsOpen } from './liveClient.js';

describe('two server instances on one database', () => {
  let a: TestApp;
  let b: TestApp;
  const tokens: Record<string, string> = {};
  const clients: Client[] = [];

  beforeAll(async () => {
    a = await startTestApp();
    b = await startTestApp({ MONGODB_URI: a.mongodbUri });
    for (const handle of ['xena', 'yuri', 'zoe']) tokens[handle] = await a.signUp(handle);
    await follow(b, tokens.xena!, 'yuri');
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.dispose()));
    await b?.stop();
    await a?.stop();
  });

  // Nothing but the change stream carries an event between instances: whatever arrives was pushed
  // by it, so the waits below are generous (a loaded machine is slow, not wrong), and an event that
  // never comes fails them.
  const patience = 20_000;

  it('delivers posts, deletions and follows made through one instance to subscribers of the other', async () => {
    const onA = liveClient(a, tokens.xena!);
    const onB = liveClient(b, tokens.yuri!);
    clients.push(onA, onB);
    const xenaAdded = subscribePostAdded(onA);
    const xenaRemoved = subscribePostRemoved(onA);
    const yuriAdded = subscribePostAdded(onB);
    await subscriptionsOpen(a, 2);
    await subscriptionsOpen(b, 1);

    // Through B, seen on A.
    const fromB = await createPost(b, tokens.yuri!, 'posted through B');
    const [edge] = await xenaAdded.waitFor(1, patience);
    expect(edge!.node).toMatchObject({ id: fromB.id, text: 'posted through B', author: { handle: 'yuri' } });
    // The cursor, made from the event the other instance stored, is the one the timeline gives.
    const page = await a.gql('{ timeline(first: 1) { edges { cursor node { id } } } }', {}, tokens.xena);
    expect(page.data.timeline.edges).toEqual([{ cursor: edge!.cursor, node: { id: fromB.id } }]);

    // Through A, seen on B (yuri's own post).
    const fromA = await createPost(a, tokens.yuri!, 'posted through A');
    expect((await yuriAdded.waitFor(2, patience)).map((e) => e.node.id)).toEqual([fromB.id, fromA.id]);

    // A follow made through B changes what xena's subscription on A shows.
    await follow(b, tokens.xena!, 'zoe');
    const zoes = await createPost(b, tokens.zoe!, 'zoe, newly followed');
    expect((await xenaAdded.waitFor(3, patience)).map((e) => e.node.id)).toEqual([fromB.id, fromA.id, zoes.id]);

    // A delete through B reaches A.
    const deleted = await b.gql('mutation($id: ID!) { deletePost(id: $id) }', { id: fromB.id }, tokens.yuri);
    expect(deleted.data).toEqual({ deletePost: true });
    expect(await xenaRemoved.waitFor(1, patience)).toEqual([fromB.id]);
  });
});
