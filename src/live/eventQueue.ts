/**
 * A bounded push queue read as an async iterator: the producer never waits for the consumer.
 * `push` beyond `limit` waiting items ends the queue and calls `onOverflow` instead of growing;
 * `return()` (the consumer is done) and `end()` (the producer is done) both call `onEnd` once.
 */
export class EventQueue<T> implements AsyncIterableIterator<T> {
  private items: T[] = [];
  private waiting: ((result: IteratorResult<T, undefined>) => void) | null = null;
  private ended = false;

  constructor(
    private readonly limit: number,
    private readonly hooks: { onOverflow(): void; onEnd(): void },
  ) {}

  get size(): number {
    return this.items.length;
  }

  get isEnded(): boolean {
    return this.ended;
  }

  /** False when the queue is ended, by now or by this push overflowing it. */
  push(item: T): boolean {
    if (this.ended) return false;
    if (this.waiting) {
      const resolve = this.waiting;
      this.waiting = null;
      resolve({ value: item, done: false });
      return true;
    }
    if (this.items.length >= this.limit) {
      this.end();
      this.hooks.onOverflow();
      return false;
    }
    this.items.push(item);
    return true;
  }

  /** Drops whatever is waiting and finishes the iterator. Idempotent. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.items = [];
    const resolve = this.waiting;
    this.waiting = null;
    resolve?.({ value: undefined, done: true });
    this.hooks.onEnd();
  }

  next(): Promise<IteratorResult<T, undefined>> {
    if (this.items.length > 0) return Promise.resolve({ value: this.items.shift()!, done: false });
    if (this.ended) return Promise.resolve({ value: undefined, done: true });
    if (this.waiting) return Promise.reject(new Error('EventQueue: next() called again before the previous call settled'));
    return new Promise((resolve) => {
      this.waiting = resolve;
    });
  }

  return(): Promise<IteratorResult<T, undefined>> {
    this.end();
    return Promise.resolve({ value: undefined, done: true });
  }

  throw(error?: unknown): Promise<IteratorResult<T, undefined>> {
    this.end();
    return Promise.reject(error);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}

/**
 * The events of `source` for which `keep` resolves true, in order. A failing check drops its event
 * rather than the subscription: the client catches up from the timeline query.
 */
export function keepOnly<T>(
  source: AsyncIterableIterator<T>,
  keep: (item: T) => Promise<boolean>,
  onCheckFailed: (error: unknown) => void,
): AsyncIterableIterator<T> {
  return {
    async next() {
      for (;;) {
        const result = await source.next();
        if (result.done) return result;
        const kept = await keep(result.value).catch((error: unknown) => {
          onCheckFailed(error);
          return false;
        });
        if (kept) return result;
      }
    },
    return: () => source.return!(),
    throw: (error?: unknown) => source.throw!(error),
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
