import type { FeedStrategyName } from '../config.js';
import type { ContentService } from '../content/contentService.js';
import type { UserGraphService } from '../graph/userGraphService.js';
import { FanoutOnRead } from './fanoutOnRead.js';
import type { FeedBackend } from './feedBackend.js';

export interface FeedBackendDependencies {
  graph: UserGraphService;
  content: ContentService;
}

export function createFeedBackend(strategy: FeedStrategyName, deps: FeedBackendDependencies): FeedBackend {
  switch (strategy) {
    case 'fanout-on-read':
      return new FanoutOnRead(deps.graph, deps.content);
  }
}
