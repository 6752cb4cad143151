import type { Db, Filter, ObjectId } from 'mongodb';
import type { SizedBucketsOptions } from '../../config.js';
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
import { plannedIndexes } from '../../db/shardPlan.js';

/**
 * Up to `TIMELINE_BUCKET_SIZE` entries of one user (`_u`), with `_s` the slots used. `_lo`/`_hi`
 * bound the entries' times: buckets fill in arrival order, and arrival order is not time order
 * (a follow backfills older posts; concurrent deliveries race), so reads go by these bounds.
 */
export interface SizedBucketDocument {
  _id: ObjectId;
  _u: string;
  _s: number;
  _c: EntryDocument[];
  _lo: Date;
  _hi: Date;
}

/**
 * Fanout on write into sized buckets (Socialite's FanoutOnWriteSizedBuckets). Each delivery is an
 * update of the user's open bucket guarded by `_s < size`, so concurrent deliveries can never
 * overfill one; with `upsert` the same command opens a new bucket when every bucket is full.
 */
export class SizedBuckets extends FanoutOnWrite<SizedBucketDocument, SizedBucketsOptions> implements FeedBackend {
  readonly strategy = 'sized-buckets' as const;
  readonly rebuild = 'redeliver' as const;

  constructor(db: Db, content: ContentService, options: SizedBucketsOptions) {
    super(db, 'sized_buckets', content, options);
  }

  async ensureIndexes(): Promise<void> {
    await plannedIndexes(this.timelines, [
      { key: { _u: 1, _hi: -1, _id: -1 }, name: 'user_newest_reach' },
      { key: { _u: 1, _lo: 1, _id: 1 }, name: 'user_oldest_reach' },
      // Unique across a user's buckets: a post can sit in at most one of them, however deliveries
      // race (a replayed sub-task, a backfill, a redelivery). Empty buckets are left out.
      {
        key: { _u: 1, '_c._id': 1 },
        name: 'user_entry_unique',
        unique: true,
        partialFilterExpression: { '_c._id': { $exists: true } },
      },
    ]);
  }

  /** Oldest first, so the backfill fills buckets in time order. */
  async followed(followerId: string, followeeId: string): Promise<void> {
    const recent = await this.recentPostsOf(followeeId, this.options.followBackfill);
    await this.deliverTo([followerId], recent.reverse());
  }

  /** Buckets are refilled by redelivering what fanout skipped (see FeedService). */
  protected ownedBy(userId: string): Filter<SizedBucketDocument> {
    return { _u: userId } as Filter<SizedBucketDocument>;
  }

  async readerReturned(): Promise<void> {}

  async removeUnfollowed(unfollows: readonly FollowKey[]): Promise<void> {
    await this.timelines.bulkWrite(
      unfollows.map(({ followerId, followeeId }) => ({ updateMany: { filter: { _u: followerId, '_c._a': followeeId }, update: { $pull: { _c: { _a: followeeId } } } } })),
      { ordered: false },
    );
  }

  timeline(userId: string, request: PageRequest): Promise<Page<TimelineEntry>> {
    const older = request.direction === 'older';
    const [reachField, order] = older ? (['_hi', -1] as const) : (['_lo', 1] as const);
    const operator = older ? '$lt' : '$gt';
    // A bucket can hold entries beyond the boundary only if its far end lies beyond it.
    const boundary: Filter<SizedBucketDocument> = request.from
      ? { [older ? '_lo' : '_hi']: { [older ? '$lte' : '$gte']: request.from.createdAt } }
      : {};
    const source: BucketSource<SizedBucketDocument> = {
      fetch: (after, limit) => {
        const continuation: Filter<SizedBucketDocument> = after
          ? {
              $or: [
                { [reachField]: { [operator]: after[reachField] } },
                { [reachField]: after[reachField], _id: { [operator]: after._id } },
              ],
            }
          : {};
        return this.timelines
          .find({ _u: userId, ...boundary, ...continuation })
          .sort({ [reachField]: order, _id: order })
          .limit(limit)
          .toArray();
      },
      reach: (bucket) => bucket[reachField],
    };
    return walkBuckets(source, request, this.options.readBatch);
  }

  protected holders(recipients: readonly string[], post: PostRecord): Filter<SizedBucketDocument> {
    return { _u: { $in: [...recipients] }, '_c._id': post.id } as Filter<SizedBucketDocument>;
  }

  async removeFrom(recipients: readonly string[], post: PostPosition): Promise<void> {
    await this.timelines.updateMany({ _u: { $in: [...recipients] }, '_c._id': post.id }, { $pull: { _c: { _id: post.id } } });
  }

  /**
   * One update of each recipient's open bucket, guarded by `_s < size` and by `$ne` on that
   * bucket; with `upsert` the same command opens a new bucket when every bucket is full. An entry
   * already in another bucket makes the write break the unique `user_entry_unique` index, and that
   * duplicate-key failure is the "already delivered" answer. Ordered per recipient when several
   * posts go in at once, so a backfill fills buckets oldest first and their time ranges stay narrow.
   */
  async deliverEach(deliveries: readonly Delivery[]): Promise<void> {
    const size = this.options.bucketSize;
    const operations = deliveries.flatMap(({ recipients, posts }) =>
      posts.flatMap((post) =>
        recipients.map((userId) => ({
          updateOne: {
            filter: { _u: userId, _s: { $lt: size }, '_c._id': { $ne: post.id } },
            update: {
              $push: { _c: toEntryDocument(post, this.options.content) },
              $inc: { _s: 1 },
              $min: { _lo: post.createdAt },
              $max: { _hi: post.createdAt },
            },
            upsert: true,
          },
        })),
      ),
    );
    await bulkWriteIgnoringDuplicates(this.timelines, operations);
  }
}
