import type { Db, Filter, ObjectId } from 'mongodb';
import type { TimelineOptions } from '../config.js';
import type { ContentService, PostRecord } from '../content/contentService.js';
import type { Page, PageRequest } from '../content/position.js';
import type { UserGraphService } from '../graph/userGraphService.js';
import { walkBuckets, type BucketSource } from './bucketWalk.js';
import { toEntryDocument, type EntryDocument } from './entries.js';
import { FanoutOnWrite } from './fanoutOnWrite.js';
import type { FeedBackend, TimelineEntry } from './feedBackend.js';

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
export class SizedBuckets extends FanoutOnWrite<SizedBucketDocument> implements FeedBackend {
  readonly strategy = 'sized-buckets' as const;
  readonly rebuild = 'redeliver' as const;

  constructor(db: Db, graph: UserGraphService, content: ContentService, options: TimelineOptions) {
    super(db, 'sized_buckets', graph, content, options);
  }

  async ensureIndexes(): Promise<void> {
    await this.timelines.createIndexes([
      { key: { _u: 1, _hi: -1, _id: -1 }, name: 'user_newest_reach' },
      { key: { _u: 1, _lo: 1, _id: 1 }, name: 'user_oldest_reach' },
      { key: { _u: 1, '_c._id': 1 }, name: 'user_entry' },
    ]);
  }

  /** Only the posts not already there, so a repeated follow adds nothing twice. */
  async followed(followerId: string, followeeId: string): Promise<void> {
    const recent = await this.recentPostsOf(followeeId, this.options.followBackfill);
    if (recent.length === 0) return;
    const present = await this.timelines
      .find({ _u: followerId, '_c._id': { $in: recent.map((post) => post.id) } }, { projection: { '_c._id': 1 } })
      .toArray();
    const presentIds = new Set(present.flatMap((bucket) => bucket._c.map((entry) => entry._id.toHexString())));
    await this.push([followerId], recent.filter((post) => !presentIds.has(post.id.toHexString())).reverse());
  }

  async unfollowed(followerId: string, followeeId: string): Promise<void> {
    await this.timelines.updateMany({ _u: followerId }, { $pull: { _c: { _a: followeeId } } });
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

  protected async remove(recipients: readonly string[], post: PostRecord): Promise<void> {
    await this.timelines.updateMany({ _u: { $in: [...recipients] }, '_c._id': post.id }, { $pull: { _c: { _id: post.id } } });
  }

  /** Ordered, so a backfill fills buckets oldest first and each bucket's time range stays narrow. */
  protected async push(recipients: readonly string[], posts: readonly PostRecord[]): Promise<void> {
    if (recipients.length === 0 || posts.length === 0) return;
    const size = this.options.bucketSize;
    await this.timelines.bulkWrite(
      posts.flatMap((post) =>
        recipients.map((userId) => ({
          updateOne: {
            filter: { _u: userId, _s: { $lt: size } },
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
      { ordered: posts.length > 1 },
    );
  }
}
