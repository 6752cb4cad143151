import type { ReplyCounts } from '../content/replyCounts.js';
import type { UserGraphService } from '../graph/userGraphService.js';
import type { FeedBackend } from './feedBackend.js';
import type { InteractionStores } from './publishing.js';

export interface StalledWorkDependencies {
  graph: Pick<UserGraphService, 'pairs' | 'lists' | 'invalidateAll'>;
  content: { readonly replyCounts: Pick<ReplyCounts, 'repairStalled'> };
  interactions: InteractionStores;
  /** A follow's timeline work, which a repaired pair runs too. */
  backend: FeedBackend;
}

/**
 * Finishes follows, unfollows, likes, reposts, reply counts and list deletions whose request died; the fanout
 * workers call this now and then. Returns how many it repaired.
 */
export function repairStalledWork(deps: StalledWorkDependencies): () => Promise<number> {
  return async () => {
    const repaired = await Promise.all([
      deps.graph.pairs.repairStalled(deps.backend).then((pairs) => {
        // Counts and follow lists changed under whatever this process holds.
        if (pairs > 0) deps.graph.invalidateAll();
        return pairs;
      }),
      deps.interactions.likes.repairStalled(),
      deps.interactions.reposts.repairStalled(),
      deps.content.replyCounts.repairStalled(),
      deps.graph.lists.repairStalled(),
    ]);
    return repaired.reduce((sum, count) => sum + count, 0);
  };
}
