/**
 * The one place that wires everything from configuration (Socialite's ServiceManager): every
 * service gets what it needs in its constructor, in dependency order, and nothing is set later.
 */
import type { Db, ObjectId } from 'mongodb';
import { migrateOnce, migrationProgress } from './db/migrations.js';
import { backfillSearchTokens } from './content/searchTokenBackfill.js';
import type { Logger } from './logger.js';
import type { TaskDocument } from './queue/taskQueue.js';
import type { TaskRun } from './queue/taskWorkers.js';
import { AccountService } from './auth/accountService.js';
import { AccountSettings } from './auth/accountSettings.js';
import { RateLimits } from './auth/rateLimits.js';
import { TokenService } from './auth/tokens.js';
import type { Config } from './config.js';
import { ChangeBus, createChangeSource } from './changes/bus.js';
import { changed } from './changes/events.js';
import { LiveGroup } from './changes/partitions.js';
import { forgetStale } from './changes/staleness.js';
import { Bookmarks } from './content/bookmarks.js';
import { TagTrends } from './content/tagTrends.js';
import { Discovery } from './feed/discovery.js';
import { FollowedTags } from './graph/followedTags.js';
import { ContentService } from './content/contentService.js';
import { Interactions, type InteractionEffects } from './content/interactions.js';
import { AccountRemoval } from './feed/accountRemoval.js';
import { Bookmarking } from './feed/bookmarking.js';
import { Fanout } from './feed/fanout.js';
import type { FeedBackend } from './feed/feedBackend.js';
import { feedService, type FeedService } from './feed/feedService.js';
import { createFeedBackend } from './feed/index.js';
import { PostDelivery, type RepostTimelineEffects } from './feed/postDelivery.js';
import { PostEdits } from './feed/postEdits.js';
import { PostVisibility } from './feed/postVisibility.js';
import { QueuedWork, runTask, type BatchTaskHandlers, type TaskHandlers } from './feed/queuedWork.js';
import { Publishing, type InteractionStores } from './feed/publishing.js';
import { ReaderActivity } from './feed/readerActivity.js';
import { TrendCounting } from './feed/trendCounting.js';
import { ReaderLists } from './feed/readerLists.js';
import { ReaderRelations } from './feed/readerRelations.js';
import { repairStalledWork } from './feed/stalledWork.js';
import { Conversations } from './feed/conversations.js';
import { TimelineMarkers } from './feed/timelineMarkers.js';
import { TimelineReading } from './feed/timelineReading.js';
import { TimelineState } from './feed/timelineState.js';
import { FollowRequests } from './feed/followRequests.js';
import { AuditLog } from './moderation/auditLog.js';
import { Reports } from './moderation/reports.js';
import { Staff } from './moderation/staff.js';
import { Suspensions } from './moderation/suspensions.js';
import { FollowSuggestions } from './graph/followSuggestions.js';
import { ReaderFilters } from './graph/readerFilters.js';
import { UserAccounts } from './graph/userAccounts.js';
import { UserDirectory } from './graph/userDirectory.js';
import { UserFeedState } from './graph/userFeedState.js';
import { UserGraphService } from './graph/userGraphService.js';
import { UserProfiles } from './graph/userProfiles.js';
import { LiveService } from './live/liveService.js';
import { MediaService } from './media/mediaService.js';
import { GroupMemberships } from './notifications/groupMemberships.js';
import { NotificationGroups } from './notifications/notificationGroups.js';
import { NotificationService } from './notifications/notificationService.js';

/** The domain services, built once per process and shared by every request. */
export interface Services {
  db: Db;
  /** Users as every reader sees them, held in this process. */
  users: UserDirectory;
  /** Who follows whom. */
  graph: UserGraphService;
  /** Credentials and account deletion. */
  userAccounts: UserAccounts;
  /** What the feed keeps on users: last read, timeline gaps, pulled authors. */
  feedState: UserFeedState;
  content: ContentService;
  /** Reading timelines and an author's posts, and the rules live events pass. */
  timelines: TimelineReading;
  /** Posts, deletes, likes and reposts. */
  publishing: Publishing;
  /** Who may see which post: the one rule every path that shows posts asks (`canSee`, `filterFor`). */
  visibility: PostVisibility;
  /** Follows, mutes, blocks and keyword filters. */
  relations: ReaderRelations;
  /** Lists of followed accounts, and their timelines. */
  lists: ReaderLists;
  /** Whom to follow: friends of friends. */
  suggestions: FollowSuggestions;
  /** Post and read over the configured strategy (see FeedService). */
  feed: FeedService;
  accounts: AccountService;
  tokens: TokenService;
  rateLimits: RateLimits;
  timelineState: TimelineState;
  /** Delivery into followers' timelines, through the queue. */
  fanout: Fanout;
  /** The durable queue of every background work; `startWorkers` runs its workers in this process. */
  work: QueuedWork;
  /** The handler of each kind of queued work. */
  taskHandlers: TaskHandlers;
  batchTaskHandlers: BatchTaskHandlers;
  /** Runs one queued task as a worker would (tests and tools). */
  runTask: (task: TaskDocument, run: TaskRun) => Promise<void>;
  /** Every stored change, for this instance and the others; it runs while `live` does. */
  changes: ChangeBus;
  /** Live timeline updates; `start` it to deliver to subscribers (publishing works without). */
  live: LiveService;
  accountRemoval: AccountRemoval;
  interactions: InteractionStores;
  /** Who is told what: pages, markers, and the queued work of replies, mentions and clean-ups. */
  notifications: NotificationService;
  /** How follows, likes and reposts join and leave their notification groups. */
  memberships: GroupMemberships;
  /** Display names, bios and searching users by them. */
  profiles: UserProfiles;
  /** Profile, password and token changes of the signed-in account. */
  settings: AccountSettings;
  bookmarks: Bookmarking;
  /** The timeline read marker and its unread count. */
  markers: TimelineMarkers;
  /** Uploaded images: storing, serving and deleting them. */
  media: MediaService;
  /** Changes to published posts that every copy must take: their text, an image's alt text. */
  postEdits: PostEdits;
  /** Locked accounts' follow requests: approving, rejecting, and approving them all on unlock. */
  followRequests: FollowRequests;
  /** Every staff action, written once. */
  audit: AuditLog;
  /** Who is staff: STAFF_HANDLES and those the staff command granted. */
  staff: Staff;
  /** Reports, and the actions staff take on them. */
  reports: Reports;
  /** Suspending and unsuspending accounts. */
  suspensions: Suspensions;
  /** Tag timelines, post search, trending tags and followed tags. */
  discovery: Discovery;
  trends: TagTrends;
  /** Threads, quotes and pinned posts as a reader sees them. */
  conversations: Conversations;
}

/** Runs the fanout workers, which also finish whatever a dead request left half-done. */
export function startWorkers(services: Services, logger: Logger, workers?: number): void {
  services.work.start(
    services.taskHandlers,
    services.batchTaskHandlers,
    logger,
    () => Promise.all([services.feed.repairStalled(), services.accountRemoval.requeueLost()]),
    workers,
  );
}

/** Stops this process's workers: what they hold goes back to the queue, and what they counted is written. */
export async function stopWorkers(services: Services): Promise<void> {
  await services.work.stop();
  await services.fanout.flushStats();
}

export function createServices(db: Db, config: Config): Services {
  const users = new UserDirectory(db);
  const graph = new UserGraphService(db, users);
  const userAccounts = new UserAccounts(users);
  const feedState = new UserFeedState(users);
  // Which live events this instance reads, and so what it may hold of each person.
  const liveGroup = new LiveGroup(config.live.group.index, config.live.group.count);
  const content = new ContentService(db, liveGroup);
  const readerFilters = new ReaderFilters(db);
  const rateLimits = new RateLimits(db, config.rateLimits);
  const tokens = new TokenService(config.jwtSecret, config.jwtTtlSeconds, config.jwtIssuer ?? `feed-service/${db.databaseName}`);
  const changes = new ChangeBus(createChangeSource(db, config.live, liveGroup));
  const backend = createFeedBackend(config.feedStrategy, {
    db,
    content,
    options: config.timeline,
    timelinesChanged: (userIds, edits) => changes.publish(changed({ timelines: userIds, ...(edits ? { edits } : {}) })),
  });
  // One durable queue carries every kind of background work; its handlers are registered below, in one table.
  const work = new QueuedWork(db, config.fanout);
  const groups = new NotificationGroups(NotificationService.collection(db));
  const memberships = new GroupMemberships({ groups, readerFilters, retentionMs: config.notificationRetentionMs });
  const fanout = new Fanout(db, work, graph, feedState, content, backend, config.fanout);

  const delivery = new PostDelivery({ users, feedState, content, backend, fanout, changes, pullThreshold: config.fanout.pullThreshold });
  const interactions: InteractionStores = {
    likes: new Interactions(db, 'likes', content.counters, 'likes', changes, memberships.likeEffects, liveGroup),
    reposts: new Interactions(db, 'reposts', content.counters, 'reposts', changes, withTimelineEffects(delivery.repostEffects, memberships.repostEffects), liveGroup),
  };
  const notifications = new NotificationService(db, { content, graph, users, interactions, memberships, groups, changes }, config.notificationRetentionMs);
  const bookmarkStore = new Bookmarks(db, liveGroup);
  const media = new MediaService(db, config.media, config.jwtSecret, content);
  const visibility = new PostVisibility({ graph, feedState, users });
  const postEdits = new PostEdits({ media, content, fanout, changes, visibility });
  forgetWhatChangesMakeStale(changes, { content, graph, readerFilters, backend, interactions, bookmarks: bookmarkStore });
  const trends = new TagTrends(db);
  const publishing = new Publishing({ delivery, content, interactions, rateLimits, readerFilters, users, visibility, bookmarks: bookmarkStore, media });
  const relations = new ReaderRelations({ graph, users, readerFilters, backend, rateLimits, changes, memberships, work, notifications });
  const activity = new ReaderActivity({ feedState, backend, fanout, options: config.fanout });
  const timelines = new TimelineReading({ graph, feedState, content, backend, readerFilters, interactions, activity, visibility, tagPosts: content.discovery });
  const discovery = new Discovery({ content, trends, followedTags: new FollowedTags(users), visibility, readerFilters, changes });
  const repairStalled = repairStalledWork({ graph, content, interactions, followEffects: relations.followEffects, media: postEdits });
  const lists = new ReaderLists({ lists: graph.lists, users, reading: timelines, changes });
  const conversations = new Conversations({ content, visibility, readerFilters, pins: content.pins, changes });
  const live = liveCore(changes, graph, timelines, lists, liveGroup, conversations, config, discovery);
  const accountRemoval = new AccountRemoval(graph, userAccounts, content, publishing, relations, changes, work, notifications, media);
  // Every kind of queued work and its handler: a kind added to QueuedTasks is asked for here.
  const profiles = new UserProfiles(users);
  const settings = new AccountSettings(userAccounts, profiles, tokens, rateLimits, changes);
  const followRequests = new FollowRequests(graph, relations, settings, work);
  // Moderation: staff, reports, the audit log and suspensions.
  const audit = new AuditLog(db);
  const staff = new Staff(config.staffHandles, users, audit, changes);
  const suspensions = new Suspensions({ directory: users, graph, groups, interactions, content, work, audit, changes });
  const reports = new Reports(db, {
    users,
    lookups: content.lookups,
    visibility,
    rateLimits,
    staff,
    audit,
    publishing,
    notifications,
    accounts: { suspend: (handle, _staff, _reportId, scope) => suspensions.suspend(handle, scope) },
  });
  const trendCounting = new TrendCounting({ trends, stored: (postIds) => content.lookups.existing(postIds), wasDeleted: (postId) => content.lookups.wasDeleted(postId) });
  const taskHandlers: TaskHandlers = {
    ...fanout.handlers,
    ...accountRemoval.handlers,
    ...notifications.handlers,
    ...followRequests.handlers,
    ...suspensions.handlers,
    ...postEdits.handlers,
    ...trendCounting.handlers,
  };
  const batchTaskHandlers: BatchTaskHandlers = { ...fanout.batchHandlers, ...trendCounting.batchHandlers };
  return {
    db,
    users,
    graph,
    userAccounts,
    feedState,
    content,
    timelines,
    publishing,
    visibility,
    relations,
    lists,
    suggestions: new FollowSuggestions(graph.following, graph.followers, users.users, (handle) => graph.followingIds(handle), readerFilters),
    feed: feedService({ backend, readerFilters, publishing, relations, reading: timelines, repairStalled }),
    accounts: new AccountService(graph, users, userAccounts, tokens, rateLimits, accountRemoval),
    accountRemoval,
    tokens,
    rateLimits,
    timelineState: new TimelineState(db, backend, content, config.timeline),
    fanout,
    work,
    taskHandlers,
    batchTaskHandlers,
    runTask: (task, run) => runTask(taskHandlers, task, run),
    changes,
    live,
    interactions,
    notifications,
    memberships,
    profiles,
    settings,
    followRequests,
    audit,
    staff,
    reports,
    suspensions,
    bookmarks: new Bookmarking(bookmarkStore, content, readerFilters, visibility, changes),
    markers: new TimelineMarkers(users, graph, content, timelines),
    media,
    postEdits,
    discovery,
    trends,
    conversations,
  };
}

/** A repost's own timeline entry beside its notification group, both made before the count settles. */
const countedByTimeline = async () => null;

function withTimelineEffects(timeline: RepostTimelineEffects, group: InteractionEffects): InteractionEffects {
  return {
    ...group,
    // The repost's entry changes the count once it is stored (see PostDelivery); the group's join does not wait for it.
    adding: async (edge, count, scope) => (await Promise.all([timeline.adding(edge, count, scope), group.adding(edge, countedByTimeline, scope)])).flat(),
    removing: async (edge, members, scope) => (await Promise.all([timeline.removing(edge, scope), group.removing(edge, members, scope)]))[1],
  };
}

/** Live subscriptions, told whom a viewer follows and the timeline's rules for what they see. */
function liveCore(
  changes: ChangeBus,
  graph: UserGraphService,
  timelines: TimelineReading,
  lists: ReaderLists,
  group: LiveGroup,
  conversations: Conversations,
  config: Config,
  discovery: Discovery,
): LiveService {
  return new LiveService(
    changes,
    {
      followingIds: (viewerId) => graph.followingIds(viewerId),
      followedTags: (viewerId) => discovery.followedTags(viewerId),
      group,
      visibility: {
        added: (viewerId, post) => timelines.showsLive(viewerId, post),
        removed: (viewerId, removal) => timelines.showsLiveRemoval(viewerId, removal),
        edited: (viewerId, edit) => conversations.showsLiveEdit(viewerId, edit.post.id),
      },
      lists: { assertListOf: (viewerId, listId) => lists.assertListOf(viewerId, listId), added: (viewerId, listId, post) => lists.showsLive(viewerId, listId, post) },
    },
    config.live,
  );
}

/** Another instance's change (or this one's, echoed) makes what this process holds stale. */
function forgetWhatChangesMakeStale(
  changes: ChangeBus,
  held: { content: ContentService; graph: UserGraphService; readerFilters: ReaderFilters; backend: FeedBackend; interactions: InteractionStores; bookmarks: Bookmarks },
): void {
  const { content, graph, readerFilters, backend, interactions, bookmarks } = held;
  const viewerStates = { like: interactions.likes, repost: interactions.reposts, bookmark: bookmarks };
  changes.listen((event) =>
    forgetStale(event, {
      forgetOutboxes: (authorIds, change) => content.outboxesChanged(authorIds, change),
      forgetPosts: (postIds) => content.lookups.forgetPosts(postIds),
      postEdited: (post, repostIds) => content.lookups.postEdited(post, repostIds),
      postCounted: (postId, counts) => content.lookups.countsChanged(postId, counts),
      forgetViewerState: (viewerId, state, postId) => viewerStates[state].forgetHeld(viewerId, [postId]),
      forgetUsers: (change) => {
        graph.invalidate(change);
        content.pins.forgetHeld(change.users);
      },
      applyCounts: (counts) => graph.applyCounts(counts),
      forgetFilters: (readerIds) => (readerIds === 'all' ? readerFilters.invalidateAll() : readerFilters.invalidate(readerIds)),
      forgetTimelines: (userIds, edits) => backend.forgetHeld(userIds, edits),
      forgetLists: (ownerIds) => graph.lists.forgetOwners(ownerIds),
    }),
  );
}

/**
 * Run at every start: creates indexes (a no-op when they exist) and refuses timelines that the
 * configured strategy did not build.
 */
export async function prepareDatabase(services: Services): Promise<void> {
  await Promise.all([
    services.graph.ensureIndexes(),
    services.userAccounts.ensureIndexes(),
    services.feedState.ensureIndexes(),
    services.content.ensureIndexes(),
    services.feed.backend.ensureIndexes(),
    services.changes.ensureIndexes(),
    services.fanout.ensureIndexes(),
    services.rateLimits.ensureIndexes(),
    services.relations.readerFilters.ensureIndexes(),
    services.interactions.likes.ensureIndexes(),
    services.interactions.reposts.ensureIndexes(),
    services.notifications.ensureIndexes(),
    services.profiles.ensureIndexes(),
    services.bookmarks.ensureIndexes(),
    services.media.ensureIndexes(),
    services.audit.ensureIndexes(),
    services.reports.ensureIndexes(),
    services.suspensions.ensureIndexes(),
    services.trends.ensureIndexes(),
  ]);
  // Follows made before pairs existed get theirs, so every request finds a pair for every edge.
  await migrateOnce(services.db, 'follow-pairs-for-every-edge', () => services.graph.pairs.pairEveryEdge());
  // Posts stored before ids carried their place on a sharded cluster get it (first: the migrations after it find posts by id).
  await migrateOnce(services.db, 'post-places', () => services.content.placeEveryPost());
  await services.content.checkPlacement();
  // Likes and reposts made before their edges named the post's author (part of their shard key) get it.
  const authorsOf = async (postIds: ObjectId[]) => new Map((await services.content.lookups.getPosts(postIds)).map((post) => [post.id.toHexString(), post.authorId]));
  await migrateOnce(services.db, 'recipient-on-every-interaction', () =>
    Promise.all([services.interactions.likes.nameEveryRecipient(authorsOf), services.interactions.reposts.nameEveryRecipient(authorsOf)]),
  );
  // Replies stored before replies kept their thread place get it, so a thread shows them (after `post-places`: it writes by id).
  await migrateOnce(services.db, 'thread-places', () => services.content.threads.placeEveryReply());
  // Posts stored before tags and search tokens existed get both, so tag pages, searches and followed tags find them (after `post-places`: it writes by id).
  await migrateOnce(services.db, 'post-search-tokens', () => backfillSearchTokens(services.content.content, migrationProgress(services.db, 'post-search-tokens')));
  await services.timelineState.checkAtStart();
}
