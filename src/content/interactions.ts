import { ObjectId, type Collection, type Db } from 'mongodb';
import { isDuplicateKeyError } from '../errors.js';
import { PostCounters, staleChangeMs, type CountName } from './postCounters.js';
import { Backoff, findStalled, finishEach, stalledSince } from '../db/stalledWork.js';

/**
 * One user's like or repost of one post (Weibo's existence service): the `_id` is the pair, so
 * "has the viewer liked these posts" is one `_id $in` query for a page. `state` is `on` at rest;
 * `adding`/`removing` while a request brings the post's count (and any effects) in line.
 */
export interface InteractionDocument {
  /** `<post id hex>:<handle>`. */
  _id: string;
  p: ObjectId;
  u: string;
  state: 'adding' | 'on' | 'removing';
  /** The count change under way (see PostCounters). */
  token?: string;
  /** When the state last changed: a transition this old has lost its request. */
  at: Date;
  /** For a repost: the id and time of the repost's own `content` document. */
  entry: ObjectId;
  d: Date;
}

/** Work that belongs to a transition, run before the count changes; must be idempotent. */
export interface InteractionEffects {
  adding(edge: InteractionDocument): Promise<void>;
  removing(edge: InteractionDocument): Promise<void>;
}

const noEffects: InteractionEffects = { adding: async () => {}, removing: async () => {} };
const keyOf = (postId: ObjectId, userId: string) => `${postId.toHexString()}:${userId}`;

/**
 * Likes or reposts: idempotent toggles whose count on the post is exact under any concurrency.
 * The unique `_id` lets one of many racing adds in; the others wait until it is counted. A
 * transition found in flight is waited for, and taken over once it is stale (its request died).
 */
export class Interactions {
  readonly edges: Collection<InteractionDocument>;

  constructor(
    db: Db,
    name: 'likes' | 'reposts',
    private readonly counters: PostCounters,
    private readonly count: CountName,
    /** Reposts bring their own entry into timelines (the feed's PostDelivery); likes have none. */
    private readonly effects: InteractionEffects = noEffects,
  ) {
    this.edges = db.collection<InteractionDocument>(name);
  }

  async ensureIndexes(): Promise<void> {
    await this.edges.createIndexes([
      { key: { u: 1 }, name: 'by_user' },
      { key: { p: 1 }, name: 'by_post' },
      { key: { state: 1, at: 1 }, name: 'in_transition' },
    ]);
  }

  /** Returns once the pair is on and counted, whoever made it so. */
  async add(postId: ObjectId, userId: string): Promise<void> {
    const _id = keyOf(postId, userId);
    for (;;) {
      const now = new Date();
      const edge: InteractionDocument = {
        _id, p: postId, u: userId, state: 'adding', token: new ObjectId().toHexString(), at: now, entry: new ObjectId(), d: now,
      };
      try {
        await this.edges.insertOne(edge);
        return await this.finish(edge);
      } catch (error) {
        if (!isDuplicateKeyError(error)) throw error;
      }
      const current = await this.settled(_id);
      if (current) return;
    }
  }

  /** Returns once the pair is off and uncounted. */
  async remove(postId: ObjectId, userId: string): Promise<void> {
    const _id = keyOf(postId, userId);
    for (;;) {
      const claimed = await this.edges.findOneAndUpdate(
        { _id, state: 'on' },
        { $set: { state: 'removing', token: new ObjectId().toHexString(), at: new Date() } },
        { returnDocument: 'after' },
      );
      if (claimed) return this.finish(claimed);
      if (!(await this.settled(_id))) return;
    }
  }

  /** Which of `postIds` the user has (or is about to have) liked or reposted: one query. */
  async among(userId: string, postIds: readonly ObjectId[]): Promise<Set<string>> {
    if (postIds.length === 0) return new Set();
    const docs = await this.edges
      .find({ _id: { $in: postIds.map((id) => keyOf(id, userId)) }, state: { $ne: 'removing' } }, { projection: { p: 1 } })
      .toArray();
    return new Set(docs.map((doc) => doc.p.toHexString()));
  }

  /** Whether the user has liked or reposted the post, or is about to (an add in flight always completes). */
  async isOn(postId: ObjectId, userId: string): Promise<boolean> {
    const edge = await this.edges.findOne({ _id: keyOf(postId, userId) }, { projection: { state: 1 } });
    return edge !== null && edge.state !== 'removing';
  }

  /** The user's own edges, for undoing them one by one when the account goes. */
  ofUser(userId: string, limit: number): Promise<InteractionDocument[]> {
    return this.edges.find({ u: userId }).limit(limit).toArray();
  }

  /** The edges of a post that no longer exists: their count went with it. */
  async forgetPost(postId: ObjectId): Promise<void> {
    await this.edges.deleteMany({ p: postId });
  }

  /** Finishes transitions whose request died. Returns how many it took over. */
  async repairStalled(limit = 100): Promise<number> {
    const stalled = await findStalled(this.edges, { state: { $in: ['adding', 'removing'] }, at: { $lt: stalledSince(staleChangeMs) } }, { limit });
    return finishEach(stalled, (edge) => this.takeOver(edge));
  }

  /**
   * Waits until the pair is at rest and returns it (null when absent). A transition that stays
   * in flight past `staleChangeMs` lost its request: this caller finishes it.
   */
  private async settled(_id: string): Promise<InteractionDocument | null> {
    for (const backoff = new Backoff(); ; ) {
      const current = await this.edges.findOne({ _id });
      if (!current || current.state === 'on') return current;
      if (Date.now() - current.at.getTime() > staleChangeMs) await this.takeOver(current);
      else await backoff.wait();
    }
  }

  /** Claims a stale transition by renewing its time, so only one taker finishes it. */
  private async takeOver(edge: InteractionDocument): Promise<boolean> {
    const claimed = await this.edges.findOneAndUpdate(
      { _id: edge._id, token: edge.token, at: edge.at },
      { $set: { at: new Date() } },
      { returnDocument: 'after' },
    );
    if (!claimed) return false;
    await this.finish(claimed);
    return true;
  }

  private async finish(edge: InteractionDocument): Promise<void> {
    const token = edge.token!;
    const held = { _id: edge._id, token };
    if (edge.state === 'adding') {
      await this.effects.adding(edge);
      await this.counters.change(edge.p, this.count, 1, token, () =>
        this.edges.updateOne(held, { $set: { state: 'on' }, $unset: { token: '' } }),
      );
    } else {
      await this.effects.removing(edge);
      await this.counters.change(edge.p, this.count, -1, token, () => this.edges.deleteOne(held));
    }
  }
}
