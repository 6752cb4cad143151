import type { Collection, ObjectId } from 'mongodb';
import { sweepQuery } from '../db/connect.js';
import { isDuplicateKeyError } from '../errors.js';
import { plannedIndexes } from '../db/shardPlan.js';
import {
  actorOrder,
  compareActors,
  countedIn,
  joinedAt,
  maxActorsShown,
  type GroupActor,
  type GroupTokens,
  type GroupMember,
  type GroupMemberSource,
  type GroupedKind,
  type NotificationDocument,
  type NotificationKind,
} from '../records/notifications.js';

/** The kinds whose notification is about the actor's own post (`p`): a reply, a mention, a quote. */
const madeByThePost: NotificationKind[] = ['REPLY', 'MENTION', 'QUOTE'];

/** A group a suspended actor is a member of: its id and recipient (the shard key). */
export interface HiddenIn {
  group: string;
  recipient: string;
}

/** One member joining or leaving one group, under the token its own document recorded (GroupMembership.gc). */
export interface MembershipChange {
  group: string;
  /** Whom the group notifies: the collection's shard key, named by every write. */
  recipient: string;
  token: string;
  actor: string;
}

export interface Joining extends MembershipChange {
  kind: GroupedKind;
  postId: ObjectId | null;
  /** When the actor joined: their place among the group's actors. */
  at: Date;
}

/**
 * Grouped notifications whose count and shown actors agree at every read, without transactions.
 *
 * A group is one document, and every change of its members is one write of it: the count, the
 * newest actors and the group's time move together. The change's token, recorded on the member's
 * own document first, guards the write and stays on the group until the member has dropped its
 * record of the change (then it is pruned in batches, `pruneTokens`): a replay after a crash finds
 * its token and writes nothing, and which members a group counts can always be told from the
 * members' documents and the group's tokens (`countedIn`), even mid-change.
 *
 * A join is one write in every case: `$push` with `$sort` and `$slice` keeps the newest 20. A leave
 * is one write unless the leaver is the newest actor of several (the group's time goes back to the
 * next one) or is shown in a group of more than 20 (the next member in line is shown instead): then
 * the group is read, the next member found among the members' documents, and the group written
 * under its version, again if it changed meanwhile.
 *
 * A group its last member left stays, empty (`n: 0`, shown to no one), until the sweep has pruned
 * every token on it: deleted at once, it could be recreated by a join and then met by the replay
 * of a leave that its token no longer guards.
 */
export class NotificationGroups {
  constructor(readonly groups: Collection<NotificationDocument>) {}

  /** Applies a join once; returns the group as it is now, or null when the change was applied before. */
  async join(change: Joining): Promise<NotificationDocument | null> {
    const { group, token, actor, at, kind, recipient, postId } = change;
    for (;;) {
      try {
        return await this.groups.findOneAndUpdate(
          { _id: group, r: recipient, tk: { $ne: token } },
          {
            $inc: { n: 1, v: 1 },
            $push: { a: { $each: [{ u: actor, at }], $sort: actorOrder, $slice: maxActorsShown }, tk: token },
            $max: { at },
            $setOnInsert: { k: kind, ...(postId ? { p: postId } : {}) },
          },
          { upsert: true, returnDocument: 'after', projection: { tk: 0 } },
        );
      } catch (error) {
        if (!isDuplicateKeyError(error)) throw error;
        // Either the group holds the token (applied before a crash), or a racing first join
        // created the group between this write's look and its insert: then write again.
        if (await this.applied(group, recipient, token)) return null;
      }
    }
  }

  /** Applies a leave once. */
  async leave(change: MembershipChange, members: GroupMemberSource): Promise<void> {
    const { group, recipient, token, actor } = change;
    // The common case in one write: the leaver is the last member (the group empties), or is not
    // the newest actor and no one needs to take their place among those shown (the group shows
    // everyone, or the leaver is not shown).
    const quick = await this.groups.updateOne(
      {
        _id: group,
        r: recipient,
        tk: { $ne: token },
        $or: [{ n: 1 }, { n: { $gt: 1 }, 'a.0.u': { $ne: actor }, $or: [{ n: { $lte: maxActorsShown } }, { 'a.u': { $ne: actor } }] }],
      },
      { $inc: { n: -1, v: 1 }, $pull: { a: { u: actor } }, $push: { tk: token } },
    );
    if (quick.matchedCount === 1) return;
    for (;;) {
      const current = await this.groups.findOne({ _id: group, r: recipient });
      // Gone with its post, or applied before a crash.
      if (!current || (current.tk ?? []).includes(token)) return;
      const count = current.n - 1;
      const shown = current.a.filter((shownActor) => shownActor.u !== actor);
      const wanted = Math.min(Math.max(count, 0), maxActorsShown) - shown.length;
      if (wanted > 0) shown.push(...(await this.nextInLine(current, actor, wanted, members)));
      const written = await this.groups.updateOne(
        { _id: group, r: recipient, v: current.v },
        { $set: { a: shown, ...(shown[0] ? { at: shown[0].at } : {}) }, $inc: { n: -1, v: 1 }, $push: { tk: token } },
      );
      if (written.matchedCount === 1) return;
    }
  }

  /** Whether the change with this token was applied to the group (and its token not pruned yet). */
  async applied(group: string, recipient: string, token: string): Promise<boolean> {
    return (await this.groups.countDocuments({ _id: group, r: recipient, tk: token }, { limit: 1 })) > 0;
  }

  /**
   * Drops the tokens of changes whose members no longer record them: they guard nothing now. A
   * group left empty goes once no change of it is recorded anywhere: none can be replayed on it.
   */
  async pruneTokens(tokensByGroup: GroupTokens): Promise<void> {
    if (tokensByGroup.size === 0) return;
    const groups = [...tokensByGroup];
    // Every pull, then every delete (only where a leave may have emptied the group): one command
    // each, where alternating them would take one per group.
    await this.groups.bulkWrite(
      [
        ...groups.map(([group, { recipient, tokens }]) => ({ updateOne: { filter: { _id: group, r: recipient }, update: { $pull: { tk: { $in: tokens } } } } })),
        // A group emptied while a suspension leaves a member out stays: unsuspending counts it back.
        ...groups.filter(([, { left }]) => left).map(([group, { recipient }]) => ({ deleteOne: { filter: { _id: group, r: recipient, n: 0, tk: { $size: 0 }, 'sh.0': { $exists: false } } } })),
      ],
      { ordered: true, ...sweepQuery },
    );
  }

  /** What a suspension's restoring `updateMany` finds: the few groups carrying a suspension's token. */
  async ensureHiddenIndex(): Promise<void> {
    await plannedIndexes(this.groups, [{ key: { sh: 1 }, name: 'suspension_hidden', partialFilterExpression: { sh: { $exists: true } } }]);
  }

  /**
   * Leaves a suspended actor out of the count of each of these groups it is a member of, once per
   * token (an actor is one member of a group at most). Its place among the shown actors stays, and
   * every read leaves it out of those (the user directory does not find it).
   */
  async hideActor(groups: readonly HiddenIn[], token: string): Promise<void> {
    if (groups.length === 0) return;
    await this.groups.bulkWrite(
      groups.map(({ group, recipient }) => ({ updateOne: { filter: { _id: group, r: recipient, sh: { $ne: token } }, update: { $inc: { n: -1, v: 1 }, $push: { sh: token } } } })),
      { ordered: false },
    );
  }

  /**
   * Hides, once per token, the replies', mentions' and quotes' notifications these posts of a
   * suspended account made (their count 0: shown to no one); `restore` shows them again.
   */
  async hideMadeBy(postIds: readonly ObjectId[], token: string): Promise<void> {
    if (postIds.length === 0) return;
    await this.groups.updateMany({ p: { $in: [...postIds] }, k: { $in: madeByThePost }, sh: { $ne: token } }, { $inc: { n: -1, v: 1 }, $push: { sh: token } });
  }

  /** The groups a suspension's token left an actor out of, with what tells which membership it was. */
  async carrying(token: string): Promise<(HiddenIn & { kind: GroupedKind; postId: ObjectId | null })[]> {
    const docs = await this.groups.find({ sh: token }, { projection: { _id: 1, r: 1, k: 1, p: 1 } }).toArray();
    return docs.map((doc) => ({ group: doc._id, recipient: doc.r, kind: doc.k as GroupedKind, postId: doc.p ?? null }));
  }

  /** Counts back, once, the actor a suspension's token left out of each of these groups. */
  async restoreEach(groups: readonly HiddenIn[], token: string): Promise<void> {
    if (groups.length === 0) return;
    await this.groups.bulkWrite(
      groups.map(({ group, recipient }) => ({ updateOne: { filter: { _id: group, r: recipient, sh: token }, update: { $inc: { n: 1, v: 1 }, $pull: { sh: token } } } })),
      { ordered: false },
    );
  }

  /** Counts back, once, every actor a suspension's token left out (the groups that still exist). */
  async restore(token: string): Promise<void> {
    await this.groups.updateMany({ sh: token }, { $inc: { n: 1, v: 1 }, $pull: { sh: token } });
  }

  /** Every group about a post: the post is gone. */
  async forgetPost(postId: ObjectId): Promise<void> {
    await this.groups.deleteMany({ p: postId });
  }

  /**
   * The members after the group's last shown actor that it counts, newest first: those the group
   * shows next once `leaving` is gone. A member mid-change counts as the group's tokens say.
   */
  private async nextInLine(group: NotificationDocument, leaving: string, wanted: number, members: GroupMemberSource): Promise<GroupActor[]> {
    const tokens = group.tk ?? [];
    const last = group.a.at(-1)!;
    const shown = new Set(group.a.map((shownActor) => shownActor.u));
    const counted = (member: GroupMember) => member.u !== leaving && !shown.has(member.u) && countedIn(member, group._id, tokens);
    const found: GroupActor[] = (await members.membersJoining(group._id))
      .filter(counted)
      .map((member) => ({ u: member.u, at: joinedAt(member, group._id) }))
      .filter((candidate) => compareActors(last, candidate) < 0);
    // Read in order, so once `wanted` of them count, no later one is among the newest.
    let inOrder = 0;
    for await (const member of members.membersAfter(group._id, last)) {
      if (!counted(member)) continue;
      found.push({ u: member.u, at: joinedAt(member, group._id) });
      if (++inOrder >= wanted) break;
    }
    return found.sort(compareActors).slice(0, wanted);
  }
}
