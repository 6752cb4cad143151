import type { Collection, Db } from 'mongodb';
import { ConfigError, type TimelineOptions } from '../config.js';
import type { ContentService } from '../content/contentService.js';
import type { FeedBackend } from './feedBackend.js';
import { plannedCollection } from '../db/shardPlan.js';

/** What the stored timelines were built for; a mismatch means they cannot be trusted. */
interface TimelineStateDocument {
  _id: 'timelines';
  strategy: string;
  /** Time buckets are numbered by span, so a different span makes every bucket number wrong. */
  bucketSpanMs: number | null;
  updatedAt: Date;
}

export const rebuildCommand = 'npm run rebuild-timelines';

/**
 * Guards against switching FEED_STRATEGY on a database that has posts: a lazily built cache is
 * simply dropped, but bucket timelines would silently miss every post stored while another
 * strategy ran, so the server refuses to start until they are rebuilt.
 */
export class TimelineState {
  private readonly state: Collection<TimelineStateDocument>;

  constructor(
    db: Db,
    private readonly backend: FeedBackend,
    private readonly content: ContentService,
    private readonly options: TimelineOptions,
  ) {
    this.state = plannedCollection<TimelineStateDocument>(db, 'feed_meta');
  }

  async checkAtStart(): Promise<void> {
    const stored = await this.state.findOne({ _id: 'timelines' });
    if (stored && this.matches(stored)) return;
    if (this.backend.rebuild === 'redeliver') {
      const posts = await this.content.scans.countPosts();
      if (posts > 0) {
        const built = stored
          ? `were last built for FEED_STRATEGY=${stored.strategy}${stored.bucketSpanMs ? ` with TIMELINE_BUCKET_SPAN=${stored.bucketSpanMs / 1000}` : ''}`
          : 'have never been built';
        throw new ConfigError(
          `FEED_STRATEGY=${this.backend.strategy}: the timelines in this database ${built}, so they would not show ` +
            `the ${posts} stored posts correctly.\n  Run \`${rebuildCommand}\` with the same environment, then start again.`,
        );
      }
    }
    await this.backend.clear();
    await this.record();
  }

  async record(): Promise<void> {
    const current = this.current();
    await this.state.replaceOne({ _id: 'timelines' }, { ...current, updatedAt: new Date() }, { upsert: true });
  }

  private current() {
    return {
      strategy: this.backend.strategy,
      bucketSpanMs: this.backend.strategy === 'time-buckets' ? this.options.bucketSpanMs : null,
    };
  }

  private matches(stored: TimelineStateDocument): boolean {
    const current = this.current();
    return stored.strategy === current.strategy && stored.bucketSpanMs === current.bucketSpanMs;
  }
}
