import type { Db } from 'mongodb';
import { AccountService } from './auth/accountService.js';
import { TokenService } from './auth/tokens.js';
import type { Config } from './config.js';
import { ContentService } from './content/contentService.js';
import { createFeedBackend } from './feed/index.js';
import { FeedService } from './feed/feedService.js';
import { UserGraphService } from './graph/userGraphService.js';

/** The domain services, built once per process and shared by every request. */
export interface Services {
  db: Db;
  graph: UserGraphService;
  content: ContentService;
  feed: FeedService;
  accounts: AccountService;
  tokens: TokenService;
}

export function createServices(db: Db, config: Config): Services {
  const graph = new UserGraphService(db);
  const content = new ContentService(db);
  const tokens = new TokenService(config.jwtSecret, config.jwtTtlSeconds);
  const backend = createFeedBackend(config.feedStrategy, { graph, content });
  return {
    db,
    graph,
    content,
    feed: new FeedService(graph, content, backend),
    accounts: new AccountService(graph, tokens),
    tokens,
  };
}

/** Indexes are created at start; createIndex is a no-op when the index already exists. */
export async function ensureIndexes(services: Services): Promise<void> {
  await Promise.all([
    services.graph.ensureIndexes(),
    services.content.ensureIndexes(),
    services.feed.backend.ensureIndexes(),
  ]);
}
