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
