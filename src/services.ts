import type { Db } from 'mongodb';
import type { Logger } from './logger.js';
import { AccountService } from './auth/accountService.js';
import { RateLimits } from './auth/rateLimits.js';
import { TokenService } from './auth/tokens.js';
import type { Config } from './config.js';
import { ContentService } from './content/contentService.js';
import { Interactions } from './content/interactions.js';
import { ReaderFilters } from './graph/readerFilters.js';
import { AccountRemoval } from './feed/accountRemoval.js';
import { Fanout } from './feed/fanout.js';
import { createFeedBackend } from './feed/index.js';
import { FeedService } from './feed/feedService.js';
import { TimelineState } from './feed/timelineState.js';
import { UserGraphService } from './graph/userGraphService.js';
import { fullChange } from './live/liveEvents.js';
import { createLiveEventSource, LiveService } from './live/liveService.js';

/** The domain services, built once per process and shared by every request. */
export interface Services {
  db: Db;
  graph: UserGraphService;
  content: ContentService;
  feed: FeedService;
  accounts: AccountService;
  tokens: TokenService;
  rateLimits: RateLimits;
  timelineState: TimelineState;
  /** The durable fanout queue; `start` runs its workers in this process. */
  fanout: Fanout;
  /** Live timeline updates; `start` it to deliver to subscribers (publishing works without). */
  live: LiveService;
  accountRemoval: AccountRemoval;
}

/** Runs the fanout workers, which also finish whatever a dead request left half-done. */
export function startWorkers(services: Services, logger: Logger, workers?: number): void {
  services.fanout.start(
    logger,
    () => Promise.all([services.feed.repairStalled(), services.accountRemoval.requeueLost()]),
    workers,
  );
}

export function createServices(db: Db, config: Config): Services {
  const graph = new UserGraphService(db);
  const content = new ContentService(db);
  const tokens = new TokenService(config.jwtSecret, config.jwtTtlSeconds, config.jwtIssuer ?? `feed-service/${db.databaseName}`);
  const live = new LiveService(createLiveEventSource(db, config.live), graph, config.live);
  const backend = createFeedBackend(config.feedStrategy, {
    db,
    content,
    options: config.timeline,
    timelinesChanged: (userIds) => live.changed(fullChange({ timelines: userIds })),
  });
  const fanout = new Fanout(db, graph, content, backend, config.fanout);
  const rateLimits = new RateLimits(db, config.rateLimits);
  const interactions = {
    likes: new Interactions(db, 'likes', content.counters, 'likes'),
    reposts: new Interactions(db, 'reposts', content.counters, 'reposts'),
  };
  const readerFilters = new ReaderFilters(db);
  const feed = new FeedService(graph, content, backend, fanout, config.fanout, rateLimits, readerFilters, interactions);
  feed.observe(live);
  // Another instance's change (or this one's, echoed) makes what this process holds stale.
  live.invalidateWith((event) => {
    if (event.kind === 'postAdded') {
      content.forgetOutboxes([event.post.authorId]);
      return;
    }
    if (event.kind === 'postRemoved') {
      content.forgetPosts([event.postId]);
      content.forgetOutboxes([event.authorId]);
      return;
    }
    if (event.kind === 'changed') {
      graph.invalidate({ users: event.users });
      if (event.allFilters) readerFilters.invalidateAll();
      else readerFilters.invalidate(event.filters);
      backend.forgetHeld(event.timelines);
      return;
    }
    graph.invalidate({ users: [event.followerId, event.followeeId], following: [event.followerId] });
  });
  live.showOnly({ added: (viewerId, post) => feed.showsLive(viewerId, post), removed: (viewerId, removal) => feed.showsLiveRemoval(viewerId, removal) });
  const accountRemoval = new AccountRemoval(graph, content, feed, fanout);
  return {
    db,
    graph,
    content,
    feed,
    accounts: new AccountService(graph, tokens, rateLimits, accountRemoval),
    accountRemoval,
    tokens,
    rateLimits,
    timelineState: new TimelineState(db, backend, content, config.timeline),
    fanout,
    live,
  };
}

/**
 * Run at every start: creates indexes (a no-op when they exist) and refuses timelines that the
 * configured strategy did not build.
 */
export async function prepareDatabase(services: Services): Promise<void> {
  await Promise.all([
    services.graph.ensureIndexes(),
    services.content.ensureIndexes(),
    services.feed.backend.ensureIndexes(),
    services.live.ensureIndexes(),
    services.fanout.ensureIndexes(),
    services.rateLimits.ensureIndexes(),
    services.feed.ensureIndexes(),
  ]);
  await services.timelineState.checkAtStart();
}
