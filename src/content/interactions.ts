import { ObjectId, type Collection, type Db } from 'mongodb';
import { sweepQuery } from '../db/connect.js';
import { Backoff, findStalled, finishEach, stalledSince } from '../db/stalledWork.js';
import { isDuplicateKeyError } from '../errors.js';
import { carriedEventsField, counted, type ChangeEvent, type ChangePublisher, type ViewerState } from '../changes/events.js';
import { HeldViewerStates } from './heldViewerStates.js';
import { groupTokens, type GroupActor, type GroupMemberSource, type GroupMembership, type GroupTokens, type TokenToPrune } from '../records/notifications.js';
import { newPostId, type PostCounts, type PostRef } from '../records/posts.js';
import { PostCounters, staleChangeMs, type CountName } from './postCounters.js';
import { plannedCollection, plannedIndexes } from '../db/shardPlan.js';
import { everyEvent, type HeldScope } from '../changes/partitions.js';
import { noRequest, type Scope } from '../observability/requestScope.js';

/**
 * One user's like or repost of one post (Weibo's existence service): the `_id` is the pair, so
 * "has the viewer liked these posts" is one `_id $in` query for a page. `state` is `on` at rest
 * (`off` for one taken back whose tokens are not pruned yet); `adding`, `removing` or `leaving`
 * while a request brings the post's count, the notification group and any other effect in line.
 */
export interface InteractionDocument extends GroupMembership {
  /** `<post id hex>:<handle>`. */
  _id: string;
  p: ObjectId;
  u: string;
  /** The post's author: whose notification group the edge may count in; with `u`, the shard key. */
  r: string;
  state: InteractionState;
  /** The transition under way: it guards the count change and the group's change (see PostCounters). */
  token?: string;
  /** When the state last changed: a transition this old has lost its request. */
  at: Date;
  /** For a repost: the id and time of the repost's own `content` document. */
  entry: ObjectId;
  /** When the post was liked or reposted. */
  d: Date;
  /** Tokens the transitions left on the post's counter (and group `g`), to be pruned (`pruneSettled`). */
  prune?: TokenToPrune[];
  /** Set while `prune` holds anything: what the pruning sweep looks for. */
  tp?: true;
}

type InteractionState = 'adding' | 'on' | 'removing' | 'leaving' | 'off';

/** The states in which the user has liked or reposted the post (an add in flight always completes). */
const present: InteractionState[] = ['adding', 'on', 'leaving'];

/**
 * What else a transition does, handed down by the layers above: the notification group the edge
 * counts in, and a repost's own timeline entry. Each is idempotent, guarded by the edge's token.
 */
export interface InteractionEffects {
  /** The group a new edge joins: null when the action tells no one. Asked before the edge is written. */
  groupOf(post: PostRef, userId: string): Promise<string | null>;
  /**
   * Each returns what it has to announce: the transition announces it all in one write, once the
   * edge is settled. `count` changes the post's count (once, however often it is called): an
   * effect calls it as early as its order allows, and the transition calls it after any that did not.
   * `scope`: the request making the transition, for the work an effect queues (`noRequest` when a
   * sweep finishes one a dead request left).
   */
  adding(edge: InteractionDocument, count: CountChange, scope: Scope): Promise<ChangeEvent[]>;
  removing(edge: InteractionDocument, members: GroupMemberSource, scope: Scope): Promise<ChangeEvent[]>;
  /** Takes the edge out of its group, leaving the like itself (a mute or block of its actor). */
  leaving(edge: InteractionDocument, members: GroupMemberSource): Promise<ChangeEvent[]>;
  /** Drops group tokens that no transition records any longer. */
  pruneGroupTokens(tokensByGroup: GroupTokens): Promise<void>;
}

/** The post's count changed by an adding transition: its counts after, null when the post is gone or a replay changed it before. */
export type CountChange = () => Promise<PostCounts | null>;

export const noEffects: InteractionEffects = {
  groupOf: async () => null,
  adding: async () => [],
  removing: async () => [],
  leaving: async () => [],
  pruneGroupTokens: async () => {},
};

const keyOf = (postId: ObjectId, userId: string) => `${postId.toHexString()}:${userId}`;

/** Up to this many settled edges' tokens are pruned by one pass of the sweep. */
const pruneBatch = 500;

/**
 * Likes or reposts: idempotent toggles whose count on the post, and membership of the post's
 * notification group, change exactly once under any concurrency and any crash. The unique `_id`
 * lets one of many racing adds in; the others wait until it is counted. A transition found in
 * flight is waited for, and taken over once it is stale (its request died).
 *
 * A transition is its edge's write, the count and the group's change beside each other, and the
 * edge's settling write: the tokens it leaves on the post and the group are pruned later, in
 * batches, by the workers' sweep (`pruneSettled`), so a like costs four commands, not six.
 */
export class Interactions implements GroupMemberSource {
  readonly edges: Collection<InteractionDocument>;
  /** Which posts each viewer has liked (or reposted), held in this process. */
  private readonly held: HeldViewerStates;
  private readonly state: ViewerState;

  constructor(
    db: Db,
    name: 'likes' | 'reposts',
    private readonly counters: PostCounters,
    private readonly count: CountName,
    private readonly changes: ChangePublisher,
    private readonly effects: InteractionEffects = noEffects,
    scope: HeldScope = everyEvent,
  ) {
    this.edges = plannedCollection<InteractionDocument>(db, name);
    this.held = new HeldViewerStates(name, (viewerId, postIds) => this.amongStored(viewerId, postIds), scope);
    this.state = name === 'likes' ? 'like' : 'repost';
  }

  async ensureIndexes(): Promise<void> {
    await plannedIndexes(this.edges, [
      { key: { u: 1, r: 1 }, name: 'by_user' },
      { key: { p: 1 }, name: 'by_post' },
      { key: { state: 1, at: 1 }, name: 'in_transition' },
      { key: { tp: 1 }, name: 'tokens_to_prune', partialFilterExpression: { tp: true } },
      // A notification group's members in the order it shows them, and those joining it.
      { key: { g: 1, ga: -1, u: -1 }, name: 'group_members', partialFilterExpression: { g: { $exists: true } } },
      { key: { 'gc.to': 1 }, name: 'group_changes', partialFilterExpression: { 'gc.to': { $exists: true } } },
    ]);
  }

  /**
   * Returns once the pair is on and counted, whoever made it so, with the post's counts as this
   * add left them (null when another request made the pair, or when the post is gone).
   */
  async add(post: PostRef, userId: string, scope: Scope): Promise<PostCounts | null> {
    const _id = keyOf(post.id, userId);
    const group = await this.effects.groupOf(post, userId);
    for (;;) {
      const now = new Date();
      const token = new ObjectId().toHexString();
      const edge: Omit<InteractionDocument, '_id'> = {
        p: post.id, u: userId, r: post.authorId, state: 'adding', token, at: now, entry: newPostId(userId), d: now,
        ...(group ? { gc: { t: token, to: group, at: now } } : {}),
      };
      try {
        // A new pair, or one taken back before: an edge in any other state makes the upsert collide.
        await this.edges.updateOne({ _id, u: userId, r: post.authorId, state: 'off' }, { $set: edge }, { upsert: true });
        return await this.finish({ _id, ...edge }, scope);
      } catch (error) {
        if (!isDuplicateKeyError(error)) throw error;
      }
      const current = await this.settled(_id, userId);
      if (current && current.state === 'on') return null;
    }
  }

  /** Returns once the pair is off and uncounted, with the post's counts as this removal left them (null when there was nothing to remove). */
  async remove(postId: ObjectId, userId: string, scope: Scope): Promise<PostCounts | null> {
    const _id = keyOf(postId, userId);
    for (;;) {
      const now = new Date();
      const token = new ObjectId().toHexString();
      const claimed = await this.edges.findOneAndUpdate(
        { _id, u: userId, state: 'on' },
        // Out of its group too: for an edge that counts in none, a change to none changes nothing.
        { $set: { state: 'removing', token, at: now, gc: { t: token, to: null, at: now } } },
        { returnDocument: 'after' },
      );
      if (claimed) return this.finish(claimed, scope);
      const current = await this.settled(_id, userId);
      if (!current || current.state !== 'on') return null;
    }
  }

  /**
   * Takes the edge out of the notification group of `recipient`, leaving the like or repost:
   * its actor was muted or blocked. Waits for a transition under way; a no-op for an edge in no group.
   */
  async leaveGroup(postId: ObjectId, userId: string): Promise<void> {
    const _id = keyOf(postId, userId);
    for (;;) {
      const now = new Date();
      const token = new ObjectId().toHexString();
      const claimed = await this.edges.findOneAndUpdate(
        { _id, u: userId, state: 'on', g: { $exists: true } },
        { $set: { state: 'leaving', token, at: now, gc: { t: token, to: null, at: now } } },
        { returnDocument: 'after' },
      );
      // Leaving a group queues no work: there is no request to name.
      if (claimed) return void (await this.finish(claimed, noRequest));
      const current = await this.settled(_id, userId);
      if (!current || current.state !== 'on' || !current.g) return;
    }
  }

  /**
   * Which of `postIds` the user has (or is about to have) liked or reposted: held in this process,
   * one query for those not held (see HeldViewerStates).
   */
  among(userId: string, postIds: readonly ObjectId[]): Promise<Set<string>> {
    return this.held.among(userId, postIds);
  }

  /** The user's state of these posts changed, here or on another instance. */
  forgetHeld(userId: string, postIds: readonly ObjectId[]): void {
    this.held.forget(userId, postIds);
  }

  private async amongStored(userId: string, postIds: readonly ObjectId[]): Promise<Set<string>> {
    const docs = await this.edges
      .find({ _id: { $in: postIds.map((id) => keyOf(id, userId)) }, u: userId, state: { $in: present } }, { projection: { p: 1 } })
      .toArray();
    return new Set(docs.map((doc) => doc.p.toHexString()));
  }

  /** Whether the user has liked or reposted the post, or is about to (an add in flight always completes). */
  async isOn(postId: ObjectId, userId: string): Promise<boolean> {
    const edge = await this.edges.findOne({ _id: keyOf(postId, userId), u: userId }, { projection: { state: 1 } });
    return edge !== null && present.includes(edge.state);
  }

  /** The user's own edges, for undoing them one by one when the account goes. */
  ofUser(userId: string, limit: number): Promise<InteractionDocument[]> {
    return this.edges.find({ u: userId, state: { $in: ['adding', 'on', 'removing', 'leaving'] } }).limit(limit).toArray();
  }

  /** The user's edges counted in (or joining) a group of `recipient`: what a mute or block takes out. */
  async inGroupsOf(userId: string, recipient: string): Promise<InteractionDocument[]> {
    const edges = await this.edges.find({ u: userId, r: recipient }, { projection: { p: 1, g: 1, gc: 1 } }).toArray();
    return edges.filter((edge) => edge.g || edge.gc?.to);
  }

  /**
   * A deleted account's edges, once every like and repost of it is taken back: their tokens are
   * pruned and the edges go, so nothing names the account any more.
   */
  async forgetUser(userId: string): Promise<void> {
    while ((await this.pruneSettled({ u: userId })) > 0);
    await this.edges.deleteMany({ u: userId, state: 'off' });
  }

  /** The edges of a post that no longer exists: their count went with it. */
  async forgetPost(postId: ObjectId): Promise<void> {
    await this.edges.deleteMany({ p: postId });
  }

  /** A group's members after `below`, in the order the group shows them (see GroupMembers). */
  async *membersAfter(group: string, below: GroupActor): AsyncIterable<InteractionDocument> {
    yield* this.edges
      .find({ g: group, $or: [{ ga: { $lt: below.at } }, { ga: below.at, u: { $lt: below.u } }] }, { projection: { u: 1, g: 1, ga: 1, gc: 1 } })
      .sort({ g: 1, ga: -1, u: -1 })
      .batchSize(50);
  }

  /** Edges with a change into `group` under way. */
  membersJoining(group: string): Promise<InteractionDocument[]> {
    return this.edges.find({ 'gc.to': group }, { projection: { u: 1, g: 1, ga: 1, gc: 1 } }).toArray();
  }

  /**
   * Names the post's author on every edge stored before edges carried it (`r`, part of the shard
   * key); an edge whose post is gone goes, as a deletion would have taken it. Idempotent, in
   * batches, so a start killed half-way resumes where it stopped. Returns how many edges it changed.
   */
  async nameEveryRecipient(authorsOf: (postIds: ObjectId[]) => Promise<Map<string, string>>): Promise<number> {
    let changed = 0;
    for (;;) {
      const unnamed = await this.edges.find({ r: { $exists: false } }, { projection: { p: 1 } }).limit(pruneBatch).toArray();
      if (unnamed.length === 0) return changed;
      const authors = await authorsOf([...new Map(unnamed.map((edge) => [edge.p.toHexString(), edge.p])).values()]);
      await this.edges.bulkWrite(
        unnamed.map((edge) => {
          const author = authors.get(edge.p.toHexString());
          const filter = { _id: edge._id, r: { $exists: false } };
          return author ? { updateOne: { filter, update: { $set: { r: author } } } } : { deleteOne: { filter } };
        }),
        { ordered: false },
      );
      changed += unnamed.length;
    }
  }

  /** Finishes transitions whose request died. Returns how many it took over. */
  async repairStalled(limit = 100): Promise<number> {
    const stalled = await findStalled(this.edges, { state: { $in: ['adding', 'removing', 'leaving'] }, at: { $lt: stalledSince(staleChangeMs) } }, { limit });
    return finishEach(stalled, (edge) => this.takeOver(edge));
  }

  /**
   * One pass of the sweep that drops the tokens settled transitions left on posts and groups, in
   * three writes for up to `pruneBatch` edges; taken-back edges go with theirs. Returns how many
   * edges it pruned.
   */
  async pruneSettled(only: { u?: string } = {}): Promise<number> {
    const settled = await findStalled(this.edges, { tp: true, ...only }, { limit: pruneBatch, projection: { prune: 1, p: 1, u: 1, r: 1, state: 1 } });
    if (settled.length === 0) return 0;
    const byPost = new Map<string, { postId: ObjectId; tokens: string[] }>();
    for (const edge of settled) {
      for (const { t, left } of edge.prune ?? []) {
        // A group leave of a mute left no token on the post.
        if (left && edge.state === 'on') continue;
        const post = byPost.get(edge.p.toHexString()) ?? { postId: edge.p, tokens: [] };
        post.tokens.push(t);
        byPost.set(edge.p.toHexString(), post);
      }
    }
    await Promise.all([this.counters.pruneTokens([...byPost.values()]), this.effects.pruneGroupTokens(groupTokens(settled.map((edge) => ({ recipient: edge.r, prune: edge.prune }))))]);
    const cleaned = settled.map((edge) => {
      const tokens = (edge.prune ?? []).map(({ t }) => t);
      // Nothing recorded since the read but tokens pruned now (by this pass or a racing one).
      return { edge, tokens, onlyPruned: { _id: edge._id, u: edge.u, prune: { $not: { $elemMatch: { t: { $nin: tokens } } } } } };
    });
    // A present edge is clean and a taken-back one goes, unless a transition settled meanwhile: then
    // only what was pruned leaves, and the newer tokens wait for the next pass. Updates first, then
    // deletes: one command each.
    await this.edges.bulkWrite(
      [
        ...cleaned.flatMap(({ edge, tokens, onlyPruned }) => [
          // The events its last write carried go too: heard long since.
          ...(edge.state === 'off' ? [] : [{ updateOne: { filter: onlyPruned, update: { $unset: { tp: '' as const, prune: '' as const, [carriedEventsField]: '' as const } } } }]),
          { updateOne: { filter: { _id: edge._id, u: edge.u, tp: true as const }, update: { $pull: { prune: { t: { $in: tokens } } } } } },
        ]),
        ...cleaned.filter(({ edge }) => edge.state === 'off').map(({ onlyPruned }) => ({ deleteOne: { filter: { ...onlyPruned, state: 'off' as const } } })),
      ],
      { ordered: true, ...sweepQuery },
    );
    return settled.length;
  }

  /**
   * Waits until the pair is at rest and returns it (null when absent). A transition that stays
   * in flight past `staleChangeMs` lost its request: this caller finishes it.
   */
  private async settled(_id: string, userId: string): Promise<InteractionDocument | null> {
    for (const backoff = new Backoff(); ; ) {
      const current = await this.edges.findOne({ _id, u: userId });
      if (!current || current.state === 'on' || current.state === 'off') return current;
      if (Date.now() - current.at.getTime() > staleChangeMs) await this.takeOver(current);
      else await backoff.wait();
    }
  }

  /** Claims a stale transition by renewing its time, so only one taker finishes it. */
  private async takeOver(edge: InteractionDocument): Promise<boolean> {
    const claimed = await this.edges.findOneAndUpdate(
      { _id: edge._id, u: edge.u, token: edge.token, at: edge.at },
      { $set: { at: new Date() } },
      { returnDocument: 'after' },
    );
    if (!claimed) return false;
    await this.finish(claimed, noRequest);
    return true;
  }

  /**
   * The count and the effects beside each other (each guarded by the edge's token), then the edge
   * settles, recording the tokens it left for the sweep. Returns the post's counts as the count
   * change left them, null when it was applied before (a replay) or the post is gone.
   */
  private async finish(edge: InteractionDocument, scope: Scope): Promise<PostCounts | null> {
    const token = edge.token!;
    const held = { _id: edge._id, u: edge.u, token };
    const group = edge.gc?.to ?? edge.g;
    const left = edge.state !== 'adding' && group ? { left: true as const } : {};
    const prune = { $push: { prune: { t: token, ...(group ? { g: group } : {}), ...left } } };
    let counts: PostCounts | null = null;
    let events: ChangeEvent[] = [];
    let settled: { $set: Record<string, unknown>; $unset: Record<string, ''> };
    switch (edge.state) {
      case 'adding': {
        let applied: Promise<PostCounts | null> | undefined;
        const count = () => (applied ??= this.counters.apply(edge.p, this.count, 1, token));
        events = await this.effects.adding(edge, count, scope);
        counts = await count();
        const joined = edge.gc?.to ? { g: edge.gc.to, ga: edge.gc.at } : {};
        settled = { $set: { state: 'on', tp: true, ...joined }, $unset: { token: '', gc: '' } };
        break;
      }
      case 'removing': {
        [counts, events] = await Promise.all([this.counters.apply(edge.p, this.count, -1, token), this.effects.removing(edge, this, scope)]);
        settled = { $set: { state: 'off', tp: true }, $unset: { token: '', gc: '', g: '', ga: '' } };
        break;
      }
      case 'leaving':
        events = await this.effects.leaving(edge, this);
        settled = { $set: { state: 'on', tp: true }, $unset: { token: '', gc: '', g: '', ga: '' } };
        break;
      default:
        return null;
    }
    const viewerChanged = edge.state !== 'leaving';
    // The post's counts as this change left them (unknown to a replay, whose count was applied
    // before), and the actor's state of it, with whatever the effects announce: carried by the
    // edge's settling write, which every instance's stream reads (or heard in process after it).
    const announced = viewerChanged ? [...events, counted(edge.p, counts ?? 'stale', { id: edge.u, state: this.state })] : events;
    await this.changes.publishWithin(announced, async (carried) => {
      await this.edges.updateOne(held, { ...settled, $set: { ...settled.$set, ...(carried ? { [carriedEventsField]: carried } : {}) }, ...prune });
      if (viewerChanged) this.held.forget(edge.u, [edge.p]);
    });
    return viewerChanged ? counts : null;
  }
}
