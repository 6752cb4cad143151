import { UnreachableCaseError } from '../errors.js';
import { EventQueue } from './eventQueue.js';
import type { ChangeEvent, PostAddedEvent, PostEditedEvent, PostRemovedEvent } from '../changes/events.js';

export type TimelineEventKind = 'postAdded' | 'postRemoved' | 'postEdited';
export type TimelineEvent<K extends TimelineEventKind> = K extends 'postAdded' ? PostAddedEvent : K extends 'postRemoved' ? PostRemovedEvent : PostEditedEvent;

export interface TimelineSubscriptionOptions {
  /** Events that may wait for the consumer (and, while loading, for the following list). */
  maxQueued: number;
  /** The subscriber fell `maxQueued` events behind; its queue is already ended. */
  onOverflow(): void;
  /** The queue ended, for whatever reason. */
  onEnd(): void;
}

/** One open subscription: a viewer, what they see, and what waits to be sent to them. */
class Subscriber<K extends TimelineEventKind = TimelineEventKind> {
  /** The authors whose posts this viewer's timeline shows: themselves and whom they follow. Null while loading. */
  visible: Set<string> | null = null;
  /** The tags the viewer follows: public posts with one of them show too. */
  tags: ReadonlySet<string> = new Set();
  /** Events that arrived while `visible` was loading, replayed in order once it is known. */
  pending: ChangeEvent[] | null = [];
  readonly queue: EventQueue<TimelineEvent<K>>;

  constructor(
    readonly viewerId: string,
    readonly kind: K,
    private readonly options: TimelineSubscriptionOptions,
    onEnd: (subscriber: Subscriber<K>) => void,
  ) {
    this.queue = new EventQueue<TimelineEvent<K>>(options.maxQueued, {
      onOverflow: () => options.onOverflow(),
      onEnd: () => {
        onEnd(this);
        options.onEnd();
      },
    });
  }

  /** Holds an event until the following list is loaded, within the same bound as the queue. */
  hold(event: ChangeEvent): void {
    if (!this.pending || this.queue.isEnded) return;
    if (this.pending.length < this.options.maxQueued) {
      this.pending.push(event);
      return;
    }
    this.queue.end();
    this.options.onOverflow();
  }
}

/** The tags a post is routed by: a public post's own (reposts come through their reposter). */
const tagsOf = (event: PostAddedEvent | PostRemovedEvent): readonly string[] =>
  event.kind === 'postRemoved' ? (event.tags ?? []) : event.post.body.visibility === 'PUBLIC' && !event.post.repostOf ? event.post.body.tags : [];

/** Whom a post is addressed to besides its author's followers. */
const audienceOf = (post: { visibility: string; audience: readonly string[] }): readonly string[] =>
  post.visibility === 'MENTIONED' ? post.audience : [];

function addTo<K, V>(index: Map<K, Set<V>>, key: K, value: V): void {
  const set = index.get(key);
  if (set) set.add(value);
  else index.set(key, new Set([value]));
}

function removeFrom<K, V>(index: Map<K, Set<V>>, key: K, value: V): void {
  const set = index.get(key);
  if (set?.delete(value) && set.size === 0) index.delete(key);
}

/**
 * Routes live events to the open timeline subscriptions of one server instance. Each subscription
 * knows which authors its viewer's timeline shows: loaded once when it opens, then kept current by
 * that viewer's follow and unfollow events, so a follow takes effect without reconnecting. A post
 * event reaches only the subscriptions indexed under its author; pushing never waits for a client.
 */
export class TimelineSubscriptions {
  private readonly byViewer = new Map<string, Set<Subscriber>>();
  private readonly byAuthor = new Map<string, Set<Subscriber>>();
  /** Subscribers by the tags they follow: a tagged post reaches them whoever wrote it. */
  private readonly byTag = new Map<string, Set<Subscriber>>();
  private readonly loading = new Set<Subscriber>();

  constructor(
    private readonly followingIds: (viewerId: string) => Promise<string[]>,
    private readonly followedTags: (viewerId: string) => Promise<readonly string[]> = async () => [],
  ) {}

  /**
   * Opens a subscription at once, so no event published from now on is missed; `ready` settles
   * when the viewer's following list is loaded (or rejects, and the queue is ended).
   */
  open<K extends TimelineEventKind>(
    viewerId: string,
    kind: K,
    options: TimelineSubscriptionOptions,
  ): { queue: EventQueue<TimelineEvent<K>>; ready: Promise<void> } {
    const subscriber = new Subscriber(viewerId, kind, options, (ended) => this.remove(ended));
    addTo(this.byViewer, viewerId, subscriber as Subscriber);
    this.loading.add(subscriber as Subscriber);
    return { queue: subscriber.queue, ready: this.load(subscriber as Subscriber) };
  }

  handle(event: ChangeEvent): void {
    switch (event.kind) {
      case 'postAdded':
        return this.toFollowersOf(event.post.authorId, event, audienceOf(event.post.body));
      case 'postRemoved':
        return this.toFollowersOf(event.authorId, event, audienceOf(event));
      case 'followed':
      case 'unfollowed':
        for (const subscriber of this.byViewer.get(event.followerId) ?? []) this.apply(subscriber, event);
        return;
      case 'changed':
        // Filters and users are read again for every event (the visibility rules); a viewer's
        // followed tags route events, so a changed viewer's are read again, once every listener
        // has forgotten what it held of them.
        for (const userId of event.users) {
          const subscribers = this.byViewer.get(userId);
          if (subscribers) setImmediate(() => void this.reloadTags(userId, subscribers));
        }
        return;
      case 'postEdited':
        return this.toReadersOfEdit(event);
      case 'notificationAdded':
      case 'counted':
        // Counts and a viewer's likes are read with each page a subscriber loads, not pushed.
        return;
      default:
        throw new UnreachableCaseError(event);
    }
  }

  /** Ends every subscription (the server is stopping). */
  endAll(): void {
    for (const subscribers of [...this.byViewer.values()]) {
      for (const subscriber of [...subscribers]) subscriber.queue.end();
    }
  }

  stats(): { subscriptions: number; queuedEvents: number; indexedAuthors: number } {
    let subscriptions = 0;
    let queuedEvents = 0;
    for (const subscribers of this.byViewer.values()) {
      subscriptions += subscribers.size;
      for (const subscriber of subscribers) queuedEvents += subscriber.queue.size + (subscriber.pending?.length ?? 0);
    }
    return { subscriptions, queuedEvents, indexedAuthors: this.byAuthor.size };
  }

  private async load(subscriber: Subscriber): Promise<void> {
    let following: string[];
    let tags: readonly string[];
    try {
      [following, tags] = await Promise.all([this.followingIds(subscriber.viewerId), this.followedTags(subscriber.viewerId)]);
    } catch (error) {
      subscriber.queue.end();
      throw error;
    } finally {
      this.loading.delete(subscriber);
    }
    if (subscriber.queue.isEnded) return;
    subscriber.visible = new Set([subscriber.viewerId, ...following]);
    for (const authorId of subscriber.visible) addTo(this.byAuthor, authorId, subscriber);
    this.indexTags(subscriber, tags);
    const pending = subscriber.pending ?? [];
    subscriber.pending = null;
    for (const event of pending) this.apply(subscriber, event);
  }

  /**
   * An edit, to whoever's timeline shows the post: the author's followers, its reposters'
   * followers and, for a mentioned-only post, its audience; each subscriber once.
   */
  private toReadersOfEdit(event: PostEditedEvent): void {
    for (const subscriber of this.loading) if (subscriber.kind === 'postEdited') subscriber.hold(event);
    const reached = new Set<Subscriber>();
    for (const authorId of new Set([event.post.authorId, ...event.reposts.map((repost) => repost.authorId)])) {
      for (const subscriber of this.byAuthor.get(authorId) ?? []) reached.add(subscriber);
    }
    for (const viewerId of event.audience ?? []) for (const subscriber of this.byViewer.get(viewerId) ?? []) if (subscriber.visible) reached.add(subscriber);
    for (const subscriber of reached) if (subscriber.kind === 'postEdited') subscriber.queue.push(event);
  }

  /** To the author's followers and, for a mentioned-only post, its audience: each subscriber once. */
  private toFollowersOf(authorId: string, event: PostAddedEvent | PostRemovedEvent, audience: readonly string[]): void {
    for (const subscriber of this.loading) if (subscriber.kind === event.kind) subscriber.hold(event);
    const followers = this.byAuthor.get(authorId) ?? new Set<Subscriber>();
    const tags = tagsOf(event).filter((tag) => this.byTag.has(tag));
    // Most posts are public and untagged: no set of recipients to build.
    const reached = audience.length === 0 && tags.length === 0 ? followers : new Set(followers);
    for (const tag of tags) for (const subscriber of this.byTag.get(tag)!) reached.add(subscriber);
    for (const viewerId of audience) for (const subscriber of this.byViewer.get(viewerId) ?? []) if (subscriber.visible) reached.add(subscriber);
    for (const subscriber of reached) {
      if (subscriber.kind === event.kind) subscriber.queue.push(event);
    }
  }

  private apply(subscriber: Subscriber, event: ChangeEvent): void {
    if (subscriber.queue.isEnded) return;
    if (!subscriber.visible) return subscriber.hold(event);
    switch (event.kind) {
      case 'postAdded':
      case 'postRemoved': {
        const authorId = event.kind === 'postAdded' ? event.post.authorId : event.authorId;
        const audience = audienceOf(event.kind === 'postAdded' ? event.post.body : event);
        const tagged = tagsOf(event).some((tag) => subscriber.tags.has(tag));
        if (subscriber.kind === event.kind && (subscriber.visible.has(authorId) || audience.includes(subscriber.viewerId) || tagged)) subscriber.queue.push(event);
        return;
      }
      case 'followed':
        if (!subscriber.visible.has(event.followeeId)) {
          subscriber.visible.add(event.followeeId);
          addTo(this.byAuthor, event.followeeId, subscriber);
        }
        return;
      case 'unfollowed':
        if (event.followeeId !== subscriber.viewerId && subscriber.visible.delete(event.followeeId)) {
          removeFrom(this.byAuthor, event.followeeId, subscriber);
        }
        return;
      case 'postEdited': {
        const authors = [event.post.authorId, ...event.reposts.map((repost) => repost.authorId)];
        const visible = subscriber.visible;
        const shown = authors.some((authorId) => visible.has(authorId)) || (event.audience ?? []).includes(subscriber.viewerId);
        if (subscriber.kind === 'postEdited' && shown) subscriber.queue.push(event);
        return;
      }
      case 'changed':
      case 'notificationAdded':
      case 'counted':
        return;
      default:
        throw new UnreachableCaseError(event);
    }
  }

  private remove(subscriber: Subscriber): void {
    removeFrom(this.byViewer, subscriber.viewerId, subscriber);
    this.loading.delete(subscriber);
    for (const authorId of subscriber.visible ?? []) removeFrom(this.byAuthor, authorId, subscriber);
    for (const tag of subscriber.tags) removeFrom(this.byTag, tag, subscriber);
    subscriber.visible = null;
    subscriber.pending = null;
  }

  /** Indexes the subscriber under `tags` instead of the tags it had. */
  private indexTags(subscriber: Subscriber, tags: readonly string[]): void {
    for (const tag of subscriber.tags) removeFrom(this.byTag, tag, subscriber);
    subscriber.tags = new Set(tags);
    if (subscriber.queue.isEnded) return;
    for (const tag of subscriber.tags) addTo(this.byTag, tag, subscriber);
  }

  /** A viewer followed or unfollowed a tag (or changed otherwise): their open subscriptions route by their tags as they are now. */
  private async reloadTags(viewerId: string, subscribers: ReadonlySet<Subscriber>): Promise<void> {
    const tags = await this.followedTags(viewerId).catch(() => null);
    if (tags === null) return;
    for (const subscriber of subscribers) if (subscriber.visible) this.indexTags(subscriber, tags);
  }
}
