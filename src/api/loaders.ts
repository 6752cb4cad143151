import DataLoader from 'dataloader';
import type { PostCounts, PostRecord } from '../records/posts.js';
import { ObjectId } from 'mongodb';
import type { KeywordFilterRecord, ReaderView } from '../graph/readerView.js';
import type { ListRecord } from '../records/lists.js';
import type { NotificationRecord } from '../records/notifications.js';
import type { UserRecord } from '../records/users.js';
import type { ApiServices } from './apiServices.js';
import type { NotificationPosition } from '../notifications/notificationService.js';

/**
 * Per-request batching: every user, post or "does the viewer follow X" that a response needs is
 * fetched in one query per kind, however many fields ask for it.
 */
export interface Loaders {
  users: DataLoader<string, UserRecord | null>;
  /**
   * What `users` has answered so far in this request, to be read without a promise: a page's
   * authors are loaded before its posts resolve, and twenty awaits per page showed in the profile.
   */
  loadedUsers: ReadonlyMap<string, UserRecord | null>;
  /** Keyed by lowercase hex post id; through the in-process tier, so without counts. */
  posts: DataLoader<string, PostRecord | null>;
  /** The same, null also for a post the viewer may not see: for `post(id)` and `replyTo`. */
  visiblePosts: DataLoader<string, PostRecord | null>;
  /** Keyed by lowercase hex post id: the current counts, read only when a response asks for them. */
  postCounts: DataLoader<string, PostCounts>;
  /**
   * Posts shown beside a page's own (the quoted ones) and counts, read together (one query for
   * what the in-process tiers miss) and primed into `posts` and `postCounts`; the counts by hex id.
   */
  postsWithCounts(postIds: readonly string[], countIds: readonly string[]): Promise<Map<string, PostCounts>>;
  viewerFollows: DataLoader<string, boolean>;
  /** Whether the viewer waits for these locked accounts to approve a follow: one query per response. */
  viewerRequests: DataLoader<string, boolean>;
  /** Keyed by lowercase hex post id: one `likes` / `reposts` query per page (Weibo's existence checks). */
  viewerLikes: DataLoader<string, boolean>;
  viewerReposts: DataLoader<string, boolean>;
  /** Keyed by lowercase hex post id: one `bookmarks` query per page. */
  viewerBookmarks: DataLoader<string, boolean>;
  /** The viewer's mutes, blocks and keyword filters: one read per request. */
  viewerFilters: DataLoader<string, ReaderView>;
  /** Keyed by lowercase hex list id, of the viewer's lists: one query for every list of a response. */
  listMemberCounts: DataLoader<string, number>;
  /** Where each recipient marked their notifications read (null: nowhere): one query per request. */
  notificationMarkers: DataLoader<string, NotificationPosition | null>;
  /**
   * Posts for `node`, keyed by hex id: null for an unknown id and for a post the viewer may not
   * see, found by the same work either way (see createLoaders), so that neither answer nor time
   * tells one from the other.
   */
  nodePosts: DataLoader<string, PostRecord | null>;
  /** The viewer's lists by hex id (null for another account's or none): one read of the viewer's lists. */
  viewerLists: DataLoader<string, ListRecord | null>;
  /** The viewer's notifications by their own id: one query for any number. */
  viewerNotifications: DataLoader<string, NotificationRecord | null>;
  /** The viewer's keyword filters by hex id: one read of the viewer's filters. */
  viewerKeywordFilters: DataLoader<string, KeywordFilterRecord | null>;
}

const noCounts: PostCounts = { likes: 0, reposts: 0, replies: 0, quotes: 0, version: 0 };

export function createLoaders(services: ApiServices, viewerId: string | null): Loaders {
  const loadedUsers = new Map<string, UserRecord | null>();
  const posts = new DataLoader<string, PostRecord | null>(async (ids) => {
    const found = await services.content.lookups.cachedPosts(ids.map((id) => new ObjectId(id)));
    const byId = new Map(found.map((post) => [post.id.toHexString(), post]));
    return ids.map((id) => byId.get(id) ?? null);
  });
  const postCounts = new DataLoader<string, PostCounts>(async (ids) => {
    const counts = await services.content.lookups.countsOf(ids.map((id) => new ObjectId(id)));
    return ids.map((id) => counts.get(id) ?? noCounts);
  });
  const users = new DataLoader<string, UserRecord | null>(async (handles) => {
    const byHandle = new Map((await services.users.getUsers(handles)).map((user) => [user.handle, user]));
    return handles.map((handle) => {
      const user = byHandle.get(handle) ?? null;
      loadedUsers.set(handle, user);
      return user;
    });
  });
  const viewerFilters = new DataLoader<string, ReaderView>(async (handles) => Promise.all(handles.map((handle) => services.relations.filtersOf(handle))));
  return {
    users,
    loadedUsers,
    posts,
    visiblePosts: new DataLoader(async (ids) => {
      const found = (await posts.loadMany(ids)).map((post) => {
        if (post instanceof Error) throw post;
        return post;
      });
      const present = found.filter((post): post is PostRecord => post !== null);
      // Gone as in pages and an author's posts: a post whose author's account is being removed, and
      // across a block, either way.
      const [seen, authors, view] = await Promise.all([
        services.visibility.canSee(viewerId, present),
        existingUsers(users, present.map((post) => post.authorId)),
        viewerId === null || present.every((post) => post.authorId === viewerId) ? null : viewerFilters.load(viewerId),
      ]);
      const hidden = new Set(present.filter((post, index) => !seen[index] || !authors.has(post.authorId) || view?.isBlockedEitherWay(post.authorId)));
      return found.map((post) => (post && !hidden.has(post) ? post : null));
    }),
    postCounts,
    async postsWithCounts(postIds, countIds) {
      const found = await services.content.lookups.postsWithCounts(postIds.map((id) => new ObjectId(id)), countIds.map((id) => new ObjectId(id)));
      for (const id of postIds) posts.prime(id, found.posts.get(id) ?? null);
      for (const id of countIds) postCounts.prime(id, found.counts.get(id) ?? noCounts);
      return found.counts;
    },
    viewerFollows: createViewerFollowsLoader(services, viewerId),
    viewerRequests: new DataLoader(async (handles) => {
      const requested = viewerId === null ? new Set<string>() : await services.graph.pairs.requestedAmong(viewerId, handles);
      return handles.map((handle) => requested.has(handle));
    }),
    viewerLikes: viewerStateLoader(viewerId, (viewer, ids) => services.timelines.viewerLikes(viewer, ids)),
    viewerReposts: viewerStateLoader(viewerId, (viewer, ids) => services.timelines.viewerReposts(viewer, ids)),
    viewerBookmarks: viewerStateLoader(viewerId, (viewer, ids) => services.bookmarks.among(viewer, ids)),
    viewerFilters,
    listMemberCounts: new DataLoader(async (ids) => {
      if (!viewerId) return ids.map(() => 0);
      const counts = await services.lists.memberCounts(viewerId, ids.map((id) => new ObjectId(id)));
      return ids.map((id) => counts.get(id) ?? 0);
    }),
    notificationMarkers: new DataLoader(async (handles) => {
      const markers = await services.notifications.markersOf(handles);
      return handles.map((handle) => markers.get(handle) ?? null);
    }),
    nodePosts: new DataLoader(async (ids) => {
      // From the database every time, and with the viewer's follows and filters read whether or
      // not a post turned up: a post the viewer may not see, held in this process after an earlier
      // look, would otherwise answer faster than an id that names nothing.
      const [stored] = await Promise.all([
        services.content.lookups.getPosts(ids.map((id) => new ObjectId(id))),
        viewerId === null ? null : Promise.all([viewerFilters.load(viewerId), services.graph.followingIds(viewerId)]),
      ]);
      const posts = stored.filter((post) => !post.repostOf);
      const [seen, authors, view] = await Promise.all([
        services.visibility.canSee(viewerId, posts),
        existingUsers(users, posts.map((post) => post.authorId)),
        viewerId === null ? null : viewerFilters.load(viewerId),
      ]);
      const shown = new Map(
        posts
          .filter((post, index) => seen[index] && authors.has(post.authorId) && !(post.authorId !== viewerId && view?.isBlockedEitherWay(post.authorId)))
          .map((post) => [post.id.toHexString(), post]),
      );
      return ids.map((id) => shown.get(id) ?? null);
    }),
    viewerLists: new DataLoader(async (ids) => {
      const lists = viewerId === null ? [] : await services.lists.listsOf(viewerId);
      const byId = new Map(lists.map((list) => [list.id.toHexString(), list]));
      return ids.map((id) => byId.get(id) ?? null);
    }),
    viewerNotifications: new DataLoader(async (ids) => {
      const found = viewerId === null ? [] : await services.notifications.ofViewer(viewerId, ids);
      const byId = new Map(found.map((notification) => [notification.id, notification]));
      return ids.map((id) => byId.get(id) ?? null);
    }),
    viewerKeywordFilters: new DataLoader(async (ids) => {
      const filters = viewerId === null ? [] : await services.relations.readerFilters.keywordFilters(viewerId);
      const byId = new Map(filters.map((filter) => [filter.id, filter]));
      return ids.map((id) => byId.get(id) ?? null);
    }),
  };
}

function viewerStateLoader(
  viewerId: string | null,
  among: (viewerId: string, postIds: ObjectId[]) => Promise<Set<string>>,
): DataLoader<string, boolean> {
  return new DataLoader(async (ids) => {
    if (!viewerId) return ids.map(() => false);
    const found = await among(viewerId, ids.map((id) => new ObjectId(id)));
    return ids.map((id) => found.has(id));
  });
}

/** "Does the viewer follow X" for a batch of handles. */
function createViewerFollowsLoader(services: ApiServices, viewerId: string | null): DataLoader<string, boolean> {
  return new DataLoader(async (handles) => {
    if (!viewerId) return handles.map(() => false);
    const followed = await services.graph.followedAmong(viewerId, handles);
    return handles.map((handle) => followed.has(handle));
  });
}

/** Which of `handles` are users, from the same per-request loader the authors resolve through. */
export async function existingUsers(users: DataLoader<string, UserRecord | null>, handles: readonly string[]): Promise<Set<string>> {
  const loaded = await users.loadMany(handles);
  return new Set(handles.filter((_, index) => { const user = loaded[index]; return user !== null && !(user instanceof Error); }));
}
