import { notificationAdded, type ChangeEvent } from '../changes/events.js';
import type { InteractionDocument, InteractionEffects } from '../content/interactions.js';
import type { FollowGroupEffects } from '../graph/followPairs.js';
import type { ReaderFilters } from '../graph/readerFilters.js';
import {
  followDay,
  groupPeriod,
  notificationId,
  toNotificationRecord,
  type GroupMemberSource,
  type GroupedKind,
} from '../records/notifications.js';
import type { ObjectId } from 'mongodb';
import type { PostRef } from '../records/posts.js';
import type { NotificationGroups } from './notificationGroups.js';

export interface GroupMembershipDependencies {
  groups: NotificationGroups;
  readerFilters: Pick<ReaderFilters, 'of'>;
  /** NOTIFICATION_RETENTION_DAYS: the span of a post's LIKE and REPOST groups (see `groupPeriod`). */
  retentionMs: number;
}

/**
 * How a like, a repost or a follow joins and leaves its notification group: as part of its own
 * transition (the like's edge, the follow's pair), in the request, guarded by the transition's
 * token. No queue, no lease of its own: the transition already serialises one actor's changes of
 * one subject, and records them durably for the sweep that finishes a dead request's work.
 */
export class GroupMemberships {
  /** The time follows are stamped with, which decides their day's group; tests move it to another day. */
  now: () => Date = () => new Date();

  constructor(private readonly deps: GroupMembershipDependencies) {}

  readonly likeEffects: InteractionEffects = this.interactionEffects('LIKE');
  readonly repostEffects: InteractionEffects = this.interactionEffects('REPOST');

  /** The follow pair's part: the day's FOLLOW group of the followed. */
  readonly followEffects: FollowGroupEffects = {
    groupOf: async (followerId, followeeId) =>
      (await this.tells(followeeId, followerId)) ? notificationId({ kind: 'FOLLOW', recipient: followeeId, day: followDay(this.now()) }) : null,
    now: () => this.now(),
    join: async ({ group, token, at }, followerId, followeeId) => {
      const joined = await this.deps.groups.join({ group, token, actor: followerId, at, kind: 'FOLLOW', recipient: followeeId, postId: null });
      return joined && toNotificationRecord(joined);
    },
    leave: ({ group, token }, followerId, followeeId, members) => this.deps.groups.leave({ group, token, actor: followerId, recipient: followeeId }, members),
    applied: (group, followeeId, token) => this.deps.groups.applied(group, followeeId, token),
    pruneGroupTokens: (tokensByGroup) => this.deps.groups.pruneTokens(tokensByGroup),
  };

  /** The group a like or repost of this post joins now. */
  postGroup(kind: Extract<GroupedKind, 'LIKE' | 'REPOST'>, postId: ObjectId): string {
    return notificationId({ kind, postId, period: groupPeriod(this.now(), this.deps.retentionMs) });
  }

  /** Never one's own action, nor one of an account the recipient muted or blocked, or that blocked them. */
  async tells(recipient: string, actor: string): Promise<boolean> {
    if (recipient === actor) return false;
    return !(await this.deps.readerFilters.of(recipient)).hides(actor);
  }

  private interactionEffects(kind: Extract<GroupedKind, 'LIKE' | 'REPOST'>): InteractionEffects {
    const leave = async (edge: InteractionDocument, members: GroupMemberSource): Promise<ChangeEvent[]> => {
      if (edge.g) await this.deps.groups.leave({ group: edge.g, token: edge.token!, actor: edge.u, recipient: edge.r! }, members);
      return [];
    };
    return {
      groupOf: async (post: PostRef, userId: string) => ((await this.tells(post.authorId, userId)) ? this.postGroup(kind, post.id) : null),
      // The post's count beside the group's join: neither waits for the other.
      adding: async (edge, count) => {
        const group = edge.gc?.to;
        const [, joined] = await Promise.all([
          count(),
          group && this.deps.groups.join({ group, token: edge.token!, actor: edge.u, at: edge.gc!.at, kind, recipient: edge.r!, postId: edge.p }),
        ]);
        return joined ? [notificationAdded(toNotificationRecord(joined))] : [];
      },
      removing: leave,
      leaving: leave,
      pruneGroupTokens: (tokensByGroup) => this.deps.groups.pruneTokens(tokensByGroup),
    };
  }
}
