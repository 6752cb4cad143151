import type { Page, PageRequest } from '../content/position.js';
import type { ReaderFilters } from '../graph/readerFilters.js';
import type { PostRecord } from '../records/posts.js';
import type { UserRecord } from '../records/users.js';
import type { FeedBackend } from './feedBackend.js';
import type { PostPublishing } from './publishing.js';
import type { RelationsOfReader } from './readerRelations.js';
import type { TimelineReader } from './timelineReading.js';
import type { PageLoads } from './timelineEntry.js';
import { noRequest } from '../observability/requestScope.js';

/**
 * The feed as Socialite's FeedService interface has it: post, follow, and read a timeline, over
 * the configured strategy. Tools, benchmarks and tests drive the feed through this; the API uses
 * the services by purpose, which this only forwards to. Nothing here runs for an API request.
 */
export interface FeedService {
  readonly backend: FeedBackend;
  readonly readerFilters: ReaderFilters;
  post(authorId: string, text: string, replyToId?: string | null): Promise<PostRecord>;
  follow(followerId: string, followeeId: string): Promise<UserRecord>;
  timeline(userId: string, request: PageRequest, loads: PageLoads): Promise<Page<PostRecord>>;
  /** Finishes follows, likes, reposts and reply counts whose request died (see stalledWork.ts). */
  repairStalled(): Promise<number>;
}

export function feedService(parts: {
  backend: FeedBackend;
  readerFilters: ReaderFilters;
  publishing: PostPublishing;
  relations: RelationsOfReader;
  reading: TimelineReader;
  repairStalled: () => Promise<number>;
}): FeedService {
  const { backend, readerFilters, publishing, relations, reading, repairStalled } = parts;
  return {
    backend,
    readerFilters,
    post: (authorId, text, replyToId) => publishing.post(authorId, text, noRequest, replyToId),
    follow: (followerId, followeeId) => relations.follow(followerId, followeeId, noRequest),
    timeline: (userId, request, loads) => reading.timeline(userId, request, loads),
    repairStalled,
  };
}
