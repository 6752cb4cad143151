import { ObjectId, type Collection } from 'mongodb';
import { changed, type ChangePublisher } from '../changes/events.js';
import type { ContentService } from '../content/contentService.js';
import type { InteractionDocument } from '../content/interactions.js';
import { notFound } from '../errors.js';
import type { InteractionStores } from '../feed/publishing.js';
import type { QueuedWork, SuspensionPayload, TaskHandlers } from '../feed/queuedWork.js';
import type { UserDirectory } from '../graph/userDirectory.js';
import { existingUsers as live } from '../graph/userDirectory.js';
import type { UserGraphService } from '../graph/userGraphService.js';
import type { HiddenIn, NotificationGroups } from '../notifications/notificationGroups.js';
import type { TaskDocument } from '../queue/taskQueue.js';
import { RetryLater, type TaskRun } from '../queue/taskWorkers.js';
import { assertHandle, toUserRecord, type UserDocument, type UserRecord } from '../records/users.js';
import { plannedIndexes } from '../db/shardPlan.js';
import type { AuditLog } from './auditLog.js';
import type { Scope } from '../observability/requestScope.js';

/** Counterparts changed per write while a suspension's effects are taken out. */
const hideBatch = 1000;
/**
 * A suspension's task is queued before the account is marked, so a request dying in between
 * leaves nothing behind; the task waits this long for the mark, then takes it as never made.
 */
const markGraceMs = 60_000;

/**
 * The second pass of a suspension, once every request that read the account before it was marked
 * has finished (a follow pair's lease is 10 s) or been finished by the repair sweep.
 */
const secondPassMs = 15_000;

/** The token a suspension leaves on what it took its effects out of, one per kind of count. */
const tokenOf = (episode: string, count: 'followers' | 'following' | 'likes' | 'reposts') => `${episode}:${count}`;
/**
 * The tokens a suspension leaves on the posts its replies answer or its quotes quote: one per reply
 * or quote, named by it, as one account may answer one post many times. All of one kind share a prefix.
 */
const answerPrefix = (episode: string, count: 'replies' | 'quotes') => `${episode}:${count}:`;
const answerToken = (episode: string, count: 'replies' | 'quotes', answerId: ObjectId) => answerPrefix(episode, count) + answerId.toHexString();
const answerOf = (token: string) => new ObjectId(token.slice(token.lastIndexOf(':') + 1));
/** The token a suspension leaves on the notification groups (FOLLOW, LIKE, REPOST) its account is a member of: one membership per group. */
const actorToken = (episode: string) => `${episode}:actor`;
/** The token a suspension leaves on the notifications its posts made (a reply's, a mention's, a quote's). */
const postsToken = (episode: string) => `${episode}:posts`;

/**
 * Suspending an account hides it from everyone without deleting anything, and unsuspending brings
 * all of it back exactly:
 *
 * - the account: one write marks it suspended and ends every token (its live connections close on
 *   the announcement); log-in answers ACCOUNT_SUSPENDED; every read of users (UserDirectory)
 *   leaves it out, so its profile, posts, reposts and replies are gone from every read path as an
 *   account being deleted is, at no cost to any read; nobody can like, repost, answer, quote or
 *   bookmark its posts meanwhile (PostVisibility.mayActOn);
 * - its effects on others' counts (the followers of those it follows, the following counts of its
 *   followers, the likes and reposts of the posts it liked or reposted, the replies and quotes of
 *   the posts it answered or quoted, the actors of the notification groups it is in) and the
 *   notifications its posts made are taken out through the durable queue, each counterpart once:
 *   its `$inc` is guarded by the suspension's token, which the counterpart keeps while suspended.
 *   Unsuspending puts back exactly what carries the token, one `updateMany` per kind (one write
 *   per reply or quote), whatever changed meanwhile (a counterpart deleted, a post removed).
 */
export class Suspensions {
  private readonly users: Collection<UserDocument>;

  constructor(
    private readonly deps: {
      directory: Pick<UserDirectory, 'users' | 'forget'>;
      graph: Pick<UserGraphService, 'followerIdBatches' | 'following' | 'pairs'>;
      groups: Pick<NotificationGroups, 'ensureHiddenIndex' | 'hideActor' | 'hideMadeBy' | 'carrying' | 'restoreEach' | 'restore'>;
      interactions: InteractionStores;
      content: Pick<ContentService, 'counters' | 'lookups' | 'scans'>;
      work: Pick<QueuedWork, 'enqueue' | 'queue'>;
      audit: AuditLog;
      changes: ChangePublisher;
    },
  ) {
    this.users = deps.directory.users;
  }

  /** The queued work this class does. */
  readonly handlers: Pick<TaskHandlers, 'suspend-account'> = { 'suspend-account': (task, run) => this.run(task, run) };

  async ensureIndexes(): Promise<void> {
    await Promise.all([
      this.deps.content.counters.ensureHiddenIndex(),
      this.deps.groups.ensureHiddenIndex(),
      plannedIndexes(this.users, [{ key: { hidden: 1 }, name: 'suspension_hidden', partialFilterExpression: { hidden: { $exists: true } } }]),
    ]);
  }

  /** Suspends `handle` (already suspended: nothing changes). The caller records it in the audit log. */
  async suspend(handle: string, scope: Scope): Promise<void> {
    assertHandle(handle);
    const episode = new ObjectId().toHexString();
    await this.deps.work.enqueue([
      { _id: taskId(handle, episode, false), kind: 'suspend-account', payload: { handle, episode } },
      { _id: againId(handle, episode), kind: 'suspend-account', payload: { handle, episode, again: true }, runAt: new Date(Date.now() + secondPassMs) },
    ], scope);
    const marked = await this.users.findOneAndUpdate(
      { _id: handle, ...live, suspended: { $exists: false } },
      { $set: { suspended: { e: episode, at: new Date() } }, $inc: { tokenGeneration: 1 } },
      { projection: { _id: 1 } },
    );
    if (!marked && !(await this.users.findOne({ _id: handle, ...live }, { projection: { _id: 1 } }))) throw notFound(`No user with handle "${handle}"`);
    await this.announce(handle);
  }

  /** Brings a suspended account back with everything it had. NOT_FOUND for an unknown account; one not suspended is returned as it is. */
  async unsuspend(handle: string, staffHandle: string, scope: Scope): Promise<UserRecord> {
    assertHandle(handle);
    const user = await this.users.findOne({ _id: handle, ...live }, { projection: { passwordHash: 0 } });
    if (!user) throw notFound(`No user with handle "${handle}"`);
    if (!user.suspended) return toUserRecord(user);
    const episode = user.suspended.e;
    await this.deps.audit.record({ _id: `unsuspend:${handle}:${episode}`, who: staffHandle, what: 'UNSUSPEND_ACCOUNT', account: handle });
    await this.deps.work.enqueue([{ _id: taskId(handle, episode, true), kind: 'suspend-account', payload: { handle, episode, undo: true } }], scope);
    const back = await this.users.findOneAndUpdate({ _id: handle, 'suspended.e': episode }, { $unset: { suspended: '' } }, { returnDocument: 'after', projection: { passwordHash: 0 } });
    await this.announce(handle);
    return toUserRecord(back ?? user);
  }

  /** An account as staff see it, suspended or not (everyone else's reads leave a suspended one out). */
  async accountForStaff(handle: string): Promise<UserRecord | null> {
    const user = await this.users.findOne({ _id: handle, ...live }, { projection: { passwordHash: 0 } });
    return user && toUserRecord(user);
  }

  private async announce(handle: string): Promise<void> {
    this.deps.directory.forget([handle]);
    await this.deps.changes.publish(changed({ users: [handle] }));
  }

  private async run(task: TaskDocument<SuspensionPayload>, run: TaskRun): Promise<void> {
    const { handle, episode, undo } = task.payload;
    const user = await this.users.findOne({ _id: handle }, { projection: { suspended: 1 } });
    const suspended = user?.suspended?.e === episode;
    if (undo) {
      // The suspension's own passes stop at their next batch once the mark is gone; they must be
      // done before what carries the token is counted back, or a batch written later stays hidden.
      // One not claimed yet is dropped: it would find the mark gone and do nothing.
      const passes = { _id: { $in: [taskId(handle, episode, false), againId(handle, episode)] } };
      if (!suspended) await this.deps.work.queue.tasks.deleteMany({ ...passes, claim: null });
      if (await this.deps.work.queue.tasks.findOne(passes, { projection: { _id: 1 } })) {
        throw new RetryLater(100, 'the suspension is still taking its effects out');
      }
      if (suspended) {
        // Queued just before the mark is removed: wait for it; a request that died in between left the account suspended.
        if (Date.now() - task.createdAt.getTime() < markGraceMs) throw new RetryLater(200, 'the mark is not removed yet');
        return;
      }
      return this.restore(episode);
    }
    if (!suspended) {
      const young = Date.now() - task.createdAt.getTime() < markGraceMs;
      if (!task.payload.again && user && !user.suspended && young) throw new RetryLater(200, 'the account is not marked yet');
      return;
    }
    if (task.payload.again) await this.reconcile(handle, episode);
    await this.hide(handle, episode, run);
  }

  /**
   * The second pass's first half: a follow or like that a request in flight took back after the
   * first pass counted it out was counted out twice; its counterpart gets one back and loses the
   * token. (The `hide` that follows counts out what a request in flight added after the first pass.)
   */
  private async reconcile(handle: string, episode: string): Promise<void> {
    const directions = [
      ['followers', 'followerCount', (others: string[]) => ({ _f: handle, _t: { $in: others } }), (edge: { _f: string; _t: string }) => edge._t],
      ['following', 'followingCount', (others: string[]) => ({ _f: { $in: others }, _t: handle }), (edge: { _f: string; _t: string }) => edge._f],
    ] as const;
    for (const [kind, count, edgesOf, otherOf] of directions) {
      const token = tokenOf(episode, kind);
      const carrying = (await this.users.find({ hidden: token }, { projection: { _id: 1 } }).toArray()).map((user) => user._id);
      for (let start = 0; start < carrying.length; start += hideBatch) {
        const batch = carrying.slice(start, start + hideBatch);
        const still = new Set((await this.deps.graph.following.find(edgesOf(batch), { projection: { _id: 0, _f: 1, _t: 1 } }).toArray()).map(otherOf));
        const gone = batch.filter((other) => !still.has(other));
        if (gone.length === 0) continue;
        await this.users.bulkWrite(
          gone.map((other) => ({ updateOne: { filter: { _id: other, hidden: token }, update: { $inc: { [count]: 1, countVersion: 1 }, $pull: { hidden: token } } } })),
          { ordered: false },
        );
        this.deps.directory.forget(gone);
        await this.deps.changes.publish(changed({ users: gone }));
      }
    }
    for (const [kind, interactions] of [['likes', this.deps.interactions.likes], ['reposts', this.deps.interactions.reposts]] as const) {
      const token = tokenOf(episode, kind);
      const posts = await this.deps.content.counters.carrying(token);
      for (let start = 0; start < posts.length; start += hideBatch) {
        const batch = posts.slice(start, start + hideBatch);
        const still = new Set((await interactions.edges.find({ u: handle, p: { $in: batch }, state: 'on' }, { projection: { p: 1 } }).toArray()).map((edge) => edge.p.toHexString()));
        await this.deps.content.counters.restoreEach(batch.filter((postId) => !still.has(postId.toHexString())), kind, token);
      }
    }
    // A reply or quote removed meanwhile (staff removing it) was taken off its count by its
    // removal too: the post it answered gets one back and loses the token.
    for (const kind of ['replies', 'quotes'] as const) {
      const carried = await this.deps.content.counters.carryingPrefixed(answerPrefix(episode, kind));
      for (let start = 0; start < carried.length; start += hideBatch) {
        const batch = carried.slice(start, start + hideBatch);
        const still = await this.deps.content.lookups.existing(batch.map((entry) => answerOf(entry.token)));
        await this.deps.content.counters.restoreEachToken(batch.filter((entry) => !still.has(answerOf(entry.token).toHexString())), kind);
      }
    }
    // A follow, like or repost taken back meanwhile left its group by itself: the group gets its count back.
    const token = actorToken(episode);
    const groups = await this.deps.groups.carrying(token);
    for (let start = 0; start < groups.length; start += hideBatch) {
      const batch = groups.slice(start, start + hideBatch);
      const still = await this.membershipsOf(handle, batch);
      await this.deps.groups.restoreEach(batch.filter((group) => !still.has(group.group)), token);
    }
  }

  /** Which of these groups the account is a member of now: its follow pair's or its like's or repost's group. */
  private async membershipsOf(handle: string, groups: readonly (HiddenIn & { kind: string; postId: ObjectId | null })[]): Promise<Set<string>> {
    const follows = groups.filter((group) => group.kind === 'FOLLOW').map((group) => `${handle} ${group.recipient}`);
    const edgeKeys = (kind: string) => groups.filter((group) => group.kind === kind && group.postId).map((group) => `${group.postId!.toHexString()}:${handle}`);
    const [pairs, likes, reposts] = await Promise.all([
      follows.length === 0 ? [] : this.deps.graph.pairs.pairs.find({ _id: { $in: follows } }, { projection: { g: 1 } }).toArray(),
      edgeKeys('LIKE').length === 0 ? [] : this.deps.interactions.likes.edges.find({ _id: { $in: edgeKeys('LIKE') }, u: handle }, { projection: { g: 1 } }).toArray(),
      edgeKeys('REPOST').length === 0 ? [] : this.deps.interactions.reposts.edges.find({ _id: { $in: edgeKeys('REPOST') }, u: handle }, { projection: { g: 1 } }).toArray(),
    ]);
    return new Set([...pairs, ...likes, ...reposts].flatMap((member) => (member.g ? [member.g] : [])));
  }

  /** Takes the suspended account's effects out of others' counts, each once. Stops when the account is unsuspended meanwhile. */
  private async hide(handle: string, episode: string, run: TaskRun): Promise<void> {
    const stillSuspended = async () => (await this.users.findOne({ _id: handle }, { projection: { suspended: 1 } }))?.suspended?.e === episode;
    // Those it follows lose a follower.
    let after: string | null = null;
    for (;;) {
      const edges: { _t: string }[] = await this.deps.graph.following
        .find({ _f: handle, ...(after === null ? {} : { _t: { $gt: after } }) }, { projection: { _id: 0, _t: 1 } })
        .sort({ _f: 1, _t: 1 })
        .limit(hideBatch)
        .toArray();
      if (edges.length === 0) break;
      if (!(await stillSuspended())) return;
      await this.hideFromUsers(edges.map((edge) => edge._t), 'followerCount', tokenOf(episode, 'followers'));
      // Nor does it count in their FOLLOW notification groups.
      const pairs = await this.deps.graph.pairs.pairs
        .find({ _id: { $in: edges.map((edge) => `${handle} ${edge._t}`) }, g: { $exists: true } }, { projection: { _id: 0, t: 1, g: 1 } })
        .toArray();
      await this.deps.groups.hideActor(pairs.map((pair) => ({ group: pair.g!, recipient: pair.t })), actorToken(episode));
      after = edges.at(-1)!._t;
      await run.checkpoint();
    }
    // Its followers follow one account fewer.
    for await (const batch of this.deps.graph.followerIdBatches(handle, hideBatch)) {
      if (!(await stillSuspended())) return;
      await this.hideFromUsers(batch, 'followingCount', tokenOf(episode, 'following'));
      await run.checkpoint();
    }
    // The posts it liked or reposted count one fewer.
    for (const [kind, interactions] of [['likes', this.deps.interactions.likes], ['reposts', this.deps.interactions.reposts]] as const) {
      let last: string | null = null;
      for (;;) {
        const edges: InteractionDocument[] = await interactions.edges
          .find({ u: handle, state: 'on', ...(last === null ? {} : { _id: { $gt: last } }) }, { projection: { _id: 1, p: 1, r: 1, g: 1 } })
          .sort({ _id: 1 })
          .limit(hideBatch)
          .toArray();
        if (edges.length === 0) break;
        if (!(await stillSuspended())) return;
        await this.deps.content.counters.hide(edges.map((edge) => edge.p), kind, tokenOf(episode, kind));
        // Nor in the authors' LIKE and REPOST notification groups.
        await this.deps.groups.hideActor(edges.flatMap((edge) => (edge.g ? [{ group: edge.g, recipient: edge.r }] : [])), actorToken(episode));
        last = edges.at(-1)!._id;
        await run.checkpoint();
      }
    }
    // Its public replies and quotes count one fewer on the posts they answer or quote, and the
    // notifications its posts made (replies, mentions, quotes) are shown to no one.
    let lastAnswer: ObjectId | null = null;
    for (;;) {
      const answers = await this.deps.content.scans.postsAfter(handle, lastAnswer, hideBatch);
      if (answers.length === 0) break;
      if (!(await stillSuspended())) return;
      const { counters } = this.deps.content;
      await counters.hideEach(answers.flatMap((answer) => (answer.replyTo ? [{ postId: answer.replyTo, token: answerToken(episode, 'replies', answer.id) }] : [])), 'replies');
      await counters.hideEach(answers.flatMap((answer) => (answer.quoteOf ? [{ postId: answer.quoteOf, token: answerToken(episode, 'quotes', answer.id) }] : [])), 'quotes');
      await this.deps.groups.hideMadeBy(answers.map((answer) => answer.id), postsToken(episode));
      lastAnswer = answers.at(-1)!.id;
      await run.checkpoint();
    }
  }

  private async hideFromUsers(handles: readonly string[], count: 'followerCount' | 'followingCount', token: string): Promise<void> {
    await this.users.bulkWrite(
      handles.map((other) => ({
        updateOne: { filter: { _id: other, hidden: { $ne: token } }, update: { $inc: { [count]: -1, countVersion: 1 }, $push: { hidden: token } } },
      })),
      { ordered: false },
    );
    this.deps.directory.forget(handles);
    await this.deps.changes.publish(changed({ users: handles }));
  }

  /** Everything a suspension took out, put back once: what still carries its token. */
  private async restore(episode: string): Promise<void> {
    for (const [kind, count] of [['followers', 'followerCount'], ['following', 'followingCount']] as const) {
      const token = tokenOf(episode, kind);
      const touched = await this.users.find({ hidden: token }, { projection: { _id: 1 } }).toArray();
      await this.users.updateMany({ hidden: token }, { $inc: { [count]: 1, countVersion: 1 }, $pull: { hidden: token } });
      const handles = touched.map((user) => user._id);
      this.deps.directory.forget(handles);
      if (handles.length > 0) await this.deps.changes.publish(changed({ users: handles }));
    }
    for (const kind of ['likes', 'reposts'] as const) await this.deps.content.counters.restore(kind, tokenOf(episode, kind));
    await this.deps.groups.restore(actorToken(episode));
    await this.deps.groups.restore(postsToken(episode));
    // Every reply and quote counted out is counted back, whether it still exists or not: one
    // removed meanwhile was taken off its count by its removal as well.
    for (const kind of ['replies', 'quotes'] as const) {
      const carried = await this.deps.content.counters.carryingPrefixed(answerPrefix(episode, kind));
      for (let start = 0; start < carried.length; start += hideBatch) await this.deps.content.counters.restoreEachToken(carried.slice(start, start + hideBatch), kind);
    }
  }
}

const taskId = (handle: string, episode: string, undo: boolean) => `suspend-account:${handle}:${episode}${undo ? ':undo' : ''}`;
const againId = (handle: string, episode: string) => `suspend-account:${handle}:${episode}:again`;
