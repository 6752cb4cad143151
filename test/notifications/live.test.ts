import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, liveClient, Subscription } from '../live/liveClient.js';
import { startTestApp, type TestApp } from '../support/testApp.js';
import { createPost, follow, like, notificationsOf } from './support.js';

interface LiveNotification {
  cursor: string;
  node: { id: string; kind: string; actorCount: number; actors: { handle: string }[]; post: { id: string } | null };
}

const query = 'subscription { notificationAdded { cursor node { id kind actorCount actors { handle } post { id } } } }';
const subscribe = (client: Client) => new Subscription<LiveNotification>(client, query, 'notificationAdded');
const shown = (results: LiveNotification[]) => results.map(({ node }) => `${node.kind} ${node.actorCount} [${node.actors.map((actor) => actor.handle).join(',')}]`);

describe('live notifications across two instances', () => {
  let a: TestApp;
  let b: TestApp;
  const tokens: Record<string, string> = {};
  const clients: Client[] = [];
  const fans = Array.from({ length: 6 }, (_, i) => `fan_${i}`);

  beforeAll(async () => {
    a = await startTestApp();
    b = await startTestApp({ MONGODB_URI: a.mongodbUri });
    for (const handle of ['idol', 'other', ...fans]) tokens[handle] = await a.signUp(handle);
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.dispose()));
    await b?.stop();
    await a?.stop();
  });

  it('reaches the recipient’s subscriptions on every instance, once, in order, and again as a group grows', async () => {
    const onA = liveClient(a, tokens.idol!);
    const onB = liveClient(b, tokens.idol!);
    const otherOnA = liveClient(a, tokens.other!);
    clients.push(onA, onB, otherOnA);
    const [idolA, idolB, other] = [subscribe(onA), subscribe(onB), subscribe(otherOnA)];
    await eventually(() => a.services.live.stats().subscriptions === 2 && b.services.live.stats().subscriptions === 1, 'subscriptions are open');

    const post = await createPost(a, tokens.idol!, 'watch this');
    await follow(b, tokens.fan_0!, 'idol');
    await idolA.waitFor(1);
    await like(b, tokens.fan_1!, post);
    await idolA.waitFor(2);
    await like(a, tokens.fan_2!, post);
    await idolA.waitFor(3);
    await createPost(b, tokens.fan_3!, 'replying', post);
    const expected = ['FOLLOW 1 [fan_0]', 'LIKE 1 [fan_1]', 'LIKE 2 [fan_2,fan_1]', 'REPLY 1 [fan_3]'];
    expect(shown(await idolA.waitFor(4))).toEqual(expected);
    expect(shown(await idolB.waitFor(4))).toEqual(expected);

    // The cursor is the one the page gives.
    const page = await notificationsOf(a, tokens.idol!);
    expect(idolB.results[3]!.cursor).toBe(page.items[0]!.cursor);
    expect(idolB.results[2]!.cursor).toBe(page.items[1]!.cursor);

    // Racing joins through both instances: the group's counts arrive in order, ending at the total.
    await Promise.all(fans.slice(3).map((handle, i) => like(i % 2 ? a : b, tokens[handle]!, post)));
    await eventually(() => idolA.results.at(-1)?.node.actorCount === 5 && idolB.results.at(-1)?.node.actorCount === 5, 'the group reached 5 live');
    for (const subscription of [idolA, idolB]) {
      const counts = subscription.results.slice(4).map((result) => result.node.actorCount);
      expect(counts).toEqual([...counts].sort((x, y) => x - y));
      expect(new Set(counts).size).toBe(counts.length);
    }
    // Nothing more comes, and no one else heard any of it: a later notification for each of them
    // travels behind anything sent before it, so once it is here it arrived alone.
    await a.settled();
    const [countA, countB] = [idolA.results.length, idolB.results.length];
    await follow(b, tokens.fan_5!, 'idol');
    await follow(a, tokens.fan_5!, 'other');
    await Promise.all([idolA.waitFor(countA + 1), idolB.waitFor(countB + 1), other.waitFor(1)]);
    expect(shown(idolA.results.slice(countA))).toEqual(['FOLLOW 2 [fan_5,fan_0]']);
    expect(shown(idolB.results.slice(countB))).toEqual(['FOLLOW 2 [fan_5,fan_0]']);
    expect(shown(other.results)).toEqual(['FOLLOW 1 [fan_5]']);
  });
});
