import type { Db } from 'mongodb';
import type { LiveOptions } from '../config.js';
import type { PostRecord } from '../records/posts.js';
import type { FeedObserver } from '../feed/feedBackend.js';
import type { UserGraphService } from '../graph/userGraphService.js';
import { quietLogger, type Logger } from '../logger.js';
import { ChangeStreamEventSource } from './changeStreamEvents.js';
import { keepOnly } from './eventQueue.js';
import { closeReasons, LiveCloseCode, LiveConnections, type LiveClient } from './liveConnections.js';
import { LocalEventSource, type LiveEvent, type LiveEventSource, type PostRemovedEvent, type StoredChange } from './liveEvents.js';
import { TimelineSubscriptions, type TimelineEvent, type TimelineEventKind } from './timelineSubscriptions.js';

export interface LiveStats {
  /** Authenticated graphql-ws connections on this instance. */
  connections: number;
  /** WebSockets this instance holds, authenticated or not. */
  webSockets: number;
  /** Open timeline subscriptions on this instance. */
  subscriptions: number;
  /** Events waiting in subscription queues. */
  queuedEvents: number;
  /** Listeners on the event source: one while the service runs, whatever the number of subscribers. */
  sourceListeners: number;
  /** Times the change stream was reopened after an error. */
  sourceRestarts: number;
}

/** Per-viewer rules a live event must pass, the same as the timeline's (mutes, blocks, filters, reposts). */
export interface LiveVisibility {
  added(viewerId: string, post: PostRecord): Promise<boolean>;
  removed(viewerId: string, removal: PostRemovedEvent): Promise<boolean>;
}

export function createLiveEventSource(db: Db, options: LiveOptions): LiveEventSource {
  return options.events === 'local' ? new LocalEventSource() : new ChangeStreamEventSource(db, options.eventTtlSeconds);
}

/**
 * Live timeline updates. As a FeedObserver it publishes each stored change to the event source;
 * from the source it routes every event to this instance's open subscriptions. Publishing and
 * routing are the same code whether one instance runs or many.
 */
export class LiveService implements FeedObserver {
  readonly connections: LiveConnections;
  private readonly timelines: TimelineSubscriptions;
  private logger: Logger = quietLogger;
  private unlisten: (() => void) | null = null;
  private countWebSockets: () => number = () => 0;
  private visibility: LiveVisibility = { added: async () => true, removed: async () => true };
  private forget: Parameters<LiveService['invalidateWith']>[0] = () => {};

  constructor(
    private readonly source: LiveEventSource,
    graph: UserGraphService,
    private readonly options: LiveOptions,
  ) {
    this.connections = new LiveConnections(options.maxConnectionsPerUser);
    this.timelines = new TimelineSubscriptions((viewerId) => graph.followingIds(viewerId));
  }

  ensureIndexes(): Promise<void> {
    return this.source.ensureIndexes();
  }

  async start(logger: Logger): Promise<void> {
    if (this.unlisten) return;
    this.logger = logger;
    this.unlisten = this.source.listen((event) => {
      this.forget(event);
      this.timelines.handle(event);
    });
    try {
      await this.source.start(logger);
    } catch (error) {
      this.unlisten();
      this.unlisten = null;
      throw error;
    }
  }

  async stop(): Promise<void> {
    this.unlisten?.();
    this.unlisten = null;
    await this.source.stop();
    this.timelines.endAll();
  }

  /** Set once by the feed, which owns the rules. */
  showOnly(visibility: LiveVisibility): void {
    this.visibility = visibility;
  }

  /** Lets `stats()` report the transport's open sockets. */
  countWebSocketsWith(count: () => number): void {
    this.countWebSockets = count;
  }

  stats(): LiveStats {
    const { subscriptions, queuedEvents } = this.timelines.stats();
    return {
      connections: this.connections.size,
      webSockets: this.countWebSockets(),
      subscriptions,
      queuedEvents,
      sourceListeners: this.source.listenerCount(),
      sourceRestarts: this.source instanceof ChangeStreamEventSource ? this.source.restarts : 0,
    };
  }

  /** The viewer's new timeline posts, from now until the client stops or the connection closes. */
  async timelinePostAdded(client: LiveClient): Promise<AsyncIterableIterator<TimelineEvent<'postAdded'>>> {
    const events = await this.subscribe(client, 'postAdded');
    return keepOnly(events, (event) => this.visibility.added(client.viewerId, event.post), this.checkFailed);
  }

  /** Deletions of posts in the viewer's timeline. */
  async timelinePostRemoved(client: LiveClient): Promise<AsyncIterableIterator<TimelineEvent<'postRemoved'>>> {
    const events = await this.subscribe(client, 'postRemoved');
    return keepOnly(events, (event) => this.visibility.removed(client.viewerId, event), this.checkFailed);
  }

  private readonly checkFailed = (error: unknown) => this.logger.error('live events: could not check an event for a subscriber; it is skipped', error);

  postCreated(post: PostRecord): Promise<void> {
    return this.publish({ kind: 'postAdded', post });
  }

  postDeleted(post: PostRecord): Promise<void> {
    // Clients know a repost by its original's id, which is what they must remove.
    const { repostOf } = post;
    return this.publish({ kind: 'postRemoved', postId: repostOf?.id ?? post.id, authorId: post.authorId, originalAuthorId: repostOf?.authorId ?? null });
  }

  followed(followerId: string, followeeId: string): Promise<void> {
    return this.publish({ kind: 'followed', followerId, followeeId });
  }

  unfollowed(followerId: string, followeeId: string): Promise<void> {
    return this.publish({ kind: 'unfollowed', followerId, followeeId });
  }

  changed(change: StoredChange): Promise<void> {
    return this.publish({ kind: 'changed', ...change });
  }

  /**
   * Hands every event (posts added and removed, follows, unfollows, changes), from this instance or another, to
   * `forget`: the in-process tier drops what they make stale. Called once, before `start`.
   */
  invalidateWith(forget: (event: LiveEvent) => void): void {
    this.forget = forget;
  }

  /**
   * The change itself is already stored: a lost live event must not fail the user's request (a
   * retried createPost would post twice). Clients catch up from the timeline query.
   */
  private async publish(event: LiveEvent): Promise<void> {
    try {
      await this.source.publish(event);
    } catch (error) {
      this.logger.error(`live events: could not publish a ${event.kind} event; open subscriptions miss it`, error);
    }
  }

  private async subscribe<K extends TimelineEventKind>(
    client: LiveClient,
    kind: K,
  ): Promise<AsyncIterableIterator<TimelineEvent<K>>> {
    let untrack = () => {};
    const { queue, ready } = this.timelines.open(client.viewerId, kind, {
      maxQueued: this.options.maxQueuedEvents,
      onOverflow: () => client.close(LiveCloseCode.ClientTooSlow, closeReasons.clientTooSlow),
      onEnd: () => untrack(),
    });
    untrack = client.track(queue);
    await ready;
    return queue;
  }
}
