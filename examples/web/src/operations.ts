/**
 * The operations the reference web client sends. Their result and variable types are generated
 * from schema.graphql by `npm run codegen` (gql/, codegen's client preset): nothing here is typed
 * by hand, so a change of the schema that breaks an operation breaks the build. The names below
 * are the generated shapes the views pass around.
 */
import { graphql } from './gql/index.js';
import type {
  AuthorFieldsFragment,
  ListMembersQuery,
  ListQuery,
  ListSummaryFieldsFragment,
  MediaFieldsFragment,
  NotificationFieldsFragment,
  NotificationsQuery,
  PageInfoFieldsFragment,
  PersonFieldsFragment,
  PostEdgeFieldsFragment,
  PostFieldsFragment,
  ProfileQuery,
  SuggestionsQuery,
  ThreadQuery,
  TimelineQuery,
} from './gql/graphql.js';

export type { BookmarksQuery as BookmarksData, NotificationKind, NotificationsQuery as NotificationsData, TimelineQuery as TimelineData, Visibility } from './gql/graphql.js';
export type Author = AuthorFieldsFragment;
export type Post = PostFieldsFragment;
/** An image of a post: its URLs are signed and expire, so they are never kept beyond the page. */
export type Media = MediaFieldsFragment;
export type Edge = PostEdgeFieldsFragment;
export type PageInfo = PageInfoFieldsFragment;
export type Connection = TimelineQuery['timeline'];
export type Profile = NonNullable<ProfileQuery['user']>;
export type ThreadPost = NonNullable<ThreadQuery['post']>;
export type Person = PersonFieldsFragment;
export type Suggestion = SuggestionsQuery['suggestedFollows'][number];
export type Notification = NotificationFieldsFragment;
export type NotificationEdge = NotificationsQuery['notifications']['edges'][number];
export type ListSummary = ListSummaryFieldsFragment;
export type ListPage = NonNullable<ListQuery['list']>;
export type ListMembers = NonNullable<ListMembersQuery['list']>;

graphql(`
  fragment AuthorFields on User {
    id
    handle
    displayName
  }
`);
graphql(`
  fragment PostFields on Post {
    id
    text
    createdAt
    visibility
    likeCount
    repostCount
    replyCount
    viewerHasLiked
    viewerHasReposted
    viewerHasBookmarked
    author { ...AuthorFields }
    mentions { id handle }
    tags
    replyTo { id author { ...AuthorFields } }
    media { ...MediaFields }
    editedAt
    pinned
    quoteCount
    quoted { id text createdAt author { ...AuthorFields } media { ...MediaFields } }
  }
`);
graphql(`
  fragment MediaFields on Media {
    id
    kind
    alt
    width
    height
    url
    previewUrl
    blurhash
  }
`);
graphql(`
  fragment PageInfoFields on PageInfo {
    hasNextPage
    hasPreviousPage
    startCursor
    endCursor
  }
`);
graphql(`
  fragment PostEdgeFields on PostEdge {
    cursor
    repostedBy { ...AuthorFields }
    node { ...PostFields }
  }
`);
graphql(`
  fragment PersonFields on User {
    ...AuthorFields
    bio
    followerCount
    viewerIsFollowing
  }
`);

export const VIEWER = graphql(`
  query Viewer {
    viewer { ...AuthorFields }
  }
`);
export const TIMELINE = graphql(`
  query Timeline($first: Int, $after: String, $last: Int, $before: String) {
    timeline(first: $first, after: $after, last: $last, before: $before) {
      edges { ...PostEdgeFields }
      pageInfo { ...PageInfoFields }
    }
  }
`);
export const PROFILE = graphql(`
  query Profile($handle: String!, $first: Int, $after: String) {
    user(handle: $handle) {
      ...AuthorFields
      bio
      followerCount
      followingCount
      viewerIsFollowing
      viewerHasMuted
      viewerHasBlocked
      locked
      viewerFollowState
      pinnedPosts { ...PostFields }
      posts(first: $first, after: $after) {
        edges { ...PostEdgeFields }
        pageInfo { ...PageInfoFields }
      }
    }
  }
`);
export const THREAD = graphql(`
  query Thread($id: ID!, $first: Int, $after: String) {
    post(id: $id) {
      ...PostFields
      ancestors { ...PostFields }
      descendants(first: $first, after: $after) {
        edges { ...PostEdgeFields }
        pageInfo { ...PageInfoFields }
      }
    }
  }
`);
export const FILTERS = graphql(`
  query Filters {
    viewer { id keywordFilters { id phrase } }
  }
`);
export const MY_PROFILE = graphql(`
  query MyProfile {
    viewer { id handle displayName bio }
  }
`);
export const SEARCH_USERS = graphql(`
  query SearchUsers($query: String!, $first: Int) {
    searchUsers(query: $query, first: $first) { ...PersonFields }
  }
`);
export const SUGGESTIONS = graphql(`
  query Suggestions($first: Int) {
    suggestedFollows(first: $first) {
      mutualCount
      user { ...PersonFields }
      followedBy(first: 2) { ...AuthorFields }
    }
  }
`);
export const BOOKMARKS = graphql(`
  query Bookmarks($first: Int, $after: String) {
    viewer {
      id
      bookmarks(first: $first, after: $after) {
        edges { ...PostEdgeFields }
        pageInfo { ...PageInfoFields }
      }
    }
  }
`);

graphql(`
  fragment NotificationFields on Notification {
    id
    kind
    createdAt
    actorCount
    unread
    actors(first: 3) { ...AuthorFields }
    post { id text visibility }
  }
`);
export const NOTIFICATIONS = graphql(`
  query Notifications($first: Int, $after: String) {
    notifications(first: $first, after: $after) {
      edges { cursor node { ...NotificationFields } }
      pageInfo { ...PageInfoFields }
      unreadCount
    }
  }
`);
/** The badge's number alone; sent with no-cache, so it never replaces the cached page. */
export const UNREAD_NOTIFICATIONS = graphql(`
  query UnreadNotifications {
    notifications(first: 1) { unreadCount }
  }
`);
export const NOTIFICATION_ADDED = graphql(`
  subscription NotificationAdded {
    notificationAdded { cursor node { ...NotificationFields } }
  }
`);
/** The notifications it marked come back with `unread: false`, and the cache applies them by id. */
export const MARK_NOTIFICATIONS_READ = graphql(`
  mutation MarkNotificationsRead($upTo: String!) {
    markNotificationsRead(upTo: $upTo) {
      unreadCount
      notifications { id unread }
    }
  }
`);

export const TIMELINE_MARKER = graphql(`
  query TimelineMarker {
    timelineMarker { cursor unreadCount }
  }
`);
export const MARK_TIMELINE_READ = graphql(`
  mutation MarkTimelineRead($upTo: String!) {
    markTimelineRead(upTo: $upTo) { cursor unreadCount }
  }
`);

graphql(`
  fragment ListSummaryFields on List {
    id
    name
    memberCount
  }
`);
export const LISTS = graphql(`
  query Lists {
    lists { ...ListSummaryFields }
  }
`);
export const LIST = graphql(`
  query List($id: ID!, $first: Int, $after: String, $last: Int, $before: String) {
    list(id: $id) {
      ...ListSummaryFields
      timeline(first: $first, after: $after, last: $last, before: $before) {
        edges { ...PostEdgeFields }
        pageInfo { ...PageInfoFields }
      }
    }
  }
`);
export const LIST_MEMBERS = graphql(`
  query ListMembers($id: ID!, $after: String) {
    list(id: $id) {
      id
      memberCount
      members(first: 50, after: $after) {
        edges { cursor node { ...AuthorFields } }
        pageInfo { ...PageInfoFields }
      }
    }
  }
`);
export const LIST_POST_ADDED = graphql(`
  subscription ListPostAdded($id: ID!) {
    listPostAdded(id: $id) { ...PostEdgeFields }
  }
`);
export const CREATE_LIST = graphql(`
  mutation CreateList($name: String!) {
    createList(name: $name) { ...ListSummaryFields }
  }
`);
export const RENAME_LIST = graphql(`
  mutation RenameList($id: ID!, $name: String!) {
    renameList(id: $id, name: $name) { ...ListSummaryFields }
  }
`);
export const DELETE_LIST = graphql(`
  mutation DeleteList($id: ID!) {
    deleteList(id: $id)
  }
`);
export const ADD_TO_LIST = graphql(`
  mutation AddToList($id: ID!, $handle: String!) {
    addToList(id: $id, handle: $handle) { ...ListSummaryFields }
  }
`);
export const REMOVE_FROM_LIST = graphql(`
  mutation RemoveFromList($id: ID!, $handle: String!) {
    removeFromList(id: $id, handle: $handle) { ...ListSummaryFields }
  }
`);

export const POST_ADDED = graphql(`
  subscription PostAdded {
    timelinePostAdded { ...PostEdgeFields }
  }
`);
export const POST_REMOVED = graphql(`
  subscription PostRemoved {
    timelinePostRemoved
  }
`);

export const SIGN_UP = graphql(`
  mutation SignUp($handle: String!, $password: String!, $displayName: String) {
    signUp(handle: $handle, password: $password, displayName: $displayName) { token user { ...AuthorFields } }
  }
`);
export const LOG_IN = graphql(`
  mutation LogIn($handle: String!, $password: String!) {
    logIn(handle: $handle, password: $password) { token user { ...AuthorFields } }
  }
`);
export const CREATE_POST = graphql(`
  mutation CreatePost($text: String!, $replyTo: ID, $visibility: Visibility, $media: [ID!], $quoteOf: ID) {
    createPost(text: $text, replyTo: $replyTo, visibility: $visibility, media: $media, quoteOf: $quoteOf) {
      ...PostFields
      replyTo { id replyCount }
    }
  }
`);
export const UPDATE_MEDIA = graphql(`
  mutation UpdateMedia($id: ID!, $alt: String) {
    updateMedia(id: $id, alt: $alt) { id alt }
  }
`);
export const DELETE_POST = graphql(`
  mutation DeletePost($id: ID!) {
    deletePost(id: $id)
  }
`);
graphql(`
  fragment CountFields on Post {
    id
    likeCount
    viewerHasLiked
    repostCount
    viewerHasReposted
  }
`);
export const LIKE = graphql(`
  mutation Like($id: ID!) {
    likePost(id: $id) { ...CountFields }
  }
`);
export const UNLIKE = graphql(`
  mutation Unlike($id: ID!) {
    unlikePost(id: $id) { ...CountFields }
  }
`);
export const REPOST = graphql(`
  mutation Repost($id: ID!) {
    repost(id: $id) { ...CountFields }
  }
`);
export const UNDO_REPOST = graphql(`
  mutation UndoRepost($id: ID!) {
    undoRepost(id: $id) { ...CountFields }
  }
`);
export const BOOKMARK = graphql(`
  mutation Bookmark($id: ID!) {
    bookmark(id: $id) { id viewerHasBookmarked }
  }
`);
export const UNBOOKMARK = graphql(`
  mutation Unbookmark($id: ID!) {
    unbookmark(id: $id) { id viewerHasBookmarked }
  }
`);
graphql(`
  fragment RelationFields on User {
    id
    handle
    followerCount
    followingCount
    viewerIsFollowing
    viewerHasMuted
    viewerHasBlocked
    viewerFollowState
  }
`);
export const RELATIONS = {
  follow: graphql(`
    mutation Follow($handle: String!) {
      follow(handle: $handle) { ...RelationFields }
    }
  `),
  unfollow: graphql(`
    mutation Unfollow($handle: String!) {
      unfollow(handle: $handle) { ...RelationFields }
    }
  `),
  mute: graphql(`
    mutation Mute($handle: String!) {
      mute(handle: $handle) { ...RelationFields }
    }
  `),
  unmute: graphql(`
    mutation Unmute($handle: String!) {
      unmute(handle: $handle) { ...RelationFields }
    }
  `),
  block: graphql(`
    mutation Block($handle: String!) {
      block(handle: $handle) { ...RelationFields }
    }
  `),
  unblock: graphql(`
    mutation Unblock($handle: String!) {
      unblock(handle: $handle) { ...RelationFields }
    }
  `),
};
export const ADD_FILTER = graphql(`
  mutation AddFilter($phrase: String!) {
    addKeywordFilter(phrase: $phrase) { id phrase }
  }
`);
export const REMOVE_FILTER = graphql(`
  mutation RemoveFilter($id: ID!) {
    removeKeywordFilter(id: $id)
  }
`);
export const UPDATE_PROFILE = graphql(`
  mutation UpdateProfile($displayName: String, $bio: String) {
    updateProfile(displayName: $displayName, bio: $bio) { id handle displayName bio }
  }
`);
export const CHANGE_PASSWORD = graphql(`
  mutation ChangePassword($current: String!, $next: String!) {
    changePassword(current: $current, next: $next) { token user { ...AuthorFields } }
  }
`);
export const LOG_OUT_EVERYWHERE = graphql(`
  mutation LogOutEverywhere {
    logOutEverywhere
  }
`);

// Discovery: tag pages, post search, trending and followed tags.
export const TAG_TIMELINE = graphql(`
  query TagTimeline($tag: String!, $first: Int, $after: String) {
    tagTimeline(tag: $tag, first: $first, after: $after) {
      edges { ...PostEdgeFields }
      pageInfo { ...PageInfoFields }
    }
    followedTags
  }
`);
export const SEARCH_POSTS = graphql(`
  query SearchPosts($query: String!, $first: Int, $after: String) {
    searchPosts(query: $query, first: $first, after: $after) {
      edges { ...PostEdgeFields }
      pageInfo { ...PageInfoFields }
    }
  }
`);
export const TRENDING_TAGS = graphql(`
  query TrendingTags($first: Int) {
    trendingTags(first: $first) { tag accounts posts }
  }
`);
export const FOLLOW_TAG = graphql(`
  mutation FollowTag($tag: String!) {
    followTag(tag: $tag)
  }
`);
export const UNFOLLOW_TAG = graphql(`
  mutation UnfollowTag($tag: String!) {
    unfollowTag(tag: $tag)
  }
`);
