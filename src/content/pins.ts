import type { Collection, Db, ObjectId } from 'mongodb';
import { ReadThroughCache } from '../cache/readThrough.js';
import { heldCaches } from '../config.js';
import { plannedCollection } from '../db/shardPlan.js';
import { badInput, isDuplicateKeyError } from '../errors.js';

/** Posts an author may pin at once. */
export const maxPins = 5;

/** One author's pinned posts, most recently pinned first. */
interface PinsDocument {
  /** The author's handle. */
  _id: string;
  p: { id: ObjectId; at: Date }[];
}

/**
 * Pinned posts: one small document per author, so that "at most 5" holds under any interleaving
 * (the push is guarded by the list's length in the same write) and a profile reads its pins at once.
 */
export class Pins {
  private readonly pins: Collection<PinsDocument>;
  /**
   * Authors' pins held in this process: a page asks for its authors' pins to show `pinned`, and
   * pins change seldom. A change is announced as a change of the author (see `forgetHeld`).
   */
  private readonly held = new ReadThroughCache<string, { ids: ObjectId[] }>('pins', heldCaches.pins);

  constructor(db: Db) {
    this.pins = plannedCollection<PinsDocument>(db, 'pins');
  }

  /** Pins a post of the author's; pinning it again changes nothing; a sixth is BAD_USER_INPUT. */
  async pin(authorId: string, postId: ObjectId): Promise<void> {
    for (;;) {
      try {
        // Matches only when the post is not pinned and there is room; otherwise the upsert's insert collides.
        await this.pins.updateOne(
          { _id: authorId, 'p.id': { $ne: postId }, [`p.${maxPins - 1}`]: { $exists: false } },
          { $push: { p: { $each: [{ id: postId, at: new Date() }], $position: 0 } } },
          { upsert: true },
        );
        return;
      } catch (error) {
        if (!isDuplicateKeyError(error)) throw error;
      }
      const doc = await this.pins.findOne({ _id: authorId });
      if (doc?.p.some((pin) => pin.id.equals(postId))) return;
      if (doc && doc.p.length >= maxPins) throw badInput(`At most ${maxPins} posts can be pinned`);
      // Unpinned meanwhile: there is room now.
    }
  }

  async unpin(authorId: string, postId: ObjectId): Promise<void> {
    await this.pins.updateOne({ _id: authorId }, { $pull: { p: { id: postId } } });
  }

  /** The pinned post ids of these authors, most recently pinned first: one query. */
  async of(authorIds: readonly string[]): Promise<Map<string, ObjectId[]>> {
    if (authorIds.length === 0) return new Map();
    const docs = await this.pins.find({ _id: { $in: [...authorIds] } }).toArray();
    return new Map(docs.map((doc) => [doc._id, doc.p.map((pin) => pin.id)]));
  }

  /** `of`, through the in-process tier: no query for authors held. */
  async heldOf(authorIds: readonly string[]): Promise<Map<string, ObjectId[]>> {
    const held = await this.held.getMany(authorIds, async (missing) => {
      const stored = await this.of(missing);
      return new Map(missing.map((authorId) => [authorId, { ids: stored.get(authorId) ?? [] }]));
    });
    return new Map([...held].map(([authorId, { ids }]) => [authorId, ids]));
  }

  /** These authors' pins changed (here or, announced, on another instance). */
  forgetHeld(authorIds: readonly string[]): void {
    this.held.invalidate(authorIds);
  }

  /** A deleted account's pins. */
  async forget(authorId: string): Promise<void> {
    await this.pins.deleteOne({ _id: authorId });
  }
}
