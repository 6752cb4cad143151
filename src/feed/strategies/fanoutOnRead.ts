import type { ContentService } from '../../content/contentService.js';
import type { Page, PageRequest } from '../../content/position.js';
import type { FeedBackend } from '../feedBackend.js';
import type { TimelineEntry } from '../timelineEntry.js';

/**
 * No materialized timeline: every read asks `content` for the newest posts of the user and
 * everyone they follow. Nothing to maintain on post, follow or unfollow.
 */
export class FanoutOnRead implements FeedBackend {
  readonly strategy = 'fanout-on-read' as const;
  readonly materialized = false;
  readonly rebuild = 'none' as const;

  constructor(private readonly content: ContentService) {}

  async ensureIndexes(): Promise<void> {}

  async clear(): Promise<void> {}

  async deliverTo(): Promise<void> {}

  async deliverEach(): Promise<void> {}

  async removeFrom(): Promise<void> {}

  readonly embedsBodies = false;

  async rewrite(): Promise<void> {}

  async followed(): Promise<void> {}

  async readerReturned(): Promise<void> {}

  async dropTimeline(): Promise<void> {}

  forgetHeld(): void {}

  timeline(_userId: string, request: PageRequest, authorIds: readonly string[]): Promise<Page<TimelineEntry>> {
    return this.content.pageByAuthors(authorIds, request);
  }
}
