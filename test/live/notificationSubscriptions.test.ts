import { describe, expect, it } from 'vitest';
import { notificationAdded, type NotificationAddedEvent } from '../../src/changes/events.js';
import { NotificationSubscriptions } from '../../src/live/notificationSubscriptions.js';

const event = (recipientId: string, id: string, version: number, actorCount: number): NotificationAddedEvent =>
  notificationAdded({ id, recipientId, kind: 'LIKE', updatedAt: new Date(), actorIds: [], actorCount, postId: null, version });

describe('routing notification events to subscriptions', () => {
  it('sends each state of a group once and in order, to its recipient only, dropping a state older than one sent', async () => {
    const subscriptions = new NotificationSubscriptions();
    const options = { maxQueued: 10, onOverflow: () => {}, onEnd: () => {} };
    const ann = subscriptions.open('ann', options);
    const bob = subscriptions.open('bob', options);
    for (const published of [event('ann', 'l:1', 3, 1), event('ann', 'l:1', 9, 3), event('ann', 'l:1', 6, 2), event('ann', 'l:2', 1, 1), event('ann', 'l:1', 9, 3)]) {
      subscriptions.handle(published);
    }
    const received: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { value } = await ann.next();
      received.push(`${value!.notification.id} ${value!.notification.actorCount}`);
    }
    expect(received).toEqual(['l:1 1', 'l:1 3', 'l:2 1']);
    expect(subscriptions.stats()).toEqual({ subscriptions: 2, queuedEvents: 0 });
    expect(bob.size).toBe(0);
    ann.end();
    expect(subscriptions.stats().subscriptions).toBe(1);
  });

  it('sends a state once when two workers announce it under two versions, and still drops older ones after', async () => {
    const subscriptions = new NotificationSubscriptions();
    const ann = subscriptions.open('ann', { maxQueued: 10, onOverflow: () => {}, onEnd: () => {} });
    // Both joiners rewrote the actors after both joined (versions 7 and 9 show the same); version 8 is older than 9.
    for (const published of [event('ann', 'l:1', 5, 4), event('ann', 'l:1', 7, 5), event('ann', 'l:1', 9, 5), event('ann', 'l:1', 8, 4)]) {
      subscriptions.handle(published);
    }
    expect(ann.size).toBe(2);
    const counts: number[] = [];
    for (let i = 0; i < 2; i++) counts.push((await ann.next()).value!.notification.actorCount);
    expect(counts).toEqual([4, 5]);
  });
});
