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
});
