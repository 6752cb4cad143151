import { ObjectId, type AnyBulkWriteOperation, type Collection, type Db } from 'mongodb';
import { duplicateKeyFailures, isDuplicateKeyError } from '../errors.js';
import { RetryLater } from '../queue/taskWorkers.js';
import { maxActorsShown, type NotificationDocument, type NotificationKind } from '../records/notifications.js';

export type GroupedKind = Extract<NotificationKind, 'LIKE' | 'REPOST' | 'FOLLOW'>;

/** What an actor may be in a group for: one post's likes or reposts, or one user's new followers. */
export interface GroupSubject {
  kind: GroupedKind;
  /** The post's hex id (LIKE, REPOST) or the followed handle (FOLLOW). */
  key: string;
}

/** Whom the actor's action tells, when it tells anyone. */
export interface GroupTarget {
  recipient: string;
  postId: ObjectId | null;
}

/**
 * One actor's membership of a subject's groups, in `notification_actors`: `g` is the group that
 * counts them (null while they count nowhere; such a document is removed at rest). The lease makes
 * one worker at a time bring the actor in line; `change` is a count change under way.
 */
export interface MemberDocument {
  /** `<kind>:<subject key>|<actor>`. */
  _id: string;
  u: string;
  r?: string;
  p?: ObjectId;
  g: string | null;
  /** When the actor joined `g` (or is joining `change.to`): the order of a group's actors. */
  at: Date;
  lease: { owner: string; until: Date } | null;
  change?: { token: string; from: string | null; to: string | null; at: Date; r: string; p: ObjectId | null };
}

/** One actor of one subject to bring in line, among many handled together (NotificationGroups.reconcileMany). */
export interface MemberRequest {
  subject: GroupSubject;
  actor: string;
  at: Date;
}

/** What a joining member starts a new group with. */
interface Joining {
  at: Date;
  recipient: string;
  postId: ObjectId | null;
}

/** What a rewrite of a group's actors needs to know of it. */
type GroupState = Pick<NotificationDocument, 'v' | 'n' | 'tk'>;
const groupState = { v: 1, n: 1, tk: 1 } as const;

const kindPrefix: Record<GroupedKind, string> = { LIKE: 'l', REPOST: 'r', FOLLOW: 'f' };

export const memberId = (subject: GroupSubject, actor: string) => `${kindPrefix[subject.kind]}:${subject.key}|${actor}`;

/** LIKE and REPOST group by post; FOLLOW by recipient and UTC day of the follow. */
export function groupId(subject: GroupSubject, target: GroupTarget, at: Date): string {
  if (subject.kind === 'FOLLOW') return `f:${target.recipient}:${at.toISOString().slice(0, 10)}`;
  return `${kindPrefix[subject.kind]}:${subject.key}`;
}

/**
 * Grouped notifications, exact under any concurrency and any crash, without transactions:
 *
 * - one actor of one subject is brought in line with the truth (does the like, repost or follow
 *   exist, and may it tell the recipient) by whoever holds the actor's lease; a task that finds it
 *   held tries again shortly, and reads the truth only once it holds the lease, so the last change
 *   of the truth is always the last one applied;
 * - the group's count changes exactly once per membership change: the member first records the
 *   change and a token, the group's `$inc` is guarded by `tk: { $ne: token }` and adds the token in
 *   the same write, so a replay after a crash skips it; the token goes once the member is settled;
 * - the newest actors shown are recomputed from the settled members, guarded by the group's
 *   version, so racing rewrites converge on the newest list.
 */
export class NotificationGroups {
  readonly members: Collection<MemberDocument>;

  constructor(
    db: Db,
    readonly groups: Collection<NotificationDocument>,
    private readonly leaseMs: number,
    /** Called with a group once an actor has joined it: it grew, or rose to the top. */
    private readonly joined: (group: NotificationDocument) => Promise<void>,
  ) {
    this.members = db.collection<MemberDocument>('notification_actors');
  }

  async ensureIndexes(): Promise<void> {
    await this.members.createIndexes([
      // The newest settled actors of a group.
      { key: { g: 1, at: -1 }, name: 'group_newest' },
      { key: { p: 1 }, name: 'post' },
      { key: { r: 1 }, name: 'recipient' },
      { key: { u: 1 }, name: 'actor' },
    ]);
  }

  /**
   * Brings the actor's membership in line with `truth()`, read under the actor's lease. Throws
   * RetryLater while another worker holds it.
   */
  async reconcile(subject: GroupSubject, actor: string, at: Date, truth: () => Promise<GroupTarget | null>): Promise<void> {
    const owner = new ObjectId().toHexString();
    let member = await this.lease(memberId(subject, actor), actor, owner);
    if (!member) throw new RetryLater(10, 'another worker is bringing this actor in line');
    if (member.change) member = await this.finishChange(member, owner, { release: false });
    const target = await truth();
    const wanted = target ? (member.g ?? groupId(subject, target, at)) : null;
    if (wanted === member.g) return this.release(member, owner);
    member = await this.held(member._id, owner, { $set: recordedChange(member, wanted, target, at) });
    await this.finishChange(member, owner, { release: true });
  }

  /**
   * `reconcile` for many actors at once, each step one command for all of them: the leases, the
   * truths (`truths`, in the requests' order), the changes recorded, the groups' counts, the
   * members settled, then each touched group's newest actors. Returns the requests left for
   * `reconcile` one by one: a member named twice, or one another worker holds or left a change on.
   * When a step fails, the leases taken are given back first, so those runs need not wait for them
   * to expire: a recorded change is finished by whoever takes the member next, as after a crash.
   */
  async reconcileMany<R extends MemberRequest>(requests: readonly R[], truths: (requests: R[]) => Promise<(GroupTarget | null)[]>): Promise<R[]> {
    const owner = new ObjectId().toHexString();
    const byMember = new Map<string, R>();
    const left: R[] = [];
    for (const request of requests) {
      const _id = memberId(request.subject, request.actor);
      if (byMember.has(_id)) left.push(request);
      else byMember.set(_id, request);
    }
    try {
      const held = await this.leaseMany(byMember, owner);
      for (const [_id, request] of byMember) if (!held.has(_id)) left.push(request);
      const members = [...held.values()];
      const targets = await truths(members.map((member) => byMember.get(member._id)!));
      const changed: MemberDocument[] = [];
      const recording: AnyBulkWriteOperation<MemberDocument>[] = [];
      members.forEach((member, index) => {
        const { subject, at } = byMember.get(member._id)!;
        const target = targets[index]!;
        const wanted = target ? (member.g ?? groupId(subject, target, at)) : null;
        if (wanted === member.g) return void recording.push(releaseWrite(member, owner));
        const recorded = recordedChange(member, wanted, target, at);
        recording.push({ updateOne: { filter: { _id: member._id, 'lease.owner': owner }, update: { $set: recorded } } });
        changed.push({ ...member, ...recorded });
      });
      await this.allHeld(recording);
      if (changed.length > 0) await this.finishChanges(changed, owner);
      return left;
    } catch (error) {
      await this.members.updateMany({ _id: { $in: [...byMember.keys()] }, 'lease.owner': owner }, { $set: { lease: null } });
      throw error;
    }
  }

  /** Every group about a post, and its members: the post is gone. */
  async forgetPost(postId: ObjectId): Promise<void> {
    await this.groups.deleteMany({ p: postId });
    await this.members.deleteMany({ p: postId });
  }

  /** A deleted account's own notifications. */
  async forgetRecipient(handle: string): Promise<void> {
    await this.groups.deleteMany({ r: handle });
    await this.members.deleteMany({ r: handle });
  }

  /** The actor's groups among `recipient`'s, for bringing them in line after a mute or block. */
  membershipsOf(actor: string, recipient: string): Promise<MemberDocument[]> {
    return this.members.find({ u: actor, r: recipient }).toArray();
  }

  /**
   * The leases of many members in two commands (taken, then read); a member another worker holds,
   * or that still records a change, is left out, for `reconcile` to handle.
   */
  private async leaseMany(requests: ReadonlyMap<string, MemberRequest>, owner: string): Promise<Map<string, MemberDocument>> {
    const now = new Date();
    const lease = { owner, until: new Date(now.getTime() + this.leaseMs) };
    const taking: AnyBulkWriteOperation<MemberDocument>[] = [...requests].map(([_id, { actor }]) => ({
      updateOne: {
        filter: { _id, change: { $exists: false }, $or: [{ lease: null }, { 'lease.until': { $lt: now } }] },
        update: { $set: { lease }, $setOnInsert: { u: actor, g: null, at: now } },
        upsert: true,
      },
    }));
    try {
      await this.members.bulkWrite(taking, { ordered: false });
    } catch (error) {
      // A member held, or with a change under way: its upsert meets the existing `_id`.
      if (!duplicateKeyFailures(error)) throw error;
    }
    const taken = await this.members.find({ _id: { $in: [...requests.keys()] }, 'lease.owner': owner }).toArray();
    return new Map(taken.map((member) => [member._id, member]));
  }

  /**
   * Writes that must all still hold their member's lease. One that missed found its member taken
   * over by another worker, or gone with its post or recipient: the tasks run again, alone.
   */
  private async allHeld(writes: AnyBulkWriteOperation<MemberDocument>[]): Promise<void> {
    if (writes.length === 0) return;
    const result = await this.members.bulkWrite(writes, { ordered: false });
    if (result.matchedCount + result.deletedCount < writes.length) throw new RetryLater(10, 'a notification member changed hands or was removed meanwhile');
  }

  /**
   * `finishChange` for many members, whose leases it gives back: the groups' counts in one write
   * and one read, the members settled in one write, then each touched group emptied or rewritten.
   */
  private async finishChanges(changed: readonly MemberDocument[], owner: string): Promise<void> {
    const counting: AnyBulkWriteOperation<NotificationDocument>[] = changed.flatMap(({ change }) => {
      const { token, from, to, at, r, p } = change!;
      return [...(from ? [countWrite(from, token, null)] : []), ...(to ? [countWrite(to, token, { at, recipient: r, postId: p })] : [])].map((updateOne) => ({ updateOne }));
    });
    try {
      await this.groups.bulkWrite(counting, { ordered: false });
    } catch (error) {
      // A group that holds the token already: this change was applied before a crash.
      if (!duplicateKeyFailures(error)) throw error;
    }
    const touched = [...new Set(changed.flatMap(({ change }) => [change!.from, change!.to].filter((key): key is string => key !== null)))];
    const groups = new Map((await this.groups.find({ _id: { $in: touched } }, { projection: groupState }).toArray()).map((group) => [group._id, group]));
    await this.allHeld(
      changed.map((member) => {
        const mine = { _id: member._id, 'lease.owner': owner };
        return member.change!.to === null ? { deleteOne: { filter: mine } } : { updateOne: { filter: mine, update: settledUpdate(member.change!, true) } };
      }),
    );
    const settledTokens = new Set(changed.map(({ change }) => change!.token));
    const joinedGroups = new Set(changed.map(({ change }) => change!.to).filter((key): key is string => key !== null));
    await Promise.all(touched.map(async (groupKey) => groups.has(groupKey) && this.finishGroup(groupKey, groups.get(groupKey)!, settledTokens, joinedGroups.has(groupKey))));
  }

  /** Takes the lease, creating the member document when there is none; null when another holds it. */
  private async lease(_id: string, actor: string, owner: string): Promise<MemberDocument | null> {
    const now = new Date();
    try {
      return await this.members.findOneAndUpdate(
        { _id, $or: [{ lease: null }, { 'lease.until': { $lt: now } }] },
        { $set: { lease: { owner, until: new Date(now.getTime() + this.leaseMs) } }, $setOnInsert: { u: actor, g: null, at: now } },
        { upsert: true, returnDocument: 'after' },
      );
    } catch (error) {
      if (isDuplicateKeyError(error)) return null;
      throw error;
    }
  }

  /**
   * Applies the member's recorded change to its groups, settles the member (giving the lease back
   * in the same write when `release`), then rewrites the touched groups' newest actors, which also
   * pulls the change's token: a token whose member is settled is finished for good.
   */
  private async finishChange(member: MemberDocument, owner: string, { release }: { release: boolean }): Promise<MemberDocument> {
    const { token, from, to, at, r, p } = member.change!;
    const [left, joined] = await Promise.all([from ? this.countOnce(from, token, null) : null, to ? this.countOnce(to, token, { at, recipient: r, postId: p }) : null]);
    const settled = await this.settle(member, owner, release);
    if (from) await this.finishGroup(from, left, new Set([token]), false);
    if (to) await this.finishGroup(to, joined, new Set([token]), true);
    return settled;
  }

  /**
   * A group after its count moved: emptied, it goes; otherwise its newest actors are rewritten,
   * and one an actor joined is announced. `known` is the group as the count write left it, null
   * for a replay, which finds its count already moved and still finishes the group.
   */
  private async finishGroup(groupKey: string, known: GroupState | null, settled: ReadonlySet<string>, joined: boolean): Promise<void> {
    if (joined) {
      const group = await this.refreshActors(groupKey, known, settled);
      if (group) await this.joined(group);
      return;
    }
    const group = known ?? (await this.groups.findOne({ _id: groupKey }, { projection: groupState }));
    if (!group) return;
    // Empty: it disappears. A join racing this delete either came first (so n > 0) or recreates it.
    if (group.n <= 0) await this.groups.deleteOne({ _id: groupKey, n: { $lte: 0 } });
    else await this.refreshActors(groupKey, group, settled);
  }

  /** The member's change is done: it counts in `to` (or nowhere, and goes) and, when `release`, is free again. */
  private async settle(member: MemberDocument, owner: string, release: boolean): Promise<MemberDocument> {
    const { to, r, p } = member.change!;
    if (release && to === null) {
      await this.members.deleteOne({ _id: member._id, 'lease.owner': owner });
      return { ...member, g: null, lease: null, change: undefined };
    }
    return this.held(member._id, owner, settledUpdate(member.change!, release));
  }

  /**
   * The group's count moves once for this token; joining, a new group starts here. Returns the
   * group as it is then, or null when it already held the token (the change was applied before a
   * crash) or, leaving, there is no such group.
   */
  private async countOnce(groupKey: string, token: string, joining: Joining | null): Promise<GroupState | null> {
    const { filter, update, upsert } = countWrite(groupKey, token, joining);
    try {
      return await this.groups.findOneAndUpdate(filter, update, { upsert, returnDocument: 'after', projection: groupState });
    } catch (error) {
      // The group holds the token already: this change was applied before a crash.
      if (!isDuplicateKeyError(error)) throw error;
      return null;
    }
  }

  /**
   * Rewrites the newest actors, and the group's time with them, from the settled members (an actor
   * still joining raised the time itself and rewrites it again once settled), unless the group changed meanwhile, in
   * which case it reads again. `known` is the group as the caller's own write left it (saving a
   * read), and `settled` tokens the caller knows are finished. Returns the group as written
   * (null when it is gone).
   */
  private async refreshActors(groupKey: string, known: GroupState | null, settled: ReadonlySet<string>): Promise<NotificationDocument | null> {
    let group = known;
    for (;;) {
      group ??= await this.groups.findOne({ _id: groupKey }, { projection: groupState });
      if (!group) return null;
      const tokens = group.tk ?? [];
      const [newest, settledTokens] = await Promise.all([
        this.members
          .find({ g: groupKey, change: { $exists: false } }, { projection: { u: 1, at: 1 } })
          .sort({ at: -1 })
          .limit(maxActorsShown)
          .toArray(),
        this.settledTokens(tokens.filter((token) => !settled.has(token))),
      ]);
      settledTokens.push(...tokens.filter((token) => settled.has(token)));
      const written = await this.groups.findOneAndUpdate(
        { _id: groupKey, v: group.v },
        {
          // The group is as new as its newest actor: one who left takes their time with them, so
          // the group sinks back to its place and reads as read again when the rest was read.
          $set: { a: newest.map(({ u, at }) => ({ u, at })), ...(newest[0] ? { at: newest[0].at } : {}) },
          $inc: { v: 1 },
          ...(settledTokens.length ? { $pull: { tk: { $in: settledTokens } } } : {}),
        },
        { returnDocument: 'after', projection: { tk: 0 } },
      );
      if (written) return written;
      group = null;
    }
  }

  /**
   * Tokens whose member no longer records the change: a worker that died between settling its
   * member and pulling the token left it behind. A token names its member, and reaches the group
   * only after the member recorded it, so one its member does not hold is finished for good.
   */
  private async settledTokens(tokens: readonly string[]): Promise<string[]> {
    if (tokens.length === 0) return [];
    const memberIds = [...new Set(tokens.map((token) => token.slice(0, token.lastIndexOf('#'))))];
    const pending = await this.members.find({ _id: { $in: memberIds }, change: { $exists: true } }, { projection: { 'change.token': 1 } }).toArray();
    const held = new Set(pending.map((member) => member.change!.token));
    return tokens.filter((token) => !held.has(token));
  }

  private async release(member: MemberDocument, owner: string): Promise<void> {
    await this.members.bulkWrite([releaseWrite(member, owner)]);
  }

  /**
   * An update that must still hold the lease. Losing it is no failure: this worker took longer than
   * its lease, another took the member over and finishes what was recorded, and the task runs again
   * from the start once that one is done.
   */
  private async held(_id: string, owner: string, update: Record<string, unknown>): Promise<MemberDocument> {
    const member = await this.members.findOneAndUpdate({ _id, 'lease.owner': owner }, update, { returnDocument: 'after' });
    if (!member) throw new RetryLater(10, `lost the lease on notification member "${_id}" to another worker`);
    return member;
  }
}

const groupKind: Record<string, GroupedKind> = { l: 'LIKE', r: 'REPOST', f: 'FOLLOW' };

/** The member's change towards `wanted` with its token, as recorded before any group moves (joining, the actor's place in the group too). */
function recordedChange(member: MemberDocument, wanted: string | null, target: GroupTarget | null, at: Date): Pick<MemberDocument, 'change'> & { at?: Date } {
  const change = { token: `${member._id}#${new ObjectId().toHexString()}`, from: member.g, to: wanted, at, r: target?.recipient ?? member.r!, p: target?.postId ?? member.p ?? null };
  return { change, ...(wanted ? { at } : {}) };
}

/** Gives a member in line back: one that counts nowhere goes. */
function releaseWrite(member: MemberDocument, owner: string): AnyBulkWriteOperation<MemberDocument> {
  const mine = { _id: member._id, 'lease.owner': owner };
  return member.g === null ? { deleteOne: { filter: mine } } : { updateOne: { filter: mine, update: { $set: { lease: null } } } };
}

/** The member counts in the change's `to` now, and records it no longer; `release` gives the lease back too. */
function settledUpdate({ to, r, p }: NonNullable<MemberDocument['change']>, release: boolean) {
  return { $set: { g: to, r, ...(p ? { p } : {}), ...(release ? { lease: null } : {}) }, $unset: { change: '' as const } };
}

/** The group's count moved once for `token` (guarded by it); joining, a new group starts here. */
function countWrite(groupKey: string, token: string, joining: Joining | null) {
  const start = joining && { $max: { at: joining.at }, $setOnInsert: { r: joining.recipient, k: groupKind[groupKey[0]!]!, a: [], ...(joining.postId ? { p: joining.postId } : {}) } };
  return {
    filter: { _id: groupKey, tk: { $ne: token } },
    update: { $inc: { n: joining ? 1 : -1, v: 1 }, $push: { tk: token }, ...start },
    upsert: joining !== null,
  };
}
