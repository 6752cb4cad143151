/** The operations the reference web client sends, and the shapes it reads back (schema.graphql). */
import { gql } from '@apollo/client';

export type Visibility = 'PUBLIC' | 'FOLLOWERS' | 'MENTIONED';
export type NotificationKind = 'FOLLOW' | 'LIKE' | 'REPOST' | 'REPLY' | 'MENTION';

export interface Author {
  id: string;
  handle: string;
  displayName: string | null;
}
/** An image of a post: its URLs are signed and expire, so they are never kept beyond the page. */
export interface Media {
  id: string;
  kind: 'IMAGE';
  alt: string | null;
  width: number;
  height: number;
  url: string;
  previewUrl: string;
  blurhash: string;
}
export interface Post {
  id: string;
  text: string;
  media: Media[];
  createdAt: string;
  visibility: Visibility;
  likeCount: number;
  repostCount: number;
  replyCount: number;
  viewerHasLiked: boolean;
  viewerHasReposted: boolean;
  viewerHasBookmarked: boolean;
  author: Author;
  mentions: Pick<Author, 'id' | 'handle'>[];
  replyTo: { id: string; author: Author } | null;
}
export interface Edge {
  cursor: string;
  repostedBy?: Author | null;
  node: Post;
}
export interface PageInfo {
  hasNextPage: boolean;
  hasPreviousPage: boolean;
  startCursor: string | null;
  endCursor: string | null;
}
export interface Connection {
  edges: Edge[];
  pageInfo: PageInfo;
}
export interface TimelineData {
  timeline: Connection;
}
export interface Profile extends Author {
  bio: string | null;
  followerCount: number;
  followingCount: number;
  viewerIsFollowing: boolean;
  viewerHasMuted: boolean;
  viewerHasBlocked: boolean;
  posts: Connection;
}
export interface ThreadPost extends Post {
  replyTo: (Post & { replyTo: Post['replyTo'] }) | null;
  replies: Connection;
}
export interface Person extends Author {
  bio: string | null;
  followerCount: number;
  viewerIsFollowing: boolean;
}
export interface Suggestion {
  user: Person;
  mutualCount: number;
  followedBy: Author[];
}
export interface Notification {
  id: string;
  kind: NotificationKind;
  createdAt: string;
  actorCount: number;
  unread: boolean;
  actors: Author[];
  post: Pick<Post, 'id' | 'text' | 'visibility'> | null;
}
export interface NotificationEdge {
  cursor: string;
  node: Notification;
}
export interface NotificationsData {
  notifications: { edges: NotificationEdge[]; pageInfo: PageInfo; unreadCount: number };
}
export interface ListSummary {
  id: string;
  name: string;
  memberCount: number;
}
export interface ListPage extends ListSummary {
  timeline: Connection;
}
export interface ListMembers {
  id: string;
  memberCount: number;
  members: { edges: { cursor: string; node: Author }[]; pageInfo: PageInfo };
}
export interface BookmarksData {
  viewer: { id: string; bookmarks: Connection } | null;
}

const AUTHOR = gql`
  fragment AuthorFields on User { id handle displayName }
`;
export const POST_FIELDS = gql`
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
    author { id handle displayName }
    mentions { id handle }
    replyTo { id author { id handle displayName } }
    media { id kind alt width height url previewUrl blurhash }
  }
`;
const PAGE_INFO = 'pageInfo { hasNextPage hasPreviousPage startCursor endCursor }';
const EDGES = 'edges { cursor repostedBy { id handle displayName } node { ...PostFields } }';
const PERSON = 'id handle displayName bio followerCount viewerIsFollowing';

export const VIEWER = gql`query Viewer { viewer { ...AuthorFields } } ${AUTHOR}`;
export const TIMELINE = gql`
  query Timeline($first: Int, $after: String, $last: Int, $before: String) {
    timeline(first: $first, after: $after, last: $last, before: $before) { ${EDGES} ${PAGE_INFO} }
  }
  ${POST_FIELDS}
`;
export const PROFILE = gql`
  query Profile($handle: String!, $first: Int, $after: String) {
    user(handle: $handle) {
      ...AuthorFields
      bio
      followerCount
      followingCount
      viewerIsFollowing
      viewerHasMuted
      viewerHasBlocked
      posts(first: $first, after: $after) { edges { cursor node { ...PostFields } } ${PAGE_INFO} }
    }
  }
  ${POST_FIELDS}
  ${AUTHOR}
`;
export const THREAD = gql`
  query Thread($id: ID!, $first: Int, $after: String) {
    post(id: $id) {
      ...PostFields
      replyTo { ...PostFields }
      replies(first: $first, after: $after) { edges { cursor node { ...PostFields } } ${PAGE_INFO} }
    }
  }
  ${POST_FIELDS}
`;
export const FILTERS = gql`query Filters { viewer { id keywordFilters { id phrase } } }`;
export const MY_PROFILE = gql`query MyProfile { viewer { id handle displayName bio } }`;
export const SEARCH_USERS = gql`query SearchUsers($query: String!, $first: Int) { searchUsers(query: $query, first: $first) { ${PERSON} } }`;
export const SUGGESTIONS = gql`
  query Suggestions($first: Int) {
    suggestedFollows(first: $first) { mutualCount user { ${PERSON} } followedBy(first: 2) { ...AuthorFields } }
  }
  ${AUTHOR}
`;
export const BOOKMARKS = gql`
  query Bookmarks($first: Int, $after: String) {
    viewer { id bookmarks(first: $first, after: $after) { edges { cursor node { ...PostFields } } ${PAGE_INFO} } }
  }
  ${POST_FIELDS}
`;

const NOTIFICATION_FIELDS = gql`
  fragment NotificationFields on Notification {
    id
    kind
    createdAt
    actorCount
    unread
    actors(first: 3) { id handle displayName }
    post { id text visibility }
  }
`;
export const NOTIFICATIONS = gql`
  query Notifications($first: Int, $after: String) {
    notifications(first: $first, after: $after) { edges { cursor node { ...NotificationFields } } ${PAGE_INFO} unreadCount }
  }
  ${NOTIFICATION_FIELDS}
`;
/** The badge's number alone; sent with no-cache, so it never replaces the cached page. */
export const UNREAD_NOTIFICATIONS = gql`query UnreadNotifications { notifications(first: 1) { unreadCount } }`;
export const NOTIFICATION_ADDED = gql`
  subscription NotificationAdded { notificationAdded { cursor node { ...NotificationFields } } }
  ${NOTIFICATION_FIELDS}
`;
export const MARK_NOTIFICATIONS_READ = gql`mutation MarkNotificationsRead($upTo: String!) { markNotificationsRead(upTo: $upTo) }`;

export const TIMELINE_MARKER = gql`query TimelineMarker { timelineMarker { cursor unreadCount } }`;
export const MARK_TIMELINE_READ = gql`mutation MarkTimelineRead($upTo: String!) { markTimelineRead(upTo: $upTo) { cursor unreadCount } }`;

const LIST_SUMMARY = 'id name memberCount';
export const LISTS = gql`query Lists { lists { ${LIST_SUMMARY} } }`;
export const LIST = gql`
  query List($id: ID!, $first: Int, $after: String, $last: Int, $before: String) {
    list(id: $id) { ${LIST_SUMMARY} timeline(first: $first, after: $after, last: $last, before: $before) { ${EDGES} ${PAGE_INFO} } }
  }
  ${POST_FIELDS}
`;
export const LIST_MEMBERS = gql`
  query ListMembers($id: ID!, $after: String) {
    list(id: $id) { id memberCount members(first: 50, after: $after) { edges { cursor node { ...AuthorFields } } ${PAGE_INFO} } }
  }
  ${AUTHOR}
`;
export const LIST_POST_ADDED = gql`
  subscription ListPostAdded($id: ID!) { listPostAdded(id: $id) { cursor repostedBy { id handle displayName } node { ...PostFields } } }
  ${POST_FIELDS}
`;
export const CREATE_LIST = gql`mutation CreateList($name: String!) { createList(name: $name) { ${LIST_SUMMARY} } }`;
export const RENAME_LIST = gql`mutation RenameList($id: ID!, $name: String!) { renameList(id: $id, name: $name) { ${LIST_SUMMARY} } }`;
export const DELETE_LIST = gql`mutation DeleteList($id: ID!) { deleteList(id: $id) }`;
export const ADD_TO_LIST = gql`mutation AddToList($id: ID!, $handle: String!) { addToList(id: $id, handle: $handle) { ${LIST_SUMMARY} } }`;
export const REMOVE_FROM_LIST = gql`mutation RemoveFromList($id: ID!, $handle: String!) { removeFromList(id: $id, handle: $handle) { ${LIST_SUMMARY} } }`;

export const POST_ADDED = gql`
  subscription PostAdded { timelinePostAdded { cursor repostedBy { id handle displayName } node { ...PostFields } } }
  ${POST_FIELDS}
`;
export const POST_REMOVED = gql`subscription PostRemoved { timelinePostRemoved }`;

export const SIGN_UP = gql`
  mutation SignUp($handle: String!, $password: String!, $displayName: String) {
    signUp(handle: $handle, password: $password, displayName: $displayName) { token user { ...AuthorFields } }
  }
  ${AUTHOR}
`;
export const LOG_IN = gql`
  mutation LogIn($handle: String!, $password: String!) { logIn(handle: $handle, password: $password) { token user { ...AuthorFields } } }
  ${AUTHOR}
`;
export const CREATE_POST = gql`
  mutation CreatePost($text: String!, $replyTo: ID, $visibility: Visibility, $media: [ID!]) {
    createPost(text: $text, replyTo: $replyTo, visibility: $visibility, media: $media) { ...PostFields replyTo { id replyCount } }
  }
  ${POST_FIELDS}
`;
export const DELETE_POST = gql`mutation DeletePost($id: ID!) { deletePost(id: $id) }`;
export const UPDATE_MEDIA = gql`mutation UpdateMedia($id: ID!, $alt: String) { updateMedia(id: $id, alt: $alt) { id alt } }`;
const COUNTS = 'id likeCount viewerHasLiked repostCount viewerHasReposted';
export const LIKE = gql`mutation Like($id: ID!) { likePost(id: $id) { ${COUNTS} } }`;
export const UNLIKE = gql`mutation Unlike($id: ID!) { unlikePost(id: $id) { ${COUNTS} } }`;
export const REPOST = gql`mutation Repost($id: ID!) { repost(id: $id) { ${COUNTS} } }`;
export const UNDO_REPOST = gql`mutation UndoRepost($id: ID!) { undoRepost(id: $id) { ${COUNTS} } }`;
export const BOOKMARK = gql`mutation Bookmark($id: ID!) { bookmark(id: $id) { id viewerHasBookmarked } }`;
export const UNBOOKMARK = gql`mutation Unbookmark($id: ID!) { unbookmark(id: $id) { id viewerHasBookmarked } }`;
const RELATION = 'id handle followerCount followingCount viewerIsFollowing viewerHasMuted viewerHasBlocked';
export const RELATIONS = {
  follow: gql`mutation Follow($handle: String!) { follow(handle: $handle) { ${RELATION} } }`,
  unfollow: gql`mutation Unfollow($handle: String!) { unfollow(handle: $handle) { ${RELATION} } }`,
  mute: gql`mutation Mute($handle: String!) { mute(handle: $handle) { ${RELATION} } }`,
  unmute: gql`mutation Unmute($handle: String!) { unmute(handle: $handle) { ${RELATION} } }`,
  block: gql`mutation Block($handle: String!) { block(handle: $handle) { ${RELATION} } }`,
  unblock: gql`mutation Unblock($handle: String!) { unblock(handle: $handle) { ${RELATION} } }`,
};
export const ADD_FILTER = gql`mutation AddFilter($phrase: String!) { addKeywordFilter(phrase: $phrase) { id phrase } }`;
export const REMOVE_FILTER = gql`mutation RemoveFilter($id: ID!) { removeKeywordFilter(id: $id) }`;
export const UPDATE_PROFILE = gql`
  mutation UpdateProfile($displayName: String, $bio: String) { updateProfile(displayName: $displayName, bio: $bio) { id handle displayName bio } }
`;
export const CHANGE_PASSWORD = gql`
  mutation ChangePassword($current: String!, $next: String!) { changePassword(current: $current, next: $next) { token user { ...AuthorFields } } }
  ${AUTHOR}
`;
export const LOG_OUT_EVERYWHERE = gql`mutation LogOutEverywhere { logOutEverywhere }`;
