import type { ChangeEvent, ChangeListener } from './events.js';

/** A listener set where one throwing listener never keeps an event from the others. */
export class Listeners {
  private readonly listeners = new Set<ChangeListener>();

  constructor(private readonly onListenerError: (error: unknown) => void) {}

  add(listener: ChangeListener): () => void {
    // A wrapper, so the same function may be added twice and removed once each.
    const entry: ChangeListener = (event) => listener(event);
    this.listeners.add(entry);
    return () => void this.listeners.delete(entry);
  }

  emit(event: ChangeEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (error) {
        this.onListenerError(error);
      }
    }
  }

  get size(): number {
    return this.listeners.size;
  }
}

/**
 * One listener kept while what feeds it runs: added before its source starts, so nothing the
 * source sends at once is missed, and taken away again if the start fails, or on stop.
 */
export class StartedListener {
  private unlisten: (() => void) | null = null;

  /** Does nothing while already started. */
  async start(listen: () => () => void, startSource: () => Promise<void>): Promise<void> {
    if (this.unlisten) return;
    this.unlisten = listen();
    try {
      await startSource();
    } catch (error) {
      this.stop();
      throw error;
    }
  }

  stop(): void {
    this.unlisten?.();
    this.unlisten = null;
  }
}
