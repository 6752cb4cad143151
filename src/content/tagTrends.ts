import type { AnyBulkWriteOperation, Collection, Db } from 'mongodb';
import { duplicateKeyFailures } from '../errors.js';
import { plannedCollection, plannedExpiry, plannedIndexes } from '../db/shardPlan.js';

const hourMs = 60 * 60 * 1000;
/** Trends count the last 24 hourly buckets, the current one included. */
const windowHours = 24;
/** A bucket and a use outlive the window by an hour, then expire by their TTL index. */
const keptMs = (windowHours + 1) * hourMs;
/** The ranking is read again after this long, or at once after this process counted a use. */
const heldMs = 30_000;
/**
 * Posts remembered per account and tag as counted: a replay comes within a task's lease, and no
 * account posts this many posts with one tag in that time (the post rate limit).
 */
const rememberedPosts = 20;
/** Rounds of a count whose writes lost to a racing worker's, before the task is retried later. */
const maxRounds = 5;
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

/**
 * An account's latest use of a tag: the hour it is counted in. `v` changes with every write, so a
 * count written from an older reading loses (see `countPosts`); `ps` names the last posts counted
 * for this account and tag, so a post counted again (a replayed task) counts nothing.
 */
interface TagUseDocument {
  _id: { t: string; a: string };
  h: Date;
  x: Date;
  v?: number;
  ps?: string[];
}

/** One public post's tags, to count: its id makes counting it again a no-op. */
export interface PostTagUse {
  postId: string;
  authorId: string;
  tags: readonly string[];
  at: Date;
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
 * The queue's worker counts a batch of posts at a time (feed/trendCounting.ts): one read and one
 * `bulkWrite` of `tag_uses`, one `bulkWrite` of `tag_hours`, whatever the batch's size.
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

  /**
   * Counts public posts' tags, each post once however often it is counted: a post already among
   * its account's counted posts for a tag counts nothing again. Each account and tag is written
   * only if its use is still as read (`v`); one a racing count changed first is read and counted
   * again, so two workers counting one account's posts move it once.
   */
  async countPosts(posts: readonly PostTagUse[]): Promise<void> {
    let pending = posts.filter((post) => post.tags.length > 0);
    for (let round = 0; pending.length > 0; round++) {
      if (round === maxRounds) throw new Error(`tag trends: ${pending.length} posts lost ${maxRounds} rounds to racing counts`);
      pending = await this.countRound(pending);
    }
    this.held = null;
  }

  /** One read and up to two writes; returns the posts whose use a racing count changed first. */
  private async countRound(posts: readonly PostTagUse[]): Promise<PostTagUse[]> {
    const byUse = new Map<string, { t: string; a: string; posts: Map<string, PostTagUse> }>();
    for (const post of posts) {
      for (const t of post.tags) {
        const key = JSON.stringify([t, post.authorId]);
        const use = byUse.get(key) ?? { t, a: post.authorId, posts: new Map() };
        use.posts.set(post.postId, post);
        byUse.set(key, use);
      }
    }
    const read = await this.uses.find({ _id: { $in: [...byUse.values()].map(({ t, a }) => ({ t, a })) } }).toArray();
    const current = new Map(read.map((doc) => [JSON.stringify([doc._id.t, doc._id.a]), doc]));
    const plans: { t: string; a: string; fresh: PostTagUse[]; before: Date | null; latest: Date; v: number | undefined }[] = [];
    for (const [key, { t, a, posts: used }] of byUse) {
      const doc = current.get(key);
      const counted = new Set(doc?.ps ?? []);
      const fresh = [...used.values()].filter((post) => !counted.has(post.postId));
      if (fresh.length === 0) continue;
      const before = doc?.h ?? null;
      const latest = new Date(Math.max(before?.getTime() ?? 0, ...fresh.map((post) => hourOf(post.at).getTime())));
      plans.push({ t, a, fresh, before, latest, v: doc?.v });
    }
    if (plans.length === 0) return [];
    let lost = new Set<number>();
    try {
      await this.uses.bulkWrite(
        plans.map(({ t, a, fresh, latest, v }) => ({
          updateOne: {
            // Unchanged since read, or still missing (or written before `v` existed): else the upsert's insert fails on `_id`.
            filter: { _id: { t, a }, v: v ?? { $exists: false } },
            update: {
              $set: { h: latest, x: new Date(latest.getTime() + keptMs) },
              $inc: { v: 1 },
              $push: { ps: { $each: fresh.map((post) => post.postId), $slice: -rememberedPosts } },
            },
            upsert: true,
          },
        })),
        { ordered: false },
      );
    } catch (error) {
      const failures = duplicateKeyFailures(error);
      if (!failures) throw error;
      lost = new Set(failures.map((failure) => (failure as { index: number }).index));
    }
    const buckets = new Map<string, { h: Date; t: string; p: number; a: number }>();
    const add = (h: Date, t: string, p: number, a: number) => {
      const key = JSON.stringify([h.getTime(), t]);
      const bucket = buckets.get(key) ?? { h, t, p: 0, a: 0 };
      bucket.p += p;
      bucket.a += a;
      buckets.set(key, bucket);
    };
    plans.forEach(({ t, fresh, before, latest }, index) => {
      if (lost.has(index)) return;
      for (const post of fresh) add(hourOf(post.at), t, 1, 0);
      // A late post, for an hour before the account's latest use, moves nothing.
      if (before !== null && before.getTime() >= latest.getTime()) return;
      add(latest, t, 0, 1);
      // Out of its old bucket, unless that bucket has left the window already.
      if (before !== null && before.getTime() >= latest.getTime() - (windowHours - 1) * hourMs) add(before, t, 0, -1);
    });
    const writes: AnyBulkWriteOperation<TagHourDocument>[] = [...buckets.values()]
      .filter(({ p, a }) => p !== 0 || a !== 0)
      .map(({ h, t, p, a }) =>
        p > 0 || a > 0
          ? { updateOne: { filter: { _id: { h, t } }, update: { $inc: { p, a }, $setOnInsert: { h, t, x: new Date(h.getTime() + keptMs) } }, upsert: true } }
          : { updateOne: { filter: { _id: { h, t } }, update: { $inc: { a } } } },
      );
    if (writes.length > 0) await this.hours.bulkWrite(writes, { ordered: false });
    return [...new Map(plans.filter((_, index) => lost.has(index)).flatMap(({ fresh }) => fresh.map((post) => [post.postId, post] as const))).values()];
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
