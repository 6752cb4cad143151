/**
 * live/ owns live timeline updates without any transport: which events each open subscription
 * receives (timelineSubscriptions.ts), bounded queues for slow subscribers (eventQueue.ts), and the
 * rules of a connection (liveConnections.ts: per-user limits, what closing ends). It listens to the
 * change bus and is given its visibility rules; the WebSocket adapter in api/ drives it.
 */
import type { LiveOptions } from '../config.js';
import type { ChangeBus } from '../changes/bus.js';
import type { NotificationAddedEvent, PostEditedEvent, PostRemovedEvent } from '../changes/events.js';
import type { LiveGroup } from '../changes/partitions.js';
import { AppError } from '../errors.js';
import { StartedListener } from '../changes/listeners.js';
import { quietLogger, type Logger } from '../logger.js';
import type { PostRecord } from '../records/posts.js';
import { keepOnly } from './eventQueue.js';
import { LiveConnections, type LiveClient } from './liveConnections.js';
import { NotificationSubscriptions } from './notificationSubscriptions.js';
import { closeReasons, LiveCloseCode } from './protocol.js';
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
  /** Whether an edit of a post is news to the viewer: they may see it and do not hide its author. */
  edited(viewerId: string, edit: PostEditedEvent): Promise<boolean>;
}

/** The rules of a list's live events: the owner's list only, and the same rules as its timeline. */
export interface LiveListVisibility {
  /** Refuses (NOT_FOUND) a list that is not the viewer's. */
  assertListOf(viewerId: string, listId: string): Promise<void>;
  added(viewerId: string, listId: string, post: PostRecord): Promise<boolean>;
}

/** What the live core needs besides the bus: whom a viewer follows, what each viewer may see, and whose notifications this instance hears. */
export interface LiveDependencies {
  followingIds(viewerId: string): Promise<string[]>;
  /** The tags a viewer follows, whose public posts their timeline subscriptions receive too. */
  followedTags?(viewerId: string): Promise<readonly string[]>;
  group: LiveGroup;
  visibility: LiveVisibility;
  lists: LiveListVisibility;
}

/**
 * Live timeline updates: routes every event of the change bus, from this instance or another, to
 * this instance's open subscriptions, each filtered by the viewer's visibility rules. Running it
 * runs the bus, so nothing is delivered to subscriptions before `start` or after `stop`.
 */
export class LiveService {
  readonly connections: LiveConnections;
  private readonly timelines: TimelineSubscriptions;
  private readonly notifications = new NotificationSubscriptions();
  private readonly visibility: LiveVisibility;
  private readonly lists: LiveListVisibility;
  private readonly group: LiveGroup;
  private logger: Logger = quietLogger;
  private readonly listening = new StartedListener();

  constructor(
    private readonly bus: ChangeBus,
    dependencies: LiveDependencies,
    private readonly options: LiveOptions,
  ) {
    this.connections = new LiveConnections(options.maxConnectionsPerUser);
    this.timelines = new TimelineSubscriptions(
      (viewerId) => dependencies.followingIds(viewerId),
      (viewerId) => dependencies.followedTags?.(viewerId) ?? Promise.resolve([]),
    );
    this.visibility = dependencies.visibility;
    this.lists = dependencies.lists;
    this.group = dependencies.group;
  }

  async start(logger: Logger): Promise<void> {
    this.logger = logger;
    await this.listening.start(
      () =>
        this.bus.listen((event) => {
          this.timelines.handle(event);
          this.notifications.handle(event);
          if (event.kind === 'changed' && event.users.length > 0) this.closeRevoked(event.users);
        }),
      () => this.bus.start(logger),
    );
  }

  /**
   * A changed user may have revoked its tokens (a new password, logging out everywhere, deletion):
   * their connections here that no longer authenticate are closed, as a fresh connection would be.
   * The check reads the user anew: the bus made every instance forget it before this runs.
   */
  private closeRevoked(userIds: readonly string[]): void {
    for (const connection of this.connections.of(userIds)) {
      connection.stillAuthorized().then(
        (authorized) => {
          if (!authorized) connection.close(LiveCloseCode.Forbidden, closeReasons.revoked);
        },
        (error: unknown) => this.logger.error('live connections: could not check a connection\'s token again', error),
      );
    }
  }

  async stop(): Promise<void> {
    this.listening.stop();
    await this.bus.stop();
    this.timelines.endAll();
    this.notifications.endAll();
  }

  /** Whether live events reach this instance's subscribers now: the bus runs and its transport is not failing. */
  eventsFlowing(): boolean {
    return this.bus.flowing();
  }

  /** Open subscriptions by kind, for the metrics. */
  subscriptionCounts(): { timeline: number; notifications: number } {
    return { timeline: this.timelines.stats().subscriptions, notifications: this.notifications.stats().subscriptions };
  }

  stats(): LiveStats {
    const timelines = this.timelines.stats();
    const notifications = this.notifications.stats();
    return {
      connections: this.connections.size,
      webSockets: this.connections.sockets,
      subscriptions: timelines.subscriptions + notifications.subscriptions,
      queuedEvents: timelines.queuedEvents + notifications.queuedEvents,
      sourceListeners: this.bus.sourceListenerCount(),
      sourceRestarts: this.bus.restarts,
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

  /** Edits of posts in the viewer's timeline (their text, an image's alt text), once per edit. */
  async timelinePostEdited(client: LiveClient): Promise<AsyncIterableIterator<TimelineEvent<'postEdited'>>> {
    const events = await this.subscribe(client, 'postEdited');
    return keepOnly(events, (event) => this.visibility.edited(client.viewerId, event), this.checkFailed);
  }

  /**
   * New posts of one of the viewer's lists. A list holds only accounts the viewer follows, so its
   * posts are among the viewer's timeline events; each is kept when the list shows it now.
   */
  async listPostAdded(client: LiveClient, listId: string): Promise<AsyncIterableIterator<TimelineEvent<'postAdded'>>> {
    await this.lists.assertListOf(client.viewerId, listId);
    const events = await this.subscribe(client, 'postAdded');
    return keepOnly(events, (event) => this.lists.added(client.viewerId, listId, event.post), this.checkFailed);
  }

  /** The viewer's new notifications, and their groups again each time one grows. */
  notificationAdded(client: LiveClient): AsyncIterableIterator<NotificationAddedEvent> {
    // A viewer's notifications are announced to their own instance group only; here none would come.
    if (!this.group.holdsPerson(client.viewerId)) {
      const liveGroup = this.group.groupOf(client.viewerId);
      throw new AppError('MISDIRECTED', `Live notifications of this account are served by instance group ${liveGroup}`, { liveGroup });
    }
    let untrack = () => {};
    const queue = this.notifications.open(client.viewerId, {
      maxQueued: this.options.maxQueuedEvents,
      onOverflow: () => client.close(LiveCloseCode.ClientTooSlow, closeReasons.clientTooSlow),
      onEnd: () => untrack(),
    });
    untrack = client.track(queue);
    return queue;
  }

  private readonly checkFailed = (error: unknown) => this.logger.error('live events: could not check an event for a subscriber; it is skipped', error);

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
