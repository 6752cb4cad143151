import type { ContentService } from '../content/contentService.js';
import { changed, type ChangePublisher } from '../changes/events.js';
import { AppError } from '../errors.js';
import type { UserAccounts } from '../graph/userAccounts.js';
import type { UserGraphService } from '../graph/userGraphService.js';
import type { MediaService } from '../media/mediaService.js';
import type { TaskDocument } from '../queue/taskQueue.js';
import { RetryLater, type TaskRun } from '../queue/taskWorkers.js';
import type { NotificationService } from '../notifications/notificationService.js';
import type { AccountPayload, QueuedWork, TaskHandlers } from './queuedWork.js';
import type { Publishing } from './publishing.js';
import type { ReaderRelations } from './readerRelations.js';
import { stalledSince } from '../db/stalledWork.js';
import { sleep } from '../sleep.js';
import { noRequest, type Scope } from '../observability/requestScope.js';

/** How long `deleteAccount` waits for a small account to be gone before answering anyway. */
const answerWithinMs = 10_000;
/** An account marked deleted this long without its task lost its request; the sweep queues it again. */
const lostRequestMs = 60_000;
/** Follows ended at once within one sub-task. */
const followConcurrency = 8;
/** Posts and interactions read per step, between checkpoints. */
const stepSize = 100;

/**
 * Deleting an account, through the same durable queue and workers as fanout, in steps that can
 * all be repeated, so a crash anywhere is finished by the next run of the task:
 *
 * 1. the request marks the user deleted (from then on the account is gone for sign-in, tokens and
 *    reads) and queues the task;
 * 2. the task removes the user's posts and reposts from `content` and every timeline (followers
 *    hear `timelinePostRemoved`), and takes back their likes and reposts (counts fixed);
 * 3. it splits the followers into sub-tasks of FANOUT_BATCH that end those follows (counts fixed,
 *    the author's entries leave each timeline), ends the user's own follows, and waits for them;
 * 4. it removes the user's lists, notifications, filters, pins, timeline and pair records, takes the handle
 *    out of the audiences of mentioned-only posts, deletes their images (which stopped answering at
 *    step 1), and last the user document: the handle is free again.
 */
export class AccountRemoval {
  constructor(
    private readonly graph: UserGraphService,
    private readonly accounts: UserAccounts,
    private readonly content: ContentService,
    private readonly publishing: Pick<Publishing, 'removeAuthored' | 'undoInteractionsOf' | 'forgetInteractionsOf'>,
    private readonly relations: Pick<ReaderRelations, 'endFollow' | 'forgetReader'>,
    private readonly changes: ChangePublisher,
    private readonly work: QueuedWork,
    private readonly notifications: Pick<NotificationService, 'forgetRecipient'>,
    private readonly media: Pick<MediaService, 'markGoneOfOwner' | 'deleteOfOwner'>,
  ) {}

  /** The queued work this class does. */
  readonly handlers: Pick<TaskHandlers, 'remove-account'> = { 'remove-account': (task, run) => this.run(task, run) };

  /** Returns once the account is gone, or once it surely will be (a large account takes longer). */
  async remove(handle: string, accountId: string, scope: Scope): Promise<void> {
    if (!(await this.accounts.markDeleted(handle, accountId))) throw new AppError('UNAUTHENTICATED', 'This account no longer exists');
    // No URL of the account's images answers from now on (the task repeats this if the request dies here).
    await this.media.markGoneOfOwner(handle);
    // Other instances hold the account too: its tokens must stop working there as well.
    await this.changes.publish(changed({ users: [handle] }));
    await this.enqueue(handle, accountId, scope);
    const deadline = Date.now() + answerWithinMs;
    while (Date.now() < deadline && (await this.accounts.isBeingDeleted(handle, accountId))) await sleep(20);
  }

  /** Queues the deletions whose request died between marking the user and queueing the task. */
  async requeueLost(): Promise<number> {
    const lost = await this.accounts.deletionsStartedBefore(stalledSince(lostRequestMs), 10);
    for (const { handle, accountId } of lost) await this.enqueue(handle, accountId, noRequest);
    return lost.length;
  }

  private enqueue(handle: string, accountId: string, scope: Scope): Promise<void> {
    return this.work.enqueue([{ _id: rootId(handle, accountId), kind: 'remove-account', payload: { handle, accountId } }], scope);
  }

  private async run(task: TaskDocument<AccountPayload>, run: TaskRun): Promise<void> {
    const { handle, accountId, followers } = task.payload;
    if (!(await this.accounts.isBeingDeleted(handle, accountId))) return;
    if (followers) return this.endFollows(followers, handle, run);
    await this.media.markGoneOfOwner(handle);

    for (let posts = await this.content.scans.postsBy(handle, stepSize); posts.length > 0; posts = await this.content.scans.postsBy(handle, stepSize)) {
      await run.checkpoint();
      for (const post of posts) await this.publishing.removeAuthored(post);
    }
    while ((await this.publishing.undoInteractionsOf(handle, stepSize)) > 0) await run.checkpoint();
    await this.publishing.forgetInteractionsOf(handle);

    let index = 0;
    for await (const batch of this.graph.followerIdBatches(handle, this.work.options.batchSize)) {
      await run.checkpoint();
      // The sub-tasks carry the origin of the task that split them: the request that deleted the account.
      const subTask = { _id: `${rootId(handle, accountId)}:${index++}`, kind: 'remove-account', payload: { handle, accountId, followers: batch }, ...(task.origin ? { origin: task.origin } : {}) } as const;
      await this.work.enqueue([subTask], noRequest);
    }
    await this.endFollows(await this.graph.followingIds(handle), handle, run, true);
    const pending = await this.work.queue.tasks.countDocuments({ _id: { $regex: `^${escapeRegex(rootId(handle, accountId))}:` } }, { limit: 1 });
    if (pending > 0) throw new RetryLater(200, 'followers are still being removed');

    // Their follows, and so every membership of their lists, ended above.
    await this.graph.lists.forgetOwner(handle);
    await this.notifications.forgetRecipient(handle);
    await this.relations.forgetReader(handle);
    await this.content.leaveAudiences(handle);
    await this.content.pins.forget(handle);
    // Its images, attached or not, and their bytes: before the handle is free for someone else.
    await this.media.deleteOfOwner(handle);
    await this.accounts.removeDeletedUser(handle, accountId);
  }

  /** `handle`'s follows with these users end, `ownFollows` telling which way they point. */
  private async endFollows(users: readonly string[], handle: string, run: TaskRun, ownFollows = false): Promise<void> {
    for (let start = 0; start < users.length; start += followConcurrency) {
      await run.checkpoint();
      await Promise.all(
        users
          .slice(start, start + followConcurrency)
          .map((other) => (ownFollows ? this.relations.endFollow(handle, other) : this.relations.endFollow(other, handle, true))),
      );
    }
  }
}

const rootId = (handle: string, accountId: string) => `remove-account:${handle}:${accountId}`;
const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
