/**
 * changes/ owns the change bus: the events that say what was stored (posts added and removed,
 * follows, other records changed), how they travel between instances (in process, or through a
 * MongoDB change stream), and what each one makes stale in this process (staleness.ts). Feed,
 * graph and content publish to it; the live core and the in-process caches listen. It knows none
 * of them.
 */
import type { Db } from 'mongodb';
import type { LiveOptions } from '../config.js';
import { quietLogger, type Logger } from '../logger.js';
import { ChangeStreamEventSource } from './changeStreamEvents.js';
import type { CarriedEvents, ChangeEvent, ChangeListener, ChangePublisher, ChangeSource } from './events.js';
import { Listeners, StartedListener } from './listeners.js';
import { LocalEventSource } from './localEvents.js';
import type { LiveGroup } from './partitions.js';

/** `group`: the share of the events this instance reads (one process with local events reads them all). */
export function createChangeSource(db: Db, options: LiveOptions, group: LiveGroup): ChangeSource {
  return options.events === 'local' ? new LocalEventSource() : new ChangeStreamEventSource(db, options.eventTtlSeconds, group);
}

/**
 * One per process. Publishing goes to the source (and so to every instance, this one included);
 * while started, the bus is the source's one listener and hands each event to its own listeners in
 * the order they were added, one failing listener never keeping an event from the others.
 */
export class ChangeBus implements ChangePublisher {
  private logger: Logger = quietLogger;
  private readonly listeners = new Listeners((error) => this.logger.error('live events: a listener failed', error));
  private readonly listening = new StartedListener();

  constructor(private readonly source: ChangeSource) {}

  ensureIndexes(): Promise<void> {
    return this.source.ensureIndexes();
  }

  /** Starts delivering events to the listeners; fails when the transport is unavailable. */
  async start(logger: Logger): Promise<void> {
    this.logger = logger;
    await this.listening.start(() => this.source.listen((event) => this.listeners.emit(event)), () => this.source.start(logger));
  }

  /** No listener is called once this resolves. */
  async stop(): Promise<void> {
    this.listening.stop();
    await this.source.stop();
  }

  /** Returns the function that removes the listener. Listeners hear events only while the bus runs. */
  listen(listener: ChangeListener): () => void {
    return this.listeners.add(listener);
  }

  /**
   * The change itself is already stored: a lost event must not fail the user's request (a retried
   * createPost would post twice). Open subscriptions miss it, and clients catch up from the
   * timeline query; in-process caches of other instances fall back on their time limit.
   */
  async publish(event: ChangeEvent | readonly ChangeEvent[]): Promise<void> {
    const events: readonly ChangeEvent[] = Array.isArray(event) ? event : [event];
    if (events.length === 0) return;
    try {
      await this.source.publish(events);
    } catch (error) {
      this.logger.error(`live events: could not publish ${events.map((each) => `a ${each.kind}`).join(' and ')} event; open subscriptions miss it`, error);
    }
  }

  async publishWithin(events: readonly ChangeEvent[], write: (carried: CarriedEvents | undefined) => Promise<void>): Promise<void> {
    const { carried, rest } = this.source.carry(events);
    await write(carried);
    await this.publish(rest);
  }

  /** Listeners on the source: one while the bus runs, whatever the number of its own listeners. */
  sourceListenerCount(): number {
    return this.source.listenerCount();
  }

  /** Whether events published now reach the listeners (the change stream runs, or events stay in process). */
  flowing(): boolean {
    return this.source.flowing();
  }

  /** Times the source's transport was reopened after an error. */
  get restarts(): number {
    return this.source.restarts;
  }
}
