/**
 * notifications/ tells people what happened to them: follows, likes, reposts, replies and
 * mentions. Requests only queue a task (one insert, or none where a task is queued anyway); the
 * fanout workers build the notifications (NotificationGroups for the grouped kinds), announce them
 * on the change bus, and keep them in line with undos, deletions, mutes and blocks.
 */
import { ObjectId, type Collection, type Db } from 'mongodb';
import { notificationAdded, type ChangePublisher } from '../changes/events.js';
import type { ContentService } from '../content/contentService.js';
import type { InteractionEffects, Interactions } from '../content/interactions.js';
import { mentionedHandles } from '../content/mentions.js';
import { badInput, isDuplicateKeyError } from '../errors.js';
import type { FollowEffects } from '../graph/followPairs.js';
import type { ReaderFilters } from '../graph/readerFilters.js';
import type { UserDirectory } from '../graph/userDirectory.js';
import type { UserGraphService } from '../graph/userGraphService.js';
import type { NewTask, TaskDocument } from '../queue/taskQueue.js';
import { RetryLater, type BatchHandler, type TaskHandler } from '../queue/taskWorkers.js';
import {
  toNotificationRecord,
  type NotificationDocument,
  type NotificationKind,
  type NotificationRecord,
} from '../records/notifications.js';
import { visibleTo, type PostRecord } from '../records/posts.js';
import { handlePattern } from '../records/users.js';
import { NotificationGroups, type GroupSubject, type GroupTarget, type GroupedKind } from './notificationGroups.js';

/** `unreadCount` counts this far and no further. */
export const maxUnreadCounted = 1000;

/** A post missing from `content` this long after its task was queued was never stored (its request died). */
const unstoredGraceMs = 60_000;

interface MemberPayload {
  kind: GroupedKind;
  key: string;
  actor: string;
  at: Date;
}

interface PostPayload {
  postId: ObjectId;
}

interface RelationPayload {
  recipient: string;
  actor: string;
}

export const notificationTaskKinds = {
  member: 'notify-member',
  post: 'notify-post',
  forgetPost: 'notify-forget-post',
  relation: 'notify-relation',
} as const;

/** Where a notification sits in its recipient's list: newest event first, then by id. */
export interface NotificationPosition {
  at: Date;
  id: string;
}

export interface NotificationPageRequest {
  after: NotificationPosition | null;
  limit: number;
  kinds: readonly NotificationKind[] | null;
}

export interface NotificationPage {
  items: NotificationRecord[];
  hasMore: boolean;
}

export interface NotificationDependencies {
  content: ContentService;
  graph: Pick<UserGraphService, 'pairs' | 'followedAmong'>;
  users: Pick<UserDirectory, 'getUsers'>;
  readerFilters: Pick<ReaderFilters, 'of'>;
  /** The likes and reposts, given once they are built (they are built with this service's effects). */
  interactions: () => { likes: Interactions; reposts: Interactions };
  /** The durable queue the fanout workers run. */
  enqueue: (tasks: NewTask[]) => Promise<void>;
  changes: ChangePublisher;
  /** How long a worker holds an actor of a group: the queue's lease. */
  leaseMs: number;
}

interface MarkerDocument {
  _id: string;
  /** The newest notification read, as `positionKey` writes it: `$max` never moves it backwards. */
  pos: string;
}

export class NotificationService {
  readonly notifications: Collection<NotificationDocument>;
  readonly groups: NotificationGroups;
  private readonly markers: Collection<MarkerDocument>;
  /** The time actions are stamped with; tests move it to another day. */
  now: () => Date = () => new Date();

  constructor(
    db: Db,
    private readonly deps: NotificationDependencies,
  ) {
    this.notifications = db.collection<NotificationDocument>('notifications');
    this.markers = db.collection<MarkerDocument>('notification_markers');
    this.groups = new NotificationGroups(db, this.notifications, deps.leaseMs, (group) => this.announce(group));
  }

  async ensureIndexes(): Promise<void> {
    await Promise.all([
      this.notifications.createIndexes([
        // A recipient's page, newest first, and the unread count: a range on `at` after the marker.
        { key: { r: 1, at: -1, _id: -1 }, name: 'recipient_newest' },
        { key: { p: 1 }, name: 'post' },
      ]),
      this.groups.ensureIndexes(),
    ]);
  }

  /** The work that rides the fanout queue's workers. */
  readonly handlers: Record<string, TaskHandler> = {
    [notificationTaskKinds.member]: (task) => this.reconcileMember(task.payload as MemberPayload),
    [notificationTaskKinds.post]: (task) => this.notifyPost(task as TaskDocument<PostPayload>),
    [notificationTaskKinds.forgetPost]: (task) => this.forgetPost(task as TaskDocument<PostPayload>),
    [notificationTaskKinds.relation]: (task) => this.relationChanged(task.payload as RelationPayload),
  };

  /** Member tasks claimed together run as one piece of work (see NotificationGroups.reconcileMany). */
  readonly batchHandlers: Record<string, BatchHandler> = {
    [notificationTaskKinds.member]: (tasks) => this.reconcileMembers(tasks as TaskDocument<MemberPayload>[]),
  };

  /** Likes' transitions queue their notification's task (see Interactions: replayed by its repair). */
  readonly likeEffects: InteractionEffects = {
    adding: (edge) => this.enqueueMember('LIKE', edge.p.toHexString(), edge.u, edge.token!, edge.d),
    removing: (edge) => this.enqueueMember('LIKE', edge.p.toHexString(), edge.u, edge.token!, edge.d),
  };

  readonly repostEffects: InteractionEffects = {
    adding: (edge) => this.enqueueMember('REPOST', edge.p.toHexString(), edge.u, edge.token!, edge.d),
    removing: (edge) => this.enqueueMember('REPOST', edge.p.toHexString(), edge.u, edge.token!, edge.d),
  };

  /** `effects` plus the follow's notification task, queued under the pair's lease beside its edge writes. */
  withFollowNotifications(effects: FollowEffects): FollowEffects {
    return {
      followed: (followerId, followeeId) => effects.followed(followerId, followeeId),
      unfollowed: (followerId, followeeId) => effects.unfollowed(followerId, followeeId),
      // Its task reads the pair's wish, recorded before the edges are written.
      besideEdges: async (followerId, followeeId, want) => {
        await Promise.all([effects.besideEdges?.(followerId, followeeId, want), this.enqueueMember('FOLLOW', followeeId, followerId, new ObjectId().toHexString())]);
      },
    };
  }

  /** The task that tells a post's replied-to author and mentioned users; none when there is no one to tell. */
  postTasks(post: PostRecord): NewTask[] {
    if (post.repostOf || (!post.replyTo && mentionedHandles(post.text).length === 0)) return [];
    return [{ _id: `${notificationTaskKinds.post}:${post.id.toHexString()}`, kind: notificationTaskKinds.post, payload: { postId: post.id } }];
  }

  /** The task that removes what a deleted post was about or caused, once it is gone. */
  retractionTasks(post: PostRecord): NewTask[] {
    if (post.repostOf) return [];
    return [{ _id: `${notificationTaskKinds.forgetPost}:${post.id.toHexString()}`, kind: notificationTaskKinds.forgetPost, payload: { postId: post.id } }];
  }

  /** After a mute or block: what `actor` did stops showing in `recipient`'s notifications. */
  async hide(recipient: string, actor: string): Promise<void> {
    await this.deps.enqueue([
      { _id: `${notificationTaskKinds.relation}:${recipient}:${actor}:${new ObjectId().toHexString()}`, kind: notificationTaskKinds.relation, payload: { recipient, actor } },
    ]);
  }

  /** A deleted account's own notifications and read marker. */
  async forgetRecipient(handle: string): Promise<void> {
    await this.groups.forgetRecipient(handle);
    await this.markers.deleteOne({ _id: handle });
  }

  /** A page of the viewer's notifications, newest first. */
  async page(viewerId: string, request: NotificationPageRequest): Promise<NotificationPage> {
    const { after, limit, kinds } = request;
    const beyond = after ? { $or: [{ at: { $lt: after.at } }, { at: after.at, _id: { $lt: after.id } }] } : {};
    const docs = await this.notifications
      .find({ r: viewerId, ...(kinds ? { k: { $in: [...kinds] } } : {}), ...beyond }, { projection: { tk: 0 } })
      .sort({ at: -1, _id: -1 })
      .limit(limit + 1)
      .toArray();
    return { items: docs.slice(0, limit).map(toNotificationRecord), hasMore: docs.length > limit };
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
    return this.notifications.countDocuments({ r: viewerId, ...newer }, { limit: maxUnreadCounted });
  }

  /** Moves the viewer's marker up to `upTo` (never back) and returns what is left unread. */
  async markRead(viewerId: string, upTo: NotificationPosition): Promise<number> {
    const pos = positionKey(upTo);
    for (let attempt = 0; ; attempt++) {
      try {
        await this.markers.updateOne({ _id: viewerId }, { $max: { pos } }, { upsert: true });
        break;
      } catch (error) {
        // Two first marks of one viewer: one insert wins, the other becomes an update.
        if (attempt > 0 || !isDuplicateKeyError(error)) throw error;
      }
    }
    return this.unreadCount(viewerId);
  }

  /** `at`: when the action was taken (a like's own time, so a repaired one keeps its place). */
  private async enqueueMember(kind: GroupedKind, key: string, actor: string, token: string, at = this.now()): Promise<void> {
    const payload: MemberPayload = { kind, key, actor, at };
    await this.deps.enqueue([{ _id: `${notificationTaskKinds.member}:${kind}:${key}:${actor}:${token}`, kind: notificationTaskKinds.member, payload }]);
  }

  private async reconcileMember({ kind, key, actor, at }: MemberPayload): Promise<void> {
    const subject: GroupSubject = { kind, key };
    let target: GroupTarget | null = null;
    await this.groups.reconcile(subject, actor, new Date(at), async () => (target = await this.truth(subject, actor)));
    // Written, then checked: a post deleted meanwhile had its notifications removed before this wrote.
    const postId = (target as GroupTarget | null)?.postId;
    if (postId && !(await this.deps.content.lookups.exists(postId))) await this.groups.forgetPost(postId);
  }

  /** `reconcileMember` for many tasks; returns those left to run alone. */
  private async reconcileMembers(tasks: TaskDocument<MemberPayload>[]): Promise<TaskDocument[]> {
    const requests = tasks.map((task) => ({ task, subject: { kind: task.payload.kind, key: task.payload.key }, actor: task.payload.actor, at: new Date(task.payload.at) }));
    let targets: (GroupTarget | null)[] = [];
    const left = await this.groups.reconcileMany(requests, async (held) => (targets = await this.truths(held)));
    // Written, then checked: a post deleted meanwhile had its notifications removed before this wrote.
    const postIds = targets.flatMap((target) => (target?.postId ? [target.postId] : []));
    const stored = await this.deps.content.lookups.existing(postIds);
    const gone = new Map(postIds.filter((postId) => !stored.has(postId.toHexString())).map((postId) => [postId.toHexString(), postId]));
    await Promise.all([...gone.values()].map((postId) => this.groups.forgetPost(postId)));
    return left.map(({ task }) => task);
  }

  /** `truth` for many actors: the follows among them read in one query. */
  private async truths(requests: readonly { subject: GroupSubject; actor: string }[]): Promise<(GroupTarget | null)[]> {
    const follows = requests.filter(({ subject }) => subject.kind === 'FOLLOW').map(({ subject, actor }) => [actor, subject.key] as const);
    const followed = await this.deps.graph.pairs.wanted(follows);
    return Promise.all(requests.map(({ subject, actor }) => this.truth(subject, actor, followed)));
  }

  /**
   * Whom the actor's like, repost or follow tells now: null when it does not exist or may not tell.
   * `followed`: the wanted follows among many, read together (FollowPairs.wanted); read here otherwise.
   */
  private async truth(subject: GroupSubject, actor: string, followed?: (followerId: string, followeeId: string) => boolean): Promise<GroupTarget | null> {
    if (subject.kind === 'FOLLOW') {
      const follows = followed ?? (await this.deps.graph.pairs.wanted([[actor, subject.key]]));
      if (!follows(actor, subject.key) || !(await this.tells(subject.key, actor))) return null;
      return { recipient: subject.key, postId: null };
    }
    const post = await this.deps.content.lookups.getPost(new ObjectId(subject.key));
    if (!post) return null;
    const edges = subject.kind === 'LIKE' ? this.deps.interactions().likes : this.deps.interactions().reposts;
    if (!(await edges.isOn(post.id, actor)) || !(await this.tells(post.authorId, actor))) return null;
    return { recipient: post.authorId, postId: post.id };
  }

  /** Never one's own action, nor one of an account the recipient muted or blocked, or that blocked them. */
  private async tells(recipient: string, actor: string): Promise<boolean> {
    if (recipient === actor) return false;
    return !(await this.deps.readerFilters.of(recipient)).hides(actor);
  }

  private async notifyPost(task: TaskDocument<PostPayload>): Promise<void> {
    const { content } = this.deps;
    const post = await content.lookups.getPost(task.payload.postId);
    if (!post) {
      if (await content.lookups.wasDeleted(task.payload.postId)) return;
      if (Date.now() - task.createdAt.getTime() < unstoredGraceMs) throw new RetryLater(200, 'the post is not stored yet');
      return;
    }
    const told: { recipient: string; kind: 'REPLY' | 'MENTION'; _id: string }[] = [];
    const parentAuthor = post.replyTo?.authorId ?? null;
    if (parentAuthor && (await this.tells(parentAuthor, post.authorId))) {
      told.push({ recipient: parentAuthor, kind: 'REPLY', _id: `y:${post.id.toHexString()}` });
    }
    const mentioned = mentionedHandles(post.text).filter((handle) => handle !== post.authorId && handle !== parentAuthor && handlePattern.test(handle));
    for (const user of await this.deps.users.getUsers(mentioned)) {
      if (await this.tells(user.handle, post.authorId)) told.push({ recipient: user.handle, kind: 'MENTION', _id: `m:${post.id.toHexString()}:${user.handle}` });
    }
    for (const { recipient, kind, _id } of told) {
      // A limited post does not exist for whoever may not see it: nor does its notification.
      if (!(await this.maySee(recipient, post))) continue;
      const doc: NotificationDocument = { _id, r: recipient, k: kind, at: post.createdAt, n: 1, a: [{ u: post.authorId, at: post.createdAt }], p: post.id, v: 1 };
      const { _id: _, ...fields } = doc;
      const written = await this.notifications.updateOne({ _id }, { $setOnInsert: fields }, { upsert: true }).catch((error: unknown) => {
        if (isDuplicateKeyError(error)) return null;
        throw error;
      });
      if (written?.upsertedCount === 1) await this.announce(doc);
    }
    if (!(await content.lookups.exists(post.id))) await this.groups.forgetPost(post.id);
  }

  private async maySee(recipient: string, post: PostRecord): Promise<boolean> {
    const follows = post.visibility === 'FOLLOWERS' ? await this.deps.graph.followedAmong(recipient, [post.authorId]) : new Set<string>();
    return visibleTo(post, recipient, (authorId) => follows.has(authorId));
  }

  private async forgetPost(task: TaskDocument<PostPayload>): Promise<void> {
    const { postId } = task.payload;
    if (await this.deps.content.lookups.exists(postId)) {
      // Its deleting request removes it in a moment; one that died never will, and the post stays.
      if (Date.now() - task.createdAt.getTime() < unstoredGraceMs) throw new RetryLater(25, 'the post is not deleted yet');
      return;
    }
    await this.groups.forgetPost(postId);
  }

  private async relationChanged({ recipient, actor }: RelationPayload): Promise<void> {
    for (const member of await this.groups.membershipsOf(actor, recipient)) {
      const subject = subjectOfMember(member._id);
      await this.reconcileMember({ ...subject, actor, at: member.at });
    }
    if (!(await this.tells(recipient, actor))) {
      await this.notifications.deleteMany({ r: recipient, k: { $in: ['REPLY', 'MENTION'] }, 'a.u': actor });
    }
  }

  private async announce(group: NotificationDocument): Promise<void> {
    await this.deps.changes.publish(notificationAdded(toNotificationRecord(group)));
  }
}

const subjectKinds: Record<string, GroupedKind> = { l: 'LIKE', r: 'REPOST', f: 'FOLLOW' };

function subjectOfMember(memberKey: string): { kind: GroupedKind; key: string } {
  const [subject] = memberKey.split('|') as [string];
  return { kind: subjectKinds[subject[0]!]!, key: subject.slice(2) };
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
