import type { ChangeEvent, NotificationAddedEvent } from '../changes/events.js';
import { EventQueue } from './eventQueue.js';

export interface NotificationSubscriptionOptions {
  maxQueued: number;
  onOverflow(): void;
  onEnd(): void;
}

/** Groups whose last version sent is remembered per subscription. */
const rememberedGroups = 1000;

/** What a subscriber saw of a group: its version, and what it showed (count and newest actors). */
interface SentState {
  version: number;
  shown: string;
}

const shownOf = ({ actorCount, actorIds }: NotificationAddedEvent['notification']) => `${actorCount} ${actorIds.join(',')}`;

/** One subscription's queue, and the state of each group it last sent. */
class Subscriber {
  private readonly sent = new Map<string, SentState>();

  constructor(readonly queue: EventQueue<NotificationAddedEvent>) {}

  /**
   * Two workers that grow one group at once may announce its states out of order: an older state
   * than one already sent is dropped, so a group's actorCount arrives in order. Both may also
   * announce the same state (each rewrites the actors after both joined): a newer version showing
   * what was already sent is dropped too, so each state arrives once.
   */
  push(event: NotificationAddedEvent): void {
    const { id, version } = event.notification;
    const shown = shownOf(event.notification);
    const last = this.sent.get(id);
    if (last !== undefined && last.version >= version) return;
    if (last !== undefined && last.shown === shown) {
      // Older states than this one must still be dropped.
      last.version = version;
      return;
    }
    this.sent.delete(id);
    this.sent.set(id, { version, shown });
    if (this.sent.size > rememberedGroups) this.sent.delete(this.sent.keys().next().value!);
    this.queue.push(event);
  }
}

/**
 * Routes notification events to their recipient's open subscriptions on this instance, in the
 * order the bus delivers them; pushing never waits for a client.
 */
export class NotificationSubscriptions {
  private readonly byRecipient = new Map<string, Set<Subscriber>>();

  open(viewerId: string, options: NotificationSubscriptionOptions): EventQueue<NotificationAddedEvent> {
    const queue: EventQueue<NotificationAddedEvent> = new EventQueue<NotificationAddedEvent>(options.maxQueued, {
      onOverflow: () => options.onOverflow(),
      onEnd: () => {
        const subscribers = this.byRecipient.get(viewerId);
        if (subscribers?.delete(subscriber) && subscribers.size === 0) this.byRecipient.delete(viewerId);
        options.onEnd();
      },
    });
    const subscriber = new Subscriber(queue);
    const subscribers = this.byRecipient.get(viewerId);
    if (subscribers) subscribers.add(subscriber);
    else this.byRecipient.set(viewerId, new Set([subscriber]));
    return queue;
  }

  handle(event: ChangeEvent): void {
    if (event.kind !== 'notificationAdded') return;
    for (const subscriber of this.byRecipient.get(event.notification.recipientId) ?? []) subscriber.push(event);
  }

  endAll(): void {
    for (const subscribers of [...this.byRecipient.values()]) for (const subscriber of [...subscribers]) subscriber.queue.end();
  }

  stats(): { subscriptions: number; queuedEvents: number } {
    let subscriptions = 0;
    let queuedEvents = 0;
    for (const subscribers of this.byRecipient.values()) {
      subscriptions += subscribers.size;
      for (const subscriber of subscribers) queuedEvents += subscriber.queue.size;
    }
    return { subscriptions, queuedEvents };
  }
}
