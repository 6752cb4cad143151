import type { Db } from 'mongodb';
import type { LiveOptions } from '../config.js';
import type { PostRecord } from '../content/contentService.js';
import type { FeedObserver } from '../feed/feedBackend.js';
import type { UserGraphService } from '../graph/userGraphService.js';
import { quietLogger, type Logger } from '../logger.js';
import { ChangeStreamEventSource } from './changeStreamEvents.js';
import { closeReasons, LiveCloseCode, LiveConnections, type LiveClient } from './liveConnections.js';
import { LocalEventSource, type LiveEvent, type LiveEventSource } from './liveEvents.js';
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
    this.unlisten = this.source.listen((event) => this.timelines.handle(event));
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
  timelinePostAdded(client: LiveClient): Promise<AsyncIterableIterator<TimelineEvent<'postAdded'>>> {
    return this.subscribe(client, 'postAdded');
  }

  /** Deletions of posts in the viewer's timeline. */
  timelinePostRemoved(client: LiveClient): Promise<AsyncIterableIterator<TimelineEvent<'postRemoved'>>> {
    return this.subscribe(client, 'postRemoved');
  }

  postCreated(post: PostRecord): Promise<void> {
    return this.publish({ kind: 'postAdded', post });
  }

  postDeleted(post: PostRecord): Promise<void> {
    return this.publish({ kind: 'postRemoved', postId: post.id, authorId: post.authorId });
  }

  followed(followerId: string, followeeId: string): Promise<void> {
    return this.publish({ kind: 'followed', followerId, followeeId });
  }

  unfollowed(followerId: string, followeeId: string): Promise<void> {
    return this.publish({ kind: 'unfollowed', followerId, followeeId });
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
