import { ObjectId, type Collection, type Db } from 'mongodb';
import { GroupedReadThroughCache } from '../cache/groupedReadThrough.js';
import { heldCaches } from '../config.js';
import { assertDisplayableText, graphemeLength } from '../content/text.js';
import { findStalled, finishEach, stalledSince } from '../db/stalledWork.js';
import { AppError, badInput, isDuplicateKeyError, notFound } from '../errors.js';
import {
  maxListNameLength,
  maxListsPerOwner,
  toListRecord,
  type ListDocument,
  type ListRecord,
} from '../records/lists.js';
import { inListOrder, type ListPageRequest } from '../records/pages.js';
import type { EdgeDocument, HandlePage } from '../records/users.js';
import { plannedCollection, plannedIndexes } from '../db/shardPlan.js';

/** A list as a page of its timeline needs it: the list and its members, held in this process. */
export interface HeldList {
  list: ListRecord;
  members: readonly string[];
  memberSet: ReadonlySet<string>;
}

/** A deletion whose request died is finished by the repair sweep once it is this old. */
const stalledAfterMs = 2_000;

const gone = (id: ObjectId) => notFound(`No list with id "${id.toHexString()}"`);
const notDeleting = { deletingAt: { $exists: false } } as const;

/**
 * Lists: named subsets of the accounts a user follows. A list is a document in `lists`; who is in
 * it is written on the owner's `following` edges (`_g`, Socialite's annotated edges), indexed
 * `{ _f, _g, _t }`. So a member is always someone the owner follows: unfollowing (or blocking, or
 * a deleted account) removes the edge, and with it every membership, in one write, whatever races
 * it and wherever a request dies. Adding is an update of the edge that only an existing edge matches.
 */
export class UserLists {
  readonly lists: Collection<ListDocument>;
  /** Lists and their members, grouped by owner: an owner's follow change drops all of theirs. */
  private readonly held = new GroupedReadThroughCache<HeldList>('lists', {
    max: heldCaches.lists.max,
    ttlMs: heldCaches.lists.ttlMs,
    maxSize: heldCaches.lists.maxMembers,
    sizeOf: (held) => held.members.length,
  });

  constructor(
    db: Db,
    private readonly following: Collection<EdgeDocument>,
  ) {
    this.lists = plannedCollection<ListDocument>(db, 'lists');
  }

  async ensureIndexes(): Promise<void> {
    await Promise.all([
      plannedIndexes(this.lists, [
        // One list per place: racing creations cannot pass the limit. Also an owner's lists.
        { key: { _o: 1, s: 1 }, name: 'owner_place', unique: true },
        { key: { deletingAt: 1 }, name: 'deleting_since', sparse: true },
      ]),
      // A list's members in handle order, covered; their count; an owner's memberships.
      plannedIndexes(this.following, [{ key: { _f: 1, _g: 1, _t: 1 }, name: 'follower_list_followee' }]),
    ]);
  }

  /** The owner's lists, oldest first. */
  async listsOf(ownerId: string): Promise<ListRecord[]> {
    const docs = await this.lists.find({ _o: ownerId, ...notDeleting }).sort({ _id: 1 }).toArray();
    return docs.map(toListRecord);
  }

  /** The list when `ownerId` owns it; null for an unknown list, another account's, or one being deleted. */
  async find(ownerId: string, id: ObjectId): Promise<ListRecord | null> {
    return (await this.heldList(ownerId, id))?.list ?? null;
  }

  /** The list with its members, held in this process (see HeldList); null as for `find`. */
  heldList(ownerId: string, id: ObjectId): Promise<HeldList | null> {
    return this.held.get(ownerId, id.toHexString(), async () => {
      const [doc, edges] = await Promise.all([
        this.lists.findOne({ _id: id, _o: ownerId, ...notDeleting }),
        this.following.find({ _f: ownerId, _g: id }, { projection: { _id: 0, _t: 1 } }).toArray(),
      ]);
      if (!doc) return null;
      const members = edges.map((edge) => edge._t);
      return { list: toListRecord(doc), members, memberSet: new Set(members) };
    });
  }

  async create(ownerId: string, name: string): Promise<ListRecord> {
    const n = listName(name);
    for (let attempt = 0; attempt < maxListsPerOwner; attempt++) {
      const taken = new Set((await this.lists.find({ _o: ownerId }, { projection: { s: 1 } }).toArray()).map((doc) => doc.s));
      let place = 0;
      while (taken.has(place)) place++;
      if (place >= maxListsPerOwner) throw badInput(`You can have at most ${maxListsPerOwner} lists`);
      const doc: ListDocument = { _id: new ObjectId(), _o: ownerId, s: place, n, createdAt: new Date() };
      try {
        await this.lists.insertOne(doc);
        return toListRecord(doc);
      } catch (error) {
        // Another creation took the place first: look again.
        if (!isDuplicateKeyError(error)) throw error;
      }
    }
    throw new AppError('CONFLICT', 'Too many lists are being created at once; try again');
  }

  async rename(ownerId: string, id: ObjectId, name: string): Promise<ListRecord> {
    const n = listName(name);
    const doc = await this.lists.findOneAndUpdate({ _id: id, _o: ownerId, ...notDeleting }, { $set: { n } }, { returnDocument: 'after' });
    this.held.invalidate([id.toHexString()]);
    if (!doc) throw gone(id);
    return toListRecord(doc);
  }

  /**
   * Marked first, so the list is gone for every read and for adding at once; then its memberships
   * go, then the document (and with it its place). A deletion whose request died is finished by
   * `repairStalled`.
   */
  async delete(ownerId: string, id: ObjectId): Promise<void> {
    const marked = await this.lists.findOneAndUpdate({ _id: id, _o: ownerId, ...notDeleting }, { $set: { deletingAt: new Date() } });
    this.held.invalidate([id.toHexString()]);
    if (!marked) throw gone(id);
    await this.finishDeletion(marked);
  }

  /** Finishes list deletions whose request died. Returns how many. */
  async repairStalled(limit = 100): Promise<number> {
    const stalled = await findStalled(this.lists, { deletingAt: { $lt: stalledSince(stalledAfterMs) } }, { limit });
    return finishEach(stalled, (doc) => this.finishDeletion(doc));
  }

  private async finishDeletion(doc: Pick<ListDocument, '_id' | '_o'>): Promise<void> {
    await this.following.updateMany({ _f: doc._o, _g: doc._id }, { $pull: { _g: doc._id } });
    await this.lists.deleteOne({ _id: doc._id, _o: doc._o });
  }

  /**
   * Adds `memberId`, whom the owner must follow: the write matches only their follow edge. A list
   * deleted meanwhile is checked again after the write, and the membership taken back.
   */
  async addMember(ownerId: string, id: ObjectId, memberId: string): Promise<ListRecord> {
    const list = await this.current(ownerId, id);
    const written = await this.following.updateOne({ _f: ownerId, _t: memberId }, { $addToSet: { _g: id } });
    this.held.invalidate([id.toHexString()]);
    if (written.matchedCount === 0) throw new AppError('FORBIDDEN', `You can add only accounts you follow, and you do not follow ${memberId}`);
    if (!(await this.lists.countDocuments({ _id: id, _o: ownerId, ...notDeleting }, { limit: 1 }))) {
      await this.following.updateOne({ _f: ownerId, _t: memberId }, { $pull: { _g: id } });
      throw gone(id);
    }
    return list;
  }

  /** Idempotent: removing someone not in the list changes nothing. */
  async removeMember(ownerId: string, id: ObjectId, memberId: string): Promise<ListRecord> {
    const list = await this.current(ownerId, id);
    await this.following.updateOne({ _f: ownerId, _t: memberId, _g: id }, { $pull: { _g: id } });
    this.held.invalidate([id.toHexString()]);
    return list;
  }

  /** A page of the members, in handle order, either way from a handle. */
  async members(ownerId: string, id: ObjectId, page: ListPageRequest<string>): Promise<HandlePage> {
    const forward = page.direction === 'forward';
    const docs = await this.following
      .find({ _f: ownerId, _g: id, ...(page.from === null ? {} : { _t: { [forward ? '$gt' : '$lt']: page.from } }) }, { projection: { _id: 0, _t: 1 } })
      // By handle alone: a sort on `_g` would order by each edge's smallest list id, not this one.
      .sort({ _t: forward ? 1 : -1 })
      .limit(page.limit + 1)
      .toArray();
    const { items, hasMore } = inListOrder(page.direction, docs.map((edge) => edge._t), page.limit);
    return { handles: items, hasMore };
  }

  /** Exact member counts of several of one owner's lists, in one query. */
  async memberCounts(ownerId: string, ids: readonly ObjectId[]): Promise<Map<string, number>> {
    const counts = await this.following
      .aggregate<{ _id: ObjectId; n: number }>([
        { $match: { _f: ownerId, _g: { $in: [...ids] } } },
        { $unwind: '$_g' },
        { $match: { _g: { $in: [...ids] } } },
        { $group: { _id: '$_g', n: { $sum: 1 } } },
      ])
      .toArray();
    return new Map(counts.map((count) => [count._id.toHexString(), count.n]));
  }

  /** Removes a deleted account's lists; its follow edges, and so its memberships, are gone already. */
  async forgetOwner(ownerId: string): Promise<void> {
    await this.lists.deleteMany({ _o: ownerId });
    this.held.invalidateGroups([ownerId]);
  }

  /** Forgets what this process holds of these owners' lists (their follows changed). */
  forgetOwners(ownerIds: readonly string[]): void {
    if (ownerIds.length > 0) this.held.invalidateGroups(ownerIds);
  }

  forgetAll(): void {
    this.held.clear();
  }

  stats() {
    return this.held.stats();
  }

  private async current(ownerId: string, id: ObjectId): Promise<ListRecord> {
    const doc = await this.lists.findOne({ _id: id, _o: ownerId, ...notDeleting });
    if (!doc) throw gone(id);
    return toListRecord(doc);
  }
}

/** A list name: trimmed, 1 to 50 characters as a person counts them, on one line. */
export function listName(name: string): string {
  const trimmed = name.trim();
  const length = graphemeLength(trimmed);
  if (length < 1 || length > maxListNameLength) throw badInput(`A list name must be 1 to ${maxListNameLength} characters after trimming`);
  assertDisplayableText(trimmed, 'A list name', { multiline: false });
  return trimmed;
}
