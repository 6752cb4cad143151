import type { AnyBulkWriteOperation, Collection, Db } from 'mongodb';
import { plannedCollection, plannedExpiry, plannedIndexes } from '../db/shardPlan.js';

const hourMs = 60 * 60 * 1000;
/** Trends count the last 24 hourly buckets, the current one included. */
const windowHours = 24;
/** A bucket and a use outlive the window by an hour, then expire by their TTL index. */
const keptMs = (windowHours + 1) * hourMs;
/** The ranking is read again after this long, or at once after this process counted a use. */
const heldMs = 30_000;
/** Most trends anyone may ask for. */
export const maxTrends = 50;

/** One tag's counts in one hour: `a` accounts whose latest use of it fell in that hour, `p` posts. */
interface TagHourDocument {
  _id: { h: Date; t: string };
  h: Date;
  t: string;
  a: number;
  p: number;
  x: Date;
}

/** An account's latest use of a tag: the hour it is counted in. */
interface TagUseDocument {
  _id: { t: string; a: string };
  h: Date;
  x: Date;
}

export interface TagTrend {
  tag: string;
  accounts: number;
  posts: number;
}

const hourOf = (at: Date): Date => new Date(Math.floor(at.getTime() / hourMs) * hourMs);

/**
 * Trending tags, counted as public posts arrive, never by reading a day of posts. Each tag has a
 * document per hour (`tag_hours`) counting its posts and the accounts whose *latest* use of it
 * fell in that hour, so the sum over the last 24 buckets counts each account once however often it
 * used the tag: when an account uses a tag again in a later hour, it moves from its old bucket to
 * the new one (`tag_uses` remembers which). Both expire by TTL an hour after they leave the window.
 * A post with tags costs one `findOneAndUpdate` per tag (at most 10, in parallel) and one
 * `bulkWrite`; a post without tags costs nothing.
 */
export class TagTrends {
  private readonly hours: Collection<TagHourDocument>;
  private readonly uses: Collection<TagUseDocument>;
  private held: { at: number; trends: TagTrend[] } | null = null;

  constructor(private readonly db: Db) {
    this.hours = plannedCollection<TagHourDocument>(db, 'tag_hours');
    this.uses = plannedCollection<TagUseDocument>(db, 'tag_uses');
  }

  async ensureIndexes(): Promise<void> {
    await Promise.all([
      plannedIndexes(this.hours, [{ key: { h: 1 }, name: 'hour' }]),
      plannedExpiry(this.db, this.hours, 'x', 'expires', 0),
      plannedExpiry(this.db, this.uses, 'x', 'expires', 0),
    ]);
  }

  /** Counts one public post's tags for its author at `at`. */
  async count(authorId: string, tags: readonly string[], at: Date): Promise<void> {
    if (tags.length === 0) return;
    const hour = hourOf(at);
    const expires = new Date(hour.getTime() + keptMs);
    const windowStart = hour.getTime() - (windowHours - 1) * hourMs;
    // Each use moves atomically, so two racing posts of one account count it once.
    const previous = await Promise.all(
      tags.map((t) =>
        this.uses.findOneAndUpdate({ _id: { t, a: authorId } }, { $max: { h: hour, x: expires } }, { upsert: true, returnDocument: 'before', projection: { h: 1 } }),
      ),
    );
    const writes: AnyBulkWriteOperation<TagHourDocument>[] = [];
    tags.forEach((t, index) => {
      const before = previous[index]?.h ?? null;
      const moves = before === null || before.getTime() < hour.getTime();
      writes.push({
        updateOne: {
          filter: { _id: { h: hour, t } },
          update: { $inc: { p: 1, a: moves ? 1 : 0 }, $setOnInsert: { h: hour, t, x: expires } },
          upsert: true,
        },
      });
      // Out of its old bucket, unless that bucket has left the window already.
      if (moves && before !== null && before.getTime() >= windowStart) writes.push({ updateOne: { filter: { _id: { h: before, t } }, update: { $inc: { a: -1 } } } });
    });
    await this.hours.bulkWrite(writes, { ordered: false });
    this.held = null;
  }

  /** The tags most accounts used over the last 24 hours, then most posts, then by name. */
  async trending(first: number, now = new Date()): Promise<TagTrend[]> {
    if (!this.held || now.getTime() - this.held.at > heldMs) this.held = { at: now.getTime(), trends: await this.rank(now) };
    return this.held.trends.slice(0, first);
  }

  private async rank(now: Date): Promise<TagTrend[]> {
    const since = new Date(hourOf(now).getTime() - (windowHours - 1) * hourMs);
    const ranked = await this.hours
      .aggregate<{ _id: string; a: number; p: number }>([
        { $match: { h: { $gte: since } } },
        { $group: { _id: '$t', a: { $sum: '$a' }, p: { $sum: '$p' } } },
        { $match: { a: { $gt: 0 } } },
        { $sort: { a: -1, p: -1, _id: 1 } },
        { $limit: maxTrends },
      ])
      .toArray();
    return ranked.map((trend) => ({ tag: trend._id, accounts: trend.a, posts: trend.p }));
  }
}
