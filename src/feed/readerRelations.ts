import type { RateLimits } from '../auth/rateLimits.js';
import { changed, type ChangeParts, type ChangePublisher } from '../changes/events.js';
import { AppError, badInput, notFound } from '../errors.js';
import type { ReaderFilters } from '../graph/readerFilters.js';
import type { KeywordFilterRecord, ReaderView } from '../graph/readerView.js';
import type { UserDirectory } from '../graph/userDirectory.js';
import type { UserGraphService } from '../graph/userGraphService.js';
import type { UserRecord } from '../records/users.js';
import type { FollowEffects } from '../graph/followPairs.js';
import type { GroupMemberships } from '../notifications/groupMemberships.js';
import { relationNotificationTasks, type NotificationService } from '../notifications/notificationService.js';
import type { FeedBackend } from './feedBackend.js';
import type { QueuedWork } from './queuedWork.js';
import type { Scope } from '../observability/requestScope.js';

/** An approval that finds its request gone was answered by someone else: nothing is left to do. */
function ignoreNotFound(error: unknown): void {
  if (!(error instanceof AppError && error.code === 'NOT_FOUND')) throw error;
}

/** Whom a reader follows, mutes and blocks, and which phrases they filter out. */
export interface RelationsOfReader {
  follow(followerId: string, followeeId: string, scope: Scope): Promise<UserRecord>;
  unfollow(followerId: string, followeeId: string): Promise<UserRecord>;
  mute(viewerId: string, handle: string, scope: Scope): Promise<UserRecord>;
  unmute(viewerId: string, handle: string): Promise<UserRecord>;
  block(viewerId: string, handle: string, scope: Scope): Promise<UserRecord>;
  unblock(viewerId: string, handle: string): Promise<UserRecord>;
  addKeywordFilter(viewerId: string, phrase: string): Promise<KeywordFilterRecord>;
  removeKeywordFilter(viewerId: string, id: string): Promise<boolean>;
  filtersOf(readerId: string): Promise<ReaderView>;
}

export interface ReaderRelationsDependencies {
  graph: UserGraphService;
  users: Pick<UserDirectory, 'getUser'>;
  readerFilters: ReaderFilters;
  /** Runs a follow's timeline work under the pair's lease (FollowEffects). */
  backend: FeedBackend;
  rateLimits: RateLimits;
  changes: ChangePublisher;
  /** A follow joins the followee's notification group under the pair's lease. */
  memberships: Pick<GroupMemberships, 'followEffects'>;
  /** Mutes and blocks queue taking back what was notified. */
  work: Pick<QueuedWork, 'enqueue'>;
  /** A follow request tells the account asked. */
  notifications: Pick<NotificationService, 'notifyFollowRequest'>;
}

/**
 * A reader's relations to other users: follows (with their timeline work) and the filters that
 * hide posts (mutes, blocks, keywords). Each change is announced on the change bus, so every
 * instance's caches and open subscriptions follow it.
 */
export class ReaderRelations implements RelationsOfReader {
  readonly readerFilters: ReaderFilters;
  private readonly graph: UserGraphService;
  /** The follow's timeline work and its notification group, run under the pair's lease. */
  readonly followEffects: FollowEffects;

  constructor(private readonly deps: ReaderRelationsDependencies) {
    this.readerFilters = deps.readerFilters;
    this.graph = deps.graph;
    const { backend } = deps;
    this.followEffects = {
      followed: (...pair) => backend.followed(...pair),
      ...(backend.removeUnfollowed ? { removeUnfollowed: (unfollows) => backend.removeUnfollowed!(unfollows) } : {}),
      group: deps.memberships.followEffects,
      announcer: deps.changes,
    };
  }

  filtersOf(readerId: string): Promise<ReaderView> {
    return this.readerFilters.of(readerId);
  }

  /** Returns the followed user with fresh counts. Announced by the pair's write that applies it (FollowEffects.announcer). */
  async follow(followerId: string, followeeId: string, scope: Scope): Promise<UserRecord> {
    const checks = Promise.all([this.deps.rateLimits.follow(followerId, scope), this.readerFilters.assertNotBlocked(followerId, followeeId, 'follow')]);
    // Unhandled only until the graph awaits it, which it does before any write.
    checks.catch(() => {});
    const followed = await this.graph.follow(followerId, followeeId, this.followEffects, checks);
    if (followed.requested) return this.requested(followerId, followeeId, followed.requestedAt!);
    const view = await this.readerFilters.of(followerId);
    // A block recorded while this follow was applied wins: its unfollow may have run first.
    if (view.isBlockedEitherWay(followeeId)) {
      await this.graph.unfollow(followerId, followeeId, this.followEffects);
      throw new AppError('FORBIDDEN', `You cannot follow ${followeeId}: one of you blocked the other`);
    }
    return followed.followee ?? this.freshUser(followeeId);
  }

  /**
   * A follow of an account that approves its followers waits as a request. The account is told;
   * then two races are closed, each by reading after writing: a block recorded meanwhile removes the
   * request (as it removes a follow), and an unlock whose approval of every request ran before this
   * request was written is caught here, and the request approved at once.
   */
  private async requested(followerId: string, followeeId: string, since: Date): Promise<UserRecord> {
    const [view, locked] = await Promise.all([this.readerFilters.of(followerId), this.graph.isLocked(followeeId), this.deps.notifications.notifyFollowRequest(followeeId, followerId, since)]);
    if (view.isBlockedEitherWay(followeeId)) {
      await this.graph.reject(followeeId, followerId).catch(() => {});
      throw new AppError('FORBIDDEN', `You cannot follow ${followeeId}: one of you blocked the other`);
    }
    if (!locked) await this.approve(followeeId, followerId).catch((error: unknown) => ignoreNotFound(error));
    return this.freshUser(followeeId);
  }

  /**
   * `followeeId` approves `followerId`'s request: the follow is made with everything a follow does
   * (counts, backfill, notification group, live). NOT_FOUND when no request stands.
   */
  async approve(followeeId: string, followerId: string): Promise<UserRecord> {
    await this.graph.approve(followeeId, followerId, this.followEffects);
    return this.freshUser(followerId);
  }

  /** `followeeId` rejects `followerId`'s request: it goes, and nobody is told. NOT_FOUND when none stands. */
  async reject(followeeId: string, followerId: string): Promise<UserRecord> {
    await this.graph.reject(followeeId, followerId);
    return this.freshUser(followerId);
  }

  /**
   * Not rate limited: an unfollow only takes away what a follow, which is limited, made, and tells
   * nobody; like a read, it costs only its caller's own requests.
   */
  async unfollow(followerId: string, followeeId: string): Promise<UserRecord> {
    const unfollowed = await this.graph.unfollow(followerId, followeeId, this.followEffects);
    return unfollowed.followee ?? this.freshUser(followeeId);
  }

  /** What `actor` did stops showing in `recipient`'s notifications. */
  private hide(recipient: string, actor: string, scope: Scope): Promise<void> {
    return this.deps.work.enqueue(relationNotificationTasks(recipient, actor), scope);
  }

  async mute(viewerId: string, handle: string, scope: Scope): Promise<UserRecord> {
    const user = await this.otherUser(viewerId, handle, 'mute');
    await this.readerFilters.mute(viewerId, handle);
    await this.announce({ filters: [viewerId] });
    await this.hide(viewerId, handle, scope);
    return user;
  }

  async unmute(viewerId: string, handle: string): Promise<UserRecord> {
    const user = await this.otherUser(viewerId, handle, 'unmute');
    await this.readerFilters.unmute(viewerId, handle);
    await this.announce({ filters: [viewerId] });
    return user;
  }

  /** Recorded first, so no follow can slip in between; then the follows go both ways. */
  async block(viewerId: string, handle: string, scope: Scope): Promise<UserRecord> {
    await this.otherUser(viewerId, handle, 'block');
    await this.readerFilters.block(viewerId, handle);
    await this.announce({ filters: [viewerId, handle] });
    for (const [followerId, followeeId] of [[viewerId, handle], [handle, viewerId]] as const) {
      await this.graph.unfollow(followerId, followeeId, this.followEffects);
      await this.hide(followeeId, followerId, scope);
    }
    return this.freshUser(handle);
  }

  async unblock(viewerId: string, handle: string): Promise<UserRecord> {
    const user = await this.otherUser(viewerId, handle, 'unblock');
    await this.readerFilters.unblock(viewerId, handle);
    await this.announce({ filters: [viewerId, handle] });
    return user;
  }

  async addKeywordFilter(viewerId: string, phrase: string): Promise<KeywordFilterRecord> {
    const filter = await this.readerFilters.addKeywordFilter(viewerId, phrase);
    await this.announce({ filters: [viewerId] });
    return filter;
  }

  async removeKeywordFilter(viewerId: string, id: string): Promise<boolean> {
    const removed = await this.readerFilters.removeKeywordFilter(viewerId, id);
    await this.announce({ filters: [viewerId] });
    return removed;
  }

  /**
   * Ends one follow of a deleted account, counts and timeline included, and tells live subscribers.
   * A deleted followee's notifications go with it, so ending its followers' follows queues none.
   */
  async endFollow(followerId: string, followeeId: string, followeeGone = false): Promise<void> {
    const { group, ...withoutGroup } = this.followEffects;
    await this.graph.endFollow(followerId, followeeId, followeeGone ? withoutGroup : this.followEffects);
    // The entries go now, not in the sweep's next pass: the removal forgets the account's pairs,
    // marks and all, when it ends. No follow back can race it: one of the two accounts is going.
    await this.deps.backend.removeUnfollowed?.([{ followerId, followeeId }]);
  }

  /** The last traces of a deleted reader: their filters, their place in others', their timeline. */
  async forgetReader(userId: string): Promise<void> {
    await this.readerFilters.forget(userId);
    await this.deps.backend.dropTimeline(userId);
    await this.graph.pairs.forget(userId);
    await this.announce({ users: [userId], allFilters: true });
  }

  /** Every instance forgets what it holds of these readers' filters or these users. */
  private announce(change: ChangeParts): Promise<void> {
    return this.deps.changes.publish(changed(change));
  }

  private async otherUser(viewerId: string, handle: string, action: string): Promise<UserRecord> {
    if (viewerId === handle) throw badInput(`You cannot ${action} yourself`);
    return this.freshUser(handle);
  }

  private async freshUser(handle: string): Promise<UserRecord> {
    const user = await this.deps.users.getUser(handle);
    if (!user) throw notFound(`No user with handle "${handle}"`);
    return user;
  }
}
