import type { AccountSettings } from '../auth/accountSettings.js';
import { bioOrNull, displayNameOrNull } from '../auth/profileRules.js';
import { AppError } from '../errors.js';
import type { UserGraphService } from '../graph/userGraphService.js';
import type { RequestPage, RequestPosition } from '../graph/followPairs.js';
import type { ListPageRequest } from '../records/pages.js';
import type { TaskDocument } from '../queue/taskQueue.js';
import { RetryLater, type TaskRun } from '../queue/taskWorkers.js';
import type { UserRecord } from '../records/users.js';
import type { QueuedWork, TaskHandlers, UnlockPayload } from './queuedWork.js';
import type { ReaderRelations } from './readerRelations.js';
import type { Scope } from '../observability/requestScope.js';

/** Requests approved per step of an unlock's task, between checkpoints. */
const approvalStep = 50;
/**
 * An unlock's task is queued before the account is unlocked, so that a request dying in between
 * leaves nothing behind; the task waits this long for the unlock, then takes the account as
 * locked again (or never unlocked).
 */
const unlockGraceMs = 60_000;

/**
 * Locked accounts: a follow of one is a request (FollowPairs records it on the pair) that its
 * owner approves or rejects; unlocking approves every request through the durable queue, so an
 * account with thousands waiting answers at once and a crash loses none.
 */
export class FollowRequests {
  constructor(
    private readonly graph: Pick<UserGraphService, 'requestsOf' | 'isLocked'>,
    private readonly relations: Pick<ReaderRelations, 'approve' | 'reject'>,
    private readonly settings: Pick<AccountSettings, 'updateProfile'>,
    private readonly work: Pick<QueuedWork, 'enqueue'>,
  ) {}

  /** The queued work this class does. */
  readonly handlers: Pick<TaskHandlers, 'approve-requests'> = { 'approve-requests': (task, run) => this.approveAll(task, run) };

  /**
   * A profile change, `locked` included. Unlocking queues the approval of every waiting request
   * before the account is unlocked: a request that dies after queueing leaves a task that finds
   * the account still locked and gives up; one that dies before leaves the account locked.
   */
  async updateProfile(handle: string, input: { displayName?: string | null; bio?: string | null; locked?: boolean | null }, scope: Scope): Promise<UserRecord> {
    // Bad input is refused before the task is queued: nothing is left behind.
    if (input.displayName != null) displayNameOrNull(input.displayName);
    if (input.bio != null) bioOrNull(input.bio);
    if (input.locked === false && (await this.graph.isLocked(handle))) {
      await this.work.enqueue([{ _id: `approve-requests:${handle}:${Date.now()}`, kind: 'approve-requests', payload: { handle } }], scope);
    }
    return this.settings.updateProfile(handle, input);
  }

  approve(viewerId: string, requester: string): Promise<UserRecord> {
    return this.relations.approve(viewerId, requester);
  }

  reject(viewerId: string, requester: string): Promise<UserRecord> {
    return this.relations.reject(viewerId, requester);
  }

  /** The requests waiting for the viewer, oldest first. */
  page(viewerId: string, request: ListPageRequest<RequestPosition>): Promise<RequestPage> {
    return this.graph.requestsOf(viewerId, request);
  }

  private async approveAll(task: TaskDocument<UnlockPayload>, run: TaskRun): Promise<void> {
    const { handle } = task.payload;
    for (;;) {
      if (await this.graph.isLocked(handle)) {
        if (Date.now() - task.createdAt.getTime() < unlockGraceMs) throw new RetryLater(200, 'the account is not unlocked yet');
        return;
      }
      const { requests } = await this.graph.requestsOf(handle, { direction: 'forward', from: null, limit: approvalStep });
      if (requests.length === 0) return;
      for (const { followerId } of requests) {
        // Taken back, rejected or approved meanwhile (by a follow that saw the unlock): nothing to do.
        // A requester being deleted cannot follow: their request goes (their deletion would take it).
        await this.relations.approve(handle, followerId).catch(async (error: unknown) => {
          if (!(error instanceof AppError && error.code === 'NOT_FOUND')) throw error;
          await this.relations.reject(handle, followerId).catch(() => {});
        });
      }
      await run.checkpoint();
    }
  }
}
