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
import { ChangeBus, createChangeSource } from './changes/bus.js';
import { changed } from './changes/events.js';
import { forgetStale } from './changes/staleness.js';
import { LiveService } from './live/liveService.js';

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
  /** Every stored change, for this instance and the others; it runs while `live` does. */
  changes: ChangeBus;
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
  const changes = new ChangeBus(createChangeSource(db, config.live));
  const backend = createFeedBackend(config.feedStrategy, {
    db,
    content,
    options: config.timeline,
    timelinesChanged: (userIds) => changes.publish(changed({ timelines: userIds })),
  });
  const fanout = new Fanout(db, graph, content, backend, config.fanout);
  const rateLimits = new RateLimits(db, config.rateLimits);
  const interactions = {
    likes: new Interactions(db, 'likes', content.counters, 'likes'),
    reposts: new Interactions(db, 'reposts', content.counters, 'reposts'),
  };
  const readerFilters = new ReaderFilters(db);
  const feed = new FeedService(graph, content, backend, fanout, config.fanout, rateLimits, readerFilters, interactions, changes);
  // Another instance's change (or this one's, echoed) makes what this process holds stale.
  changes.listen((event) =>
    forgetStale(event, {
      forgetOutboxes: (authorIds) => content.forgetOutboxes(authorIds),
      forgetPosts: (postIds) => content.forgetPosts(postIds),
      forgetUsers: (change) => graph.invalidate(change),
      forgetFilters: (readerIds) => (readerIds === 'all' ? readerFilters.invalidateAll() : readerFilters.invalidate(readerIds)),
      forgetTimelines: (userIds) => backend.forgetHeld(userIds),
    }),
  );
  const live = new LiveService(
    changes,
    {
      followingIds: (viewerId) => graph.followingIds(viewerId),
      visibility: { added: (viewerId, post) => feed.showsLive(viewerId, post), removed: (viewerId, removal) => feed.showsLiveRemoval(viewerId, removal) },
    },
    config.live,
  );
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
    changes,
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
    services.changes.ensureIndexes(),
    services.fanout.ensureIndexes(),
    services.rateLimits.ensureIndexes(),
    services.feed.ensureIndexes(),
  ]);
  await services.timelineState.checkAtStart();
}
