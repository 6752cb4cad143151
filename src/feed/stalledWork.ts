import type { ReplyCounts } from '../content/replyCounts.js';
import type { QuoteCounts } from '../content/quoteCounts.js';
import type { UserGraphService } from '../graph/userGraphService.js';
import type { FollowEffects } from '../graph/followPairs.js';
import type { InteractionStores } from './publishing.js';

export interface StalledWorkDependencies {
  graph: Pick<UserGraphService, 'pairs' | 'lists' | 'invalidateAll'>;
  content: { readonly replyCounts: Pick<ReplyCounts, 'repairStalled'>; readonly quoteCounts: Pick<QuoteCounts, 'repairStalled'> };
  interactions: InteractionStores;
  /** A follow's timeline work and notification group, which a repaired pair runs too. */
  followEffects: FollowEffects;
  /** Uploads stalled, orphaned or gone, attachments to confirm, alt text changes to carry (PostEdits). */
  media: { repairStalled(): Promise<number> };
}

/**
 * Finishes follows, unfollows, likes, reposts, reply counts, list deletions and media whose request died,
 * and prunes the tokens that finished follows, likes and reposts left on users, posts and
 * notification groups; the fanout workers call this now and then. Returns how many it repaired.
 */
export function repairStalledWork(deps: StalledWorkDependencies): () => Promise<number> {
  const { graph, interactions, followEffects } = deps;
  return async () => {
    const repaired = await Promise.all([
      graph.pairs.repairStalled(followEffects).then((pairs) => {
        // Counts and follow lists changed under whatever this process holds.
        if (pairs > 0) graph.invalidateAll();
        return pairs;
      }),
      interactions.likes.repairStalled(),
      interactions.reposts.repairStalled(),
      deps.content.replyCounts.repairStalled(),
      deps.content.quoteCounts.repairStalled(),
      graph.lists.repairStalled(),
      deps.media.repairStalled(),
    ]);
    // Only settled work is pruned: after the repairs, a pass also covers what they finished.
    await Promise.all([graph.pairs.pruneSettled(followEffects), interactions.likes.pruneSettled(), interactions.reposts.pruneSettled()]);
    return repaired.reduce((sum, count) => sum + count, 0);
  };
}
