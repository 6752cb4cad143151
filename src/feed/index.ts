/**
 * feed/ owns timelines: the strategies that materialize them (one file each, behind FeedBackend),
 * the fanout queue that fills them, and the services by purpose over them: reading timelines
 * (TimelineReading), publishing posts, deletes, likes and reposts (Publishing, PostDelivery), a
 * reader's relations (ReaderRelations: follows, mutes, blocks, filters), account removal, and the
 * repair of stalled work. It publishes every stored change to the change bus and knows nothing of
 * live/ or api/.
 */
import type { Db } from 'mongodb';
import type { FeedStrategyName, TimelineOptions } from '../config.js';
import type { ContentService } from '../content/contentService.js';
import { UnreachableCaseError } from '../errors.js';
import { FanoutOnRead } from './fanoutOnRead.js';
import type { FeedBackend, TimelinesChanged } from './feedBackend.js';
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
