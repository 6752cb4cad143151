import type { ObjectId } from 'mongodb';
import type { LiveEventMode } from '../config.js';
import type { PostRecord } from '../records/posts.js';
import type { Logger } from '../logger.js';

/**
 * What live subscribers need to hear about, each published only after the change is stored.
 * `followed`/`unfollowed` change which authors a viewer's open subscriptions show; the post
 * events are what those subscriptions deliver. Delete events carry the author, so a subscriber can
 * tell whether the deleted post was in its timeline without reading anything.
 */
export type LiveEvent =
  | { kind: 'postAdded'; post: PostRecord }
  | { kind: 'postRemoved'; postId: ObjectId; authorId: string; originalAuthorId: string | null }
  | { kind: 'followed'; followerId: string; followeeId: string }
  | { kind: 'unfollowed'; followerId: string; followeeId: string }
  | ({ kind: 'changed' } & StoredChange);

/**
 * Records that changed outside follows and posts, for every instance's in-process tier to forget:
 * users (deleted, now pulling), readers' filters (mutes, blocks, keywords; `allFilters` when a
 * deleted account left many lists), and the cache strategy's timelines (every write to one).
 */
export interface StoredChange {
  users: string[];
  filters: string[];
  allFilters: boolean;
  timelines: string[];
}

/** A change with nothing left out: what is not named did not change. */
export function fullChange(change: { [K in keyof StoredChange]?: Readonly<StoredChange[K]> }): StoredChange {
  return {
    users: [...(change.users ?? [])],
    filters: [...(change.filters ?? [])],
    allFilters: change.allFilters ?? false,
    timelines: [...(change.timelines ?? [])],
  };
}

export type PostAddedEvent = Extract<LiveEvent, { kind: 'postAdded' }>;
export type PostRemovedEvent = Extract<LiveEvent, { kind: 'postRemoved' }>;

export type LiveEventListener = (event: LiveEvent) => void;

/**
 * Carries events from whichever instance stored a change to every instance's listeners, in the
 * order the changes were published.
 */
export interface LiveEventSource {
  readonly mode: LiveEventMode;
  ensureIndexes(): Promise<void>;
  /** Starts delivering published events to listeners; fails when the transport is unavailable. */
  start(logger: Logger): Promise<void>;
  /** Stops delivering; no listener is called once this resolves. */
  stop(): Promise<void>;
  publish(event: LiveEvent): Promise<void>;
  /** Returns the function that removes the listener. */
  listen(listener: LiveEventListener): () => void;
  listenerCount(): number;
}

/** A listener set where one throwing listener never keeps an event from the others. */
export class Listeners {
  private readonly listeners = new Set<LiveEventListener>();

  constructor(private readonly onListenerError: (error: unknown) => void) {}

  add(listener: LiveEventListener): () => void {
    // A wrapper, so the same function may be added twice and removed once each.
    const entry: LiveEventListener = (event) => listener(event);
    this.listeners.add(entry);
    return () => void this.listeners.delete(entry);
  }

  emit(event: LiveEvent): void {
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
 * In-process delivery: for a single server instance on a MongoDB without a replica set
 * (`LIVE_EVENTS=local`). Events never reach other processes.
 */
export class LocalEventSource implements LiveEventSource {
  readonly mode = 'local' as const;
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

  async publish(event: LiveEvent): Promise<void> {
    if (this.running) this.listeners.emit(event);
  }

  listen(listener: LiveEventListener): () => void {
    return this.listeners.add(listener);
  }

  listenerCount(): number {
    return this.listeners.size;
  }
}
