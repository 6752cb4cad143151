import type { PostScans } from '../content/postScans.js';
import type { UserGraphService } from '../graph/userGraphService.js';
import { recipientBatches } from './entries.js';
import type { FeedBackend } from './feedBackend.js';
import type { TimelineState } from './timelineState.js';

/** What a rebuild reads and writes: the services object has these, and a tool may pass its own. */
export interface RebuildDependencies {
  feed: { readonly backend: FeedBackend };
  content: { readonly scans: Pick<PostScans, 'countPosts' | 'allPostsOldestFirst'> };
  graph: Pick<UserGraphService, 'followerIdBatches'>;
  fanout: { readonly options: { readonly batchSize: number } };
  timelineState: Pick<TimelineState, 'record'>;
}

/**
 * Rebuilds the configured strategy's timelines from `content` and the follow graph: clears them,
 * then redelivers every pushed post oldest first to its author and current followers, in bulk
 * writes of FANOUT_BATCH recipients. Pulled posts stay out: readers merge them from `content`.
 * A cache is only cleared; it rebuilds on each user's next read.
 */
export async function rebuildTimelines(
  services: RebuildDependencies,
  onProgress?: (done: number, total: number) => void,
): Promise<{ posts: number }> {
  const { backend } = services.feed;
  await backend.clear();
  let done = 0;
  if (backend.rebuild === 'redeliver') {
    const total = await services.content.scans.countPosts();
    for await (const post of services.content.scans.allPostsOldestFirst()) {
      if (!post.pulled) {
        for await (const recipients of recipientBatches(services.graph, post.authorId, services.fanout.options.batchSize)) {
          await backend.deliverTo(recipients, [post]);
        }
      }
      onProgress?.(++done, total);
    }
  }
  await services.timelineState.record();
  return { posts: done };
}
