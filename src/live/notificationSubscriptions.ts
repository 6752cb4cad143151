import type { ChangeEvent, NotificationAddedEvent } from '../changes/events.js';
import { EventQueue } from './eventQueue.js';

export interface NotificationSubscriptionOptions {
  maxQueued: number;
  onOverflow(): void;
  onEnd(): void;
}

/**
 * Routes notification events to their recipient's open subscriptions on this instance, in the
 * order the bus delivers them; pushing never waits for a client.
 */
export class NotificationSubscriptions {
  private readonly byRecipient = new Map<string, Set<EventQueue<NotificationAddedEvent>>>();

  open(viewerId: string, options: NotificationSubscriptionOptions): EventQueue<NotificationAddedEvent> {
    const queue: EventQueue<NotificationAddedEvent> = new EventQueue<NotificationAddedEvent>(options.maxQueued, {
      onOverflow: () => options.onOverflow(),
      onEnd: () => {
        const queues = this.byRecipient.get(viewerId);
        if (queues?.delete(queue) && queues.size === 0) this.byRecipient.delete(viewerId);
        options.onEnd();
      },
    });
    const queues = this.byRecipient.get(viewerId);
    if (queues) queues.add(queue);
    else this.byRecipient.set(viewerId, new Set([queue]));
    return queue;
  }

  handle(event: ChangeEvent): void {
    if (event.kind !== 'notificationAdded') return;
    for (const queue of this.byRecipient.get(event.notification.recipientId) ?? []) queue.push(event);
  }

  endAll(): void {
    for (const queues of [...this.byRecipient.values()]) for (const queue of [...queues]) queue.end();
  }

  stats(): { subscriptions: number; queuedEvents: number } {
    let subscriptions = 0;
    let queuedEvents = 0;
    for (const queues of this.byRecipient.values()) {
      subscriptions += queues.size;
      for (const queue of queues) queuedEvents += queue.size;
    }
    return { subscriptions, queuedEvents };
  }
}
