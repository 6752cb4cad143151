import type { Services } from '../services.js';

/**
 * Rebuilds the configured strategy's timelines from `content` and the follow graph: clears them,
 * then redelivers every post oldest first through the strategy's own delivery path (author and
 * current followers). A cache is only cleared; it rebuilds on each user's next read.
 */
export async function rebuildTimelines(
  services: Services,
  onProgress?: (done: number, total: number) => void,
): Promise<{ posts: number }> {
  const { backend } = services.feed;
  await backend.clear();
  let done = 0;
  if (backend.rebuild === 'redeliver') {
    const total = await services.content.countPosts();
    for await (const post of services.content.allPostsOldestFirst()) {
      await backend.deliver(post);
      onProgress?.(++done, total);
    }
  }
  await services.timelineState.record();
  return { posts: done };
}
