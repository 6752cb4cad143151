import type { Db, Filter } from 'mongodb';
import type { TimeBucketsOptions } from '../../config.js';
import type { ContentService } from '../../content/contentService.js';
import type { PostRecord } from '../../records/posts.js';
import type { FollowKey } from '../../records/users.js';
import type { Page, PageRequest, PostPosition } from '../../content/position.js';
import { walkBuckets, type BucketSource } from './bucketWalk.js';
import { toEntryDocument, type EntryDocument } from '../../records/posts.js';
import { bulkWriteIgnoringDuplicates } from '../entries.js';
import { FanoutOnWrite } from './fanoutOnWrite.js';
import type { Delivery, FeedBackend } from '../feedBackend.js';
import type { TimelineEntry } from '../timelineEntry.js';
import { plannedExpiry, plannedIndexes } from '../../db/shardPlan.js';

/** One user's entries for one time span: `_t` is the span's number since the epoch. */
export interface TimedBucketDocument {
  _id: { _t: number; _u: string };
  _c: EntryDocument[];
  /** The end of the bucket's span: TIMELINE_RETENTION_DAYS after it, the bucket expires. */
  e: Date;
}

/**
 * Fanout on write into timed buckets (Socialite's FanoutOnWriteTimeBuckets): a post is upserted
 * with `$push` into each recipient's bucket for the post's time span, so buckets partition time
 * and reading walks them newest first.
 */
export class TimeBuckets extends FanoutOnWrite<TimedBucketDocument, TimeBucketsOptions> implements FeedBackend {
  readonly strategy = 'time-buckets' as const;
  readonly rebuild = 'redeliver' as const;

  constructor(db: Db, content: ContentService, options: TimeBucketsOptions) {
    super(db, 'timed_buckets', content, options);
  }

  async ensureIndexes(): Promise<void> {
    // The _id index covers exact buckets; walking one user's buckets in time order needs this one.
    await plannedIndexes(this.timelines, [{ key: { '_id._u': 1, '_id._t': -1 }, name: 'user_newest_bucket' }]);
    // A reader who scrolls past retention finds the end of their timeline there.
    await plannedExpiry(this.db, this.timelines, 'e', 'bucket_retention', Math.round(this.options.retentionMs / 1000));
    await this.expireEveryBucket();
  }

  /** Gives buckets written before buckets expired their end, so retention reaches them too. Idempotent, in batches. */
  private async expireEveryBucket(): Promise<void> {
    for (;;) {
      const unexpiring = await this.timelines.find({ e: { $exists: false } }, { projection: { _id: 1 } }).limit(1000).toArray();
      if (unexpiring.length === 0) return;
      await this.timelines.bulkWrite(
        unexpiring.map(({ _id }) => ({ updateOne: { filter: { _id, e: { $exists: false } }, update: { $set: { e: this.endOf(_id._t) } } } })),
        { ordered: false },
      );
    }
  }

  async followed(followerId: string, followeeId: string): Promise<void> {
    const recent = await this.recentPostsOf(followeeId, this.options.followBackfill);
    await this.deliverTo([followerId], recent);
  }

  /** The followees' entries go, then the buckets they leave empty: one update and one delete, in order. */
  async removeUnfollowed(unfollows: readonly FollowKey[]): Promise<void> {
    const followers = [...new Set(unfollows.map(({ followerId }) => followerId))];
    await this.timelines.bulkWrite(
      [
        ...unfollows.map(({ followerId, followeeId }) => ({
          updateMany: { filter: { '_id._u': followerId, '_c._a': followeeId }, update: { $pull: { _c: { _a: followeeId } } } },
        })),
        { deleteMany: { filter: { '_id._u': { $in: followers }, _c: { $size: 0 } } } },
      ],
      { ordered: true },
    );
  }

  /** Buckets are refilled by redelivering what fanout skipped (see FeedService). */
  protected ownedBy(userId: string): Filter<TimedBucketDocument> {
    return { '_id._u': userId } as Filter<TimedBucketDocument>;
  }

  async readerReturned(): Promise<void> {}

  timeline(userId: string, request: PageRequest): Promise<Page<TimelineEntry>> {
    const older = request.direction === 'older';
    const span = this.options.bucketSpanMs;
    const start = request.from ? this.bucketOf(request.from.createdAt) : null;
    const source: BucketSource<TimedBucketDocument> = {
      fetch: (after, limit) => {
        const bound = after ? after._id._t + (older ? -1 : 1) : start;
        const range = bound === null ? {} : { '_id._t': older ? { $lte: bound } : { $gte: bound } };
        return this.timelines
          .find({ '_id._u': userId, ...range })
          .sort({ '_id._t': older ? -1 : 1 })
          .limit(limit)
          .toArray();
      },
      // Buckets partition time: everything past this bucket lies beyond its span.
      reachAfter: (bucket) => new Date(older ? bucket._id._t * span - 1 : (bucket._id._t + 1) * span),
    };
    return walkBuckets(source, request, this.options.readBatch);
  }

  protected holders(recipients: readonly string[], post: PostRecord): Filter<TimedBucketDocument> {
    return { '_id._u': { $in: [...recipients] }, '_id._t': this.bucketOf(post.createdAt), '_c._id': post.id } as Filter<TimedBucketDocument>;
  }

  async removeFrom(recipients: readonly string[], post: PostPosition): Promise<void> {
    await this.timelines.updateMany(
      { '_id._u': { $in: [...recipients] }, '_id._t': this.bucketOf(post.createdAt) },
      { $pull: { _c: { _id: post.id } } },
    );
  }

  private endOf(bucket: number): Date {
    return new Date((bucket + 1) * this.options.bucketSpanMs);
  }

  private bucketOf(time: Date): number {
    return Math.floor(time.getTime() / this.options.bucketSpanMs);
  }

  /**
   * One upsert per recipient and post, guarded by `$ne`: where the entry is already in its bucket
   * the filter misses, the upsert collides on `_id`, and that collision is ignored. A post has
   * exactly one bucket, so this guard alone makes delivery idempotent.
   */
  async deliverEach(deliveries: readonly Delivery[]): Promise<void> {
    const operations = deliveries.flatMap(({ recipients, posts }) =>
      recipients.flatMap((userId) =>
        posts.map((post) => ({
          updateOne: {
            filter: { _id: { _t: this.bucketOf(post.createdAt), _u: userId }, '_c._id': { $ne: post.id } },
            update: { $push: { _c: toEntryDocument(post, this.options.content) }, $setOnInsert: { e: this.endOf(this.bucketOf(post.createdAt)) } },
            upsert: true,
          },
        })),
      ),
    );
    await bulkWriteIgnoringDuplicates(this.timelines, operations);
  }
}
