import type { Collection, Db, Document, Filter } from 'mongodb';
import type { TimelineEntryOptions } from '../../config.js';
import type { ContentService } from '../../content/contentService.js';
import { bodyUpdate, type PostRecord } from '../../records/posts.js';
import type { Delivery } from '../feedBackend.js';
import { plannedCollection, type PlannedCollectionName } from '../../db/shardPlan.js';

/** What the three fanout-on-write strategies share: a collection of timelines and a way into `content`. */
export abstract class FanoutOnWrite<T extends Document, O extends TimelineEntryOptions> {
  readonly materialized = true;
  protected readonly timelines: Collection<T>;

  constructor(
    protected readonly db: Db,
    collectionName: PlannedCollectionName,
    protected readonly content: ContentService,
    protected readonly options: O,
  ) {
    this.timelines = plannedCollection<T>(db, collectionName);
  }

  async clear(): Promise<void> {
    await this.timelines.deleteMany({});
  }

  async dropTimeline(userId: string): Promise<void> {
    await this.timelines.deleteMany(this.ownedBy(userId));
  }

  /** One delivery is many deliveries of one: each strategy writes them in one bulk write. */
  deliverTo(recipients: readonly string[], posts: readonly PostRecord[]): Promise<void> {
    return this.deliverEach([{ recipients, posts }]);
  }

  abstract deliverEach(deliveries: readonly Delivery[]): Promise<void>;

  get embedsBodies(): boolean {
    return this.options.content === 'embed';
  }

  /**
   * One update of every document of these recipients that holds the entry. An entry that carries
   * a later edit than `post` is left alone: a rewrite that read the post before a newer edit landed
   * and writes after that edit's own rewrite (two workers, or one running sub-tasks side by side)
   * must not put the older text back.
   */
  async rewrite(recipients: readonly string[], post: PostRecord): Promise<void> {
    if (!this.embedsBodies || recipients.length === 0) return;
    const { editedAt } = post.body;
    const entry = { 'entry._id': post.id, ...(editedAt ? { 'entry._e': { $not: { $gt: editedAt } } } : {}) };
    await this.rewriteWhere(this.holders(recipients, post), bodyUpdate(post.body, '_c.$[entry].'), [entry], recipients);
  }

  /** The documents of these recipients' timelines that can hold the post's entry. */
  protected abstract holders(recipients: readonly string[], post: PostRecord): Filter<T>;

  protected async rewriteWhere(filter: Filter<T>, update: Document, arrayFilters: Document[], _recipients: readonly string[]): Promise<void> {
    await this.timelines.updateMany(filter, update, { arrayFilters });
  }

  /** Buckets are read from the database on every page: nothing held to forget. */
  forgetHeld(_userIds: readonly string[]): void {}

  /** Selects every document of one user's timeline. */
  protected abstract ownedBy(userId: string): Filter<T>;

  /**
   * The followee's newest posts, newest first, less the pulled ones: those live only in
   * `content`, where every read finds them, so deleting one never has to visit timelines.
   */
  protected async recentPostsOf(authorId: string, limit: number): Promise<PostRecord[]> {
    const { items } = await this.content.pageByAuthors([authorId], { direction: 'older', from: null, limit });
    return items.filter((post) => !post.pulled);
  }
}
