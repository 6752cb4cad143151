/**
 * feed/strategies/ owns the four timeline strategies of the reference, one file each behind
 * FeedBackend (feedBackend.ts), and the factory that picks one by FEED_STRATEGY: fanout on read,
 * and fanout on write into time buckets, sized buckets or a capped per-user cache. Each takes
 * its own options, parsed in config.ts.
 */
import type { Db } from 'mongodb';
import type { FeedStrategyName, TimelineOptions } from '../../config.js';
import type { ContentService } from '../../content/contentService.js';
import { UnreachableCaseError } from '../../errors.js';
import { FanoutOnRead } from './fanoutOnRead.js';
import type { FeedBackend, TimelinesChanged } from '../feedBackend.js';
import { SizedBuckets } from './sizedBuckets.js';
import { TimeBuckets } from './timeBuckets.js';
import { TimelineCache } from './timelineCache.js';

export interface FeedBackendDependencies {
  db: Db;
  content: ContentService;
  options: TimelineOptions;
  /** How the cache strategy announces its writes to the other instances' held copies. */
  timelinesChanged: TimelinesChanged;
}

export function createFeedBackend(strategy: FeedStrategyName, deps: FeedBackendDependencies): FeedBackend {
  const { db, content, options, timelinesChanged } = deps;
  switch (strategy) {
    case 'fanout-on-read':
      return new FanoutOnRead(content);
    case 'time-buckets':
      return new TimeBuckets(db, content, options);
    case 'sized-buckets':
      return new SizedBuckets(db, content, options);
    case 'cache':
      return new TimelineCache(db, content, options, timelinesChanged);
    default:
      throw new UnreachableCaseError(strategy);
  }
}
