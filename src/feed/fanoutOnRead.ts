import type { ContentService } from '../content/contentService.js';
import type { Page, PageRequest } from '../content/position.js';
import type { UserGraphService } from '../graph/userGraphService.js';
import type { FeedBackend, TimelineEntry } from './feedBackend.js';

/**
 * No materialized timeline: every read asks `content` for the newest posts of the user and
 * everyone they follow. Nothing to maintain on post, follow or unfollow.
 */
export class FanoutOnRead implements FeedBackend {
  readonly strategy = 'fanout-on-read' as const;
  readonly rebuild = 'none' as const;

  constructor(
    private readonly graph: UserGraphService,
    private readonly content: ContentService,
  ) {}

  async ensureIndexes(): Promise<void> {}

  async clear(): Promise<void> {}

  async deliver(): Promise<void> {}

  async retract(): Promise<void> {}

  async followed(): Promise<void> {}

  async unfollowed(): Promise<void> {}

  async timeline(userId: string, request: PageRequest): Promise<Page<TimelineEntry>> {
    const authorIds = [userId, ...(await this.graph.followingIds(userId))];
    return this.content.pageByAuthors(authorIds, request);
  }
}
