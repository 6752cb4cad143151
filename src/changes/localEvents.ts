import type { Logger } from '../logger.js';
import type { ChangeEvent, ChangeListener, ChangeSource } from './events.js';
import { Listeners } from './listeners.js';

/**
 * In-process delivery: for a single server instance on a MongoDB without a replica set
 * (`LIVE_EVENTS=local`). Events never reach other processes.
 */
export class LocalEventSource implements ChangeSource {
  readonly mode = 'local' as const;
  readonly restarts = 0;
  private logger: Logger | null = null;
  private running = false;
  private readonly listeners = new Listeners((error) => this.logger?.error('live events: a listener failed', error));

  async ensureIndexes(): Promise<void> {}

  async start(logger: Logger): Promise<void> {
    this.logger = logger;
    this.running = true;
  }

  async stop(): Promise<void> {
    this.running = false;
  }

  async publish(events: readonly ChangeEvent[]): Promise<void> {
    if (this.running) for (const event of events) this.listeners.emit(event);
  }

  /** Nothing travels in a write: the events are heard in process once it is made. */
  carry(events: readonly ChangeEvent[]): { carried: undefined; rest: readonly ChangeEvent[] } {
    return { carried: undefined, rest: events };
  }

  listen(listener: ChangeListener): () => void {
    return this.listeners.add(listener);
  }

  flowing(): boolean {
    return this.running;
  }

  listenerCount(): number {
    return this.listeners.size;
  }
}
