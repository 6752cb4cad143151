import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startTestApp, type TestApp } from '../support/testApp.js';
import { eventually, follow, liveClient, subscribePostAdded, subscriptionsOpen, type CloseEventLike, type Subscription, type PostEdge } from './liveClient.js';
import { apiPostId } from '../support/ids.js';

const heavyQuery = `subscription {
  timelinePostAdded { cursor node { id text createdAt author { handle displayName createdAt followerCount followingCount } } }
}`;

describe('a client that stops reading', () => {
  let app: TestApp;
  const tokens: Record<string, string> = {};
  const clients: Client[] = [];
  const maxQueued = 20;
  const slowSubscriptions = 40;

  beforeAll(async () => {
    app = await startTestApp({
      LIVE_MAX_QUEUED_EVENTS: String(maxQueued),
      LIVE_MAX_SUBSCRIPTIONS_PER_CONNECTION: String(slowSubscriptions),
    });
    for (const handle of ['sam', 'sloth', 'fay']) tokens[handle] = await app.signUp(handle);
    await follow(app, tokens.sloth!, 'sam');
    await follow(app, tokens.fay!, 'sam');
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.dispose()));
    await app?.stop();
  });

  it('is closed with 4413 once too far behind, while others keep receiving every post, never more than a few behind', async () => {
    // The slow client's socket, to stop reading from it: the kernel buffers fill, then its queue.
    let slowSocket: WebSocket | undefined;
    class CapturedWebSocket extends WebSocket {
      constructor(...args: ConstructorParameters<typeof WebSocket>) {
        super(...args);
        slowSocket = this;
      }
    }
    const slow = liveClient(app, tokens.sloth!, { webSocketImpl: CapturedWebSocket });
    const fast = liveClient(app, tokens.fay!);
    clients.push(slow, fast);
    const slowOnes: Subscription<PostEdge>[] = [];
    for (let i = 0; i < slowSubscriptions; i++) slowOnes.push(subscribePostAdded(slow, heavyQuery));
    const fastOne = subscribePostAdded(fast, heavyQuery);
    await subscriptionsOpen(app, slowSubscriptions + 1);
    slowSocket!.pause();

    // Post until the server gives up on the slow client (each post is about 40 KB for it: the
    // kernel's buffers and the queue fill after about 140 posts here, and a few times that on a
    // machine with larger socket buffers). Counted in posts, not seconds, so a slow machine only
    // takes longer.
    const text = 'x'.repeat(500);
    const posted: string[] = [];
    while (app.services.live.stats().subscriptions > 1) {
      expect(posted.length, 'the slow client was never closed').toBeLessThan(2000);
      posted.push(apiPostId((await app.services.feed.post('sam', text)).id));
      // Paced by the reader that keeps up: each post waits until it is at most five behind, far
      // below the queue limit, while the stalled one only falls further behind. A server that made
      // it wait for the stalled one would never let it catch up, and this wait would fail.
      if (posted.length > 5) await fastOne.waitFor(posted.length - 5, 20_000);
    }
    for (let i = 0; i < 5; i++) posted.push(apiPostId((await app.services.feed.post('sam', text)).id));

    // The fast client got everything, in order.
    const received = await fastOne.waitFor(posted.length, 20_000);
    expect(received.map((edge) => edge.node.id)).toEqual(posted);
    expect(fastOne.errors).toEqual([]);

    // The slow client, once it reads again, finds the reason after what had been sent to it.
    slowSocket!.resume();
    const ends = (await Promise.all(slowOnes.map((subscription) => subscription.ended))) as CloseEventLike[];
    for (const end of ends) {
      expect(end).toMatchObject({ code: 4413, reason: 'Client is too slow; reconnect and refresh the timeline' });
    }
    expect(Math.max(...slowOnes.map((subscription) => subscription.results.length))).toBeLessThan(posted.length);
    await eventually(() => app.services.live.stats().connections === 1, 'only the fast client is connected');
    expect(app.services.live.stats()).toMatchObject({ subscriptions: 1, queuedEvents: 0 });
  });
});
