import type { Collection, Db, Document } from 'mongodb';
import type { TimelineOptions } from '../config.js';
import type { ContentService, PostRecord } from '../content/contentService.js';
import type { UserGraphService } from '../graph/userGraphService.js';
import { recipientBatches } from './entries.js';

/**
 * What the three fanout-on-write strategies share: a post goes to the author and every follower,
 * one bulk write per batch of recipients; a deleted post leaves the same timelines.
 */
export abstract class FanoutOnWrite<T extends Document> {
  protected readonly timelines: Collection<T>;

  constructor(
    db: Db,
    collectionName: string,
    protected readonly graph: UserGraphService,
    protected readonly content: ContentService,
    protected readonly options: TimelineOptions,
  ) {
    this.timelines = db.collection<T>(collectionName);
  }

  async clear(): Promise<void> {
    await this.timelines.deleteMany({});
  }

  async deliver(post: PostRecord): Promise<void> {
    for await (const recipients of recipientBatches(this.graph, post.authorId)) {
      await this.push(recipients, [post]);
    }
  }

  async retract(post: PostRecord): Promise<void> {
    for await (const recipients of recipientBatches(this.graph, post.authorId)) {
      await this.remove(recipients, post);
    }
  }

  /** The followee's newest posts, newest first. */
  protected async recentPostsOf(authorId: string, limit: number): Promise<PostRecord[]> {
    return (await this.content.pageByAuthors([authorId], { direction: 'older', from: null, limit })).items;
  }

  /** Adds `posts` to each recipient's timeline; `skipPresent` when some may already be there. */
  protected abstract push(recipients: readonly string[], posts: readonly PostRecord[], options?: { skipPresent: boolean }): Promise<void>;

  protected abstract remove(recipients: readonly string[], post: PostRecord): Promise<void>;
}
