/**
 * notifications/ tells people what happened to them: follows, likes, reposts, replies and
 * mentions. Grouped kinds (follows, likes, reposts) change with their action, in its request
 * (GroupMemberships over NotificationGroups); replies and mentions travel with the post's queued
 * work, and deletions, mutes and blocks take back what no longer stands through the same queue.
 */
import { ObjectId, type Collection, type Db, type Document } from 'mongodb';
import { notificationAdded, type ChangePublisher } from '../changes/events.js';
import type { ContentService } from '../content/contentService.js';
import type { Interactions } from '../content/interactions.js';
import { staleChangeMs } from '../content/postCounters.js';
import { badInput, isDuplicateKeyError } from '../errors.js';
import type { UserDirectory } from '../graph/userDirectory.js';
import type { UserGraphService } from '../graph/userGraphService.js';
import type { NewTask, TaskDocument } from '../queue/taskQueue.js';
import { RetryLater } from '../queue/taskWorkers.js';
import {
  notificationId,
  toNotificationRecord,
  type NotificationDocument,
  type NotificationKind,
  type NotificationRecord,
} from '../records/notifications.js';
import { visibleTo, type PostRecord } from '../records/posts.js';
import { inListOrder, type ListPage, type ListPageRequest } from '../records/pages.js';
import { handlePattern } from '../records/users.js';
import type { GroupMemberships } from './groupMemberships.js';
import { NotificationGroups } from './notificationGroups.js';
import { plannedCollection, plannedExpiry, plannedIndexes } from '../db/shardPlan.js';

/** A group everyone left is kept a moment (see NotificationGroups), shown to no one. */
const shown = { n: { $gt: 0 } } as const;

/** `unreadCount` counts this far and no further. */
export const maxUnreadCounted = 1000;

/** A post missing from `content` this long after its task was queued was never stored (its request died). */
const unstoredGraceMs = 60_000;

/**
 * When a deletion's or a mute's clean-up runs again: after any request that acted on the old state
 * (a like of the deleted post, a like that read the filters before the mute) has finished, or been
 * finished by the repair sweep.
 */
const secondPassMs = 2 * staleChangeMs;

export interface PostPayload {
  postId: ObjectId;
  /** A deletion's second pass: after the likes that raced it. */
  again?: true;
  /** After an edit of the text: the handles it no longer mentions, whose MENTION is taken back. */
  dropped?: string[];
}

export interface RelationPayload {
  recipient: string;
  actor: string;
}

/** The queued work of notifications, by kind (see feed/queuedWork.ts). */
export interface NotificationTasks {
  'notify-post': PostPayload;
  'notify-forget-post': PostPayload;
  'notify-relation': RelationPayload;
}

/** A notification task to queue, its payload checked against its kind. */
export type NotificationTask = { [K in keyof NotificationTasks]: NewTask<NotificationTasks[K] & Document> & { kind: K } }[keyof NotificationTasks];

/** Where a notification sits in its recipient's list: newest event first, then by id. */
export interface NotificationPosition {
  at: Date;
  id: string;
}

/** `forward` goes back in time from the cursor, `backward` returns what came after it. */
export interface NotificationPageRequest extends ListPageRequest<NotificationPosition> {
  kinds: readonly NotificationKind[] | null;
}

/** Newest first, whatever the direction. */
export type NotificationPage = ListPage<NotificationRecord>;

/** What marking read changed: the notifications it marked (the newest `maxMarkedShown`), what is left unread, and where the marker is now. */
export interface MarkedRead {
  marked: NotificationRecord[];
  unreadCount: number;
  marker: NotificationPosition;
}

/** How many of the notifications one mark read are returned, newest first. */
export const maxMarkedShown = 100;

export interface NotificationDependencies {
  content: ContentService;
  graph: Pick<UserGraphService, 'pairs' | 'followedAmong'>;
  users: Pick<UserDirectory, 'getUsers'>;
  interactions: { likes: Interactions; reposts: Interactions };
  memberships: GroupMemberships;
  groups: NotificationGroups;
  changes: ChangePublisher;
}

interface MarkerDocument {
  _id: string;
  /** The newest notification read, as `positionKey` writes it: `$max` never moves it backwards. */
  pos: string;
}

export class NotificationService {
  readonly notifications: Collection<NotificationDocument>;
  private readonly markers: Collection<MarkerDocument>;

  constructor(
    private readonly db: Db,
    private readonly deps: NotificationDependencies,
    private readonly retentionMs: number,
  ) {
    this.notifications = deps.groups.groups;
    this.markers = plannedCollection<MarkerDocument>(db, 'notification_markers');
  }

  /** The collection the groups are kept in, for wiring them before this service. */
  static collection(db: Db): Collection<NotificationDocument> {
    return plannedCollection<NotificationDocument>(db, 'notifications');
  }

  async ensureIndexes(): Promise<void> {
    await plannedIndexes(this.notifications, [
      // A recipient's page, newest first, and the unread count: a range on `at` after the marker.
      { key: { r: 1, at: -1, _id: -1 }, name: 'recipient_newest' },
      { key: { p: 1 }, name: 'post' },
    ]);
    // A notification goes NOTIFICATION_RETENTION_DAYS after its newest event; a page past it ends there.
    await plannedExpiry(this.db, this.notifications, 'at', 'retention', Math.round(this.retentionMs / 1000));
  }

  /** The queued work this service does, by kind. */
  readonly handlers: { [K in keyof NotificationTasks]: (task: TaskDocument<NotificationTasks[K] & Document>) => Promise<void> } = {
    'notify-post': (task) => this.notifyPost(task),
    'notify-forget-post': (task) => this.forgetPost(task),
    'notify-relation': (task) => this.relationChanged(task.payload),
  };

  /** A deleted account's own notifications and read marker. */
  async forgetRecipient(handle: string): Promise<void> {
    await this.notifications.deleteMany({ r: handle });
    await this.markers.deleteOne({ _id: handle });
  }

  /** A page of the viewer's notifications, newest first, either way from a cursor. */
  async page(viewerId: string, request: NotificationPageRequest): Promise<NotificationPage> {
    const { from, limit, kinds, direction } = request;
    const forward = direction === 'forward';
    const operator = forward ? '$lt' : '$gt';
    const beyond = from ? { $or: [{ at: { [operator]: from.at } }, { at: from.at, _id: { [operator]: from.id } }] } : {};
    const order = forward ? -1 : 1;
    const docs = await this.notifications
      .find({ r: viewerId, ...(kinds ? { k: { $in: [...kinds] } } : {}), ...beyond, ...shown }, { projection: { tk: 0 } })
      .sort({ at: order, _id: order })
      .limit(limit + 1)
      .toArray();
    return inListOrder(direction, docs.map(toNotificationRecord), limit);
  }

  /** The viewer's own notifications among `ids`, in one query; others' and unknown ones are absent. */
  async ofViewer(viewerId: string, ids: readonly string[]): Promise<NotificationRecord[]> {
    if (ids.length === 0) return [];
    const docs = await this.notifications.find({ _id: { $in: [...ids] }, r: viewerId, ...shown }, { projection: { tk: 0 } }).toArray();
    return docs.map(toNotificationRecord);
  }

  /** Where the viewer has read up to; null when they never marked anything read. */
  async markersOf(viewerIds: readonly string[]): Promise<Map<string, NotificationPosition>> {
    const docs = await this.markers.find({ _id: { $in: [...viewerIds] } }).toArray();
    return new Map(docs.map((doc) => [doc._id, fromPositionKey(doc.pos)]));
  }

  /**
   * Notifications newer than the marker, exact up to `maxUnreadCounted`: a count with that limit
   * over the `(r, at)` index, never over a whole history.
   */
  async unreadCount(viewerId: string, marker?: NotificationPosition | null): Promise<number> {
    const read = marker === undefined ? (await this.markersOf([viewerId])).get(viewerId) ?? null : marker;
    const newer = read ? { $or: [{ at: { $gt: read.at } }, { at: read.at, _id: { $gt: read.id } }] } : {};
    return this.notifications.countDocuments({ r: viewerId, ...newer, ...shown }, { limit: maxUnreadCounted });
  }

  /**
   * Moves the viewer's marker up to `upTo` (never back) and says what that changed: the
   * notifications between the marker before (read atomically with the move) and the new one.
   */
  async markRead(viewerId: string, upTo: NotificationPosition): Promise<MarkedRead> {
    const pos = positionKey(upTo);
    let before: MarkerDocument | null = null;
    for (let attempt = 0; ; attempt++) {
      try {
        before = await this.markers.findOneAndUpdate({ _id: viewerId }, { $max: { pos } }, { upsert: true, returnDocument: 'before' });
        break;
      } catch (error) {
        // Two first marks of one viewer: one insert wins, the other becomes an update.
        if (attempt > 0 || !isDuplicateKeyError(error)) throw error;
      }
    }
    const previous = before ? fromPositionKey(before.pos) : null;
    const moved = isNewer(upTo, previous);
    const newer = previous ? { $or: [{ at: { $gt: previous.at } }, { at: previous.at, _id: { $gt: previous.id } }] } : {};
    const upToMark = { $or: [{ at: { $lt: upTo.at } }, { at: upTo.at, _id: { $lte: upTo.id } }] };
    const [marked, unreadCount] = await Promise.all([
      moved
        ? this.notifications
            .find({ r: viewerId, $and: [newer, upToMark].filter((part) => Object.keys(part).length > 0), ...shown }, { projection: { tk: 0 } })
            .sort({ at: -1, _id: -1 })
            .limit(maxMarkedShown)
            .toArray()
        : [],
      this.unreadCount(viewerId),
    ]);
    return { marked: marked.map(toNotificationRecord), unreadCount, marker: moved ? upTo : previous! };
  }

  /**
   * Tells `recipient` that `requester` asks to follow them: one notification per request (named by
   * when it was asked), so asking again while it waits, which writes it again, tells once.
   */
  async notifyFollowRequest(recipient: string, requester: string, since: Date): Promise<void> {
    if (!(await this.deps.memberships.tells(recipient, requester))) return;
    const _id = notificationId({ kind: 'FOLLOW_REQUEST', recipient, requester, since });
    const doc: NotificationDocument = { _id, r: recipient, k: 'FOLLOW_REQUEST', at: since, n: 1, a: [{ u: requester, at: since }], v: 1 };
    const { _id: _, r: __, ...fields } = doc;
    const written = await this.notifications.updateOne({ _id, r: recipient }, { $setOnInsert: fields }, { upsert: true }).catch((error: unknown) => {
      if (isDuplicateKeyError(error)) return null;
      throw error;
    });
    if (written?.upsertedCount === 1) await this.deps.changes.publish(notificationAdded(toNotificationRecord(doc)));
  }

  /** Tells an author that staff removed their post, and why (the reason of the report acted on). Once per post. */
  async notifyPostRemoved(author: string, postId: ObjectId, reason: string): Promise<void> {
    const _id = notificationId({ kind: 'POST_REMOVED', postId });
    const at = new Date();
    const doc: NotificationDocument = { _id, r: author, k: 'POST_REMOVED', at, n: 1, a: [], v: 1, why: reason };
    const { _id: _, r: __, ...fields } = doc;
    const written = await this.notifications.updateOne({ _id, r: author }, { $setOnInsert: fields }, { upsert: true }).catch((error: unknown) => {
      if (isDuplicateKeyError(error)) return null;
      throw error;
    });
    if (written?.upsertedCount === 1) await this.deps.changes.publish(notificationAdded(toNotificationRecord(doc)));
  }

  private async notifyPost(task: TaskDocument<PostPayload>): Promise<void> {
    const { content } = this.deps;
    const post = await content.lookups.getPost(task.payload.postId);
    if (!post) {
      if (await content.lookups.wasDeleted(task.payload.postId)) return;
      if (Date.now() - task.createdAt.getTime() < unstoredGraceMs) throw new RetryLater(200, 'the post is not stored yet');
      return;
    }
    const { memberships } = this.deps;
    // An edit that no longer mentions someone takes their notification back (one targeted delete each).
    for (const handle of task.payload.dropped ?? []) {
      if (!post.body.mentions.includes(handle)) await this.notifications.deleteOne({ _id: notificationId({ kind: 'MENTION', postId: post.id, recipient: handle }), r: handle });
    }
    const told: { recipient: string; kind: 'REPLY' | 'MENTION' | 'QUOTE'; _id: string }[] = [];
    const parentAuthor = post.replyTo?.authorId ?? null;
    if (parentAuthor && (await memberships.tells(parentAuthor, post.authorId))) {
      told.push({ recipient: parentAuthor, kind: 'REPLY', _id: notificationId({ kind: 'REPLY', replyId: post.id }) });
    }
    const quotedAuthor = post.body.quoteOf?.authorId ?? null;
    if (quotedAuthor && quotedAuthor !== post.authorId && (await memberships.tells(quotedAuthor, post.authorId))) {
      told.push({ recipient: quotedAuthor, kind: 'QUOTE', _id: notificationId({ kind: 'QUOTE', quoteId: post.id }) });
    }
    const mentioned = post.body.mentions.filter((handle) => handle !== post.authorId && handle !== parentAuthor && handlePattern.test(handle));
    for (const user of await this.deps.users.getUsers(mentioned)) {
      if (await memberships.tells(user.handle, post.authorId)) {
        told.push({ recipient: user.handle, kind: 'MENTION', _id: notificationId({ kind: 'MENTION', postId: post.id, recipient: user.handle }) });
      }
    }
    for (const { recipient, kind, _id } of told) {
      // A limited post does not exist for whoever may not see it: nor does its notification.
      if (!(await this.maySee(recipient, post))) continue;
      const doc: NotificationDocument = { _id, r: recipient, k: kind, at: post.createdAt, n: 1, a: [{ u: post.authorId, at: post.createdAt }], p: post.id, v: 1 };
      const { _id: _, r: __, ...fields } = doc;
      const written = await this.notifications.updateOne({ _id, r: recipient }, { $setOnInsert: fields }, { upsert: true }).catch((error: unknown) => {
        if (isDuplicateKeyError(error)) return null;
        throw error;
      });
      if (written?.upsertedCount === 1) await this.deps.changes.publish(notificationAdded(toNotificationRecord(doc)));
    }
    // Written, then checked: a post deleted meanwhile had its notifications removed before this wrote.
    if (!(await content.lookups.exists(post.id))) await this.deps.groups.forgetPost(post.id);
  }

  private async maySee(recipient: string, post: PostRecord): Promise<boolean> {
    const follows = post.body.visibility === 'FOLLOWERS' ? await this.deps.graph.followedAmong(recipient, [post.authorId]) : new Set<string>();
    return visibleTo(post.authorId, post.body, recipient, (authorId) => follows.has(authorId));
  }

  private async forgetPost(task: TaskDocument<PostPayload>): Promise<void> {
    const { postId } = task.payload;
    if (await this.deps.content.lookups.exists(postId)) {
      // Its deleting request removes it in a moment; one that died never will, and the post stays.
      if (Date.now() - task.createdAt.getTime() < unstoredGraceMs) throw new RetryLater(25, 'the post is not deleted yet');
      return;
    }
    // The deletion took its likes and reposts back itself; a like that raced it, and the group it
    // wrote, are what the second pass finds. (Such a repost's edge is left: it counts on nothing.)
    await Promise.all([this.deps.groups.forgetPost(postId), task.payload.again ? this.deps.interactions.likes.forgetPost(postId) : null]);
  }

  /** `actor` no longer tells `recipient` anything: out of their groups, and their replies and mentions gone. */
  private async relationChanged({ recipient, actor }: RelationPayload): Promise<void> {
    const { memberships, interactions, graph } = this.deps;
    if (await memberships.tells(recipient, actor)) return;
    for (const edges of [interactions.likes, interactions.reposts]) {
      for (const edge of await edges.inGroupsOf(actor, recipient)) await edges.leaveGroup(edge.p, actor);
    }
    await graph.pairs.leaveGroup(actor, recipient, memberships.followEffects);
    await this.notifications.deleteMany({ r: recipient, k: { $in: ['REPLY', 'MENTION', 'QUOTE'] }, 'a.u': actor });
  }
}

/** The task that tells a post's replied-to author and mentioned users; none when there is no one to tell. */
export function postNotificationTasks(post: PostRecord): NotificationTask[] {
  if (post.repostOf || (!post.replyTo && !post.body.quoteOf && post.body.mentions.length === 0)) return [];
  return [{ _id: `notify-post:${post.id.toHexString()}`, kind: 'notify-post', payload: { postId: post.id } }];
}

/**
 * The tasks that remove what a deleted post was about or caused, once it is gone: now, and again
 * once a like or repost that raced the deletion has been written.
 */
export function retractionNotificationTasks(post: PostRecord): NotificationTask[] {
  if (post.repostOf) return [];
  const key = post.id.toHexString();
  return [
    { _id: `notify-forget-post:${key}`, kind: 'notify-forget-post', payload: { postId: post.id } },
    { _id: `notify-forget-post:${key}:again`, kind: 'notify-forget-post', payload: { postId: post.id, again: true }, runAt: new Date(Date.now() + secondPassMs) },
  ];
}

/**
 * After a mute or block: what `actor` did stops showing in `recipient`'s notifications, now and
 * again once every like, repost or follow that read the filters before the change is written.
 */
export function relationNotificationTasks(recipient: string, actor: string): NotificationTask[] {
  const key = `${recipient}:${actor}:${new ObjectId().toHexString()}`;
  return [
    { _id: `notify-relation:${key}`, kind: 'notify-relation', payload: { recipient, actor } },
    { _id: `notify-relation:${key}:again`, kind: 'notify-relation', payload: { recipient, actor }, runAt: new Date(Date.now() + secondPassMs) },
  ];
}

/** Sorts as (time, id) does: the time zero-padded, so `$max` on it keeps the newer position. */
export function positionKey({ at, id }: NotificationPosition): string {
  return `${String(at.getTime()).padStart(15, '0')}:${id}`;
}

function fromPositionKey(key: string): NotificationPosition {
  const colon = key.indexOf(':');
  return { at: new Date(Number(key.slice(0, colon))), id: key.slice(colon + 1) };
}

export function isNewer(position: NotificationPosition, than: NotificationPosition | null): boolean {
  return than === null || positionKey(position) > positionKey(than);
}

const invalidCursor = () => badInput('Invalid cursor: pass a cursor of your own notifications exactly as a previous page returned it');

/**
 * Cursors name their recipient, so one from another account, or from another connection (a
 * timeline cursor), is refused rather than read as a place in this list.
 */
export function encodeNotificationCursor(notification: NotificationRecord): string {
  return Buffer.from(`n:${notification.recipientId}:${notification.updatedAt.getTime()}:${notification.id}`).toString('base64url');
}

export function decodeNotificationCursor(cursor: string, viewerId: string): NotificationPosition {
  const match = /^n:([a-z0-9_]{3,30}):(\d{1,15}):([a-z]:[0-9a-z_:-]{1,80})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match || match[1] !== viewerId) throw invalidCursor();
  return { at: new Date(Number(match[2])), id: match[3]! };
}
