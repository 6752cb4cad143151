/* eslint-disable */
import * as types from './graphql.js';
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';

/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "\n  mutation EditPost($id: ID!, $text: String!) {\n    editPost(id: $id, text: $text) { id text editedAt mentions { id handle } }\n  }\n": typeof types.EditPostDocument,
    "\n  query PostEdits($id: ID!) {\n    post(id: $id) { id editedAt edits { text editedAt } }\n  }\n": typeof types.PostEditsDocument,
    "\n  mutation PinPost($id: ID!) {\n    pinPost(id: $id) { id pinnedPosts { id pinned } }\n  }\n": typeof types.PinPostDocument,
    "\n  mutation UnpinPost($id: ID!) {\n    unpinPost(id: $id) { id pinnedPosts { id pinned } }\n  }\n": typeof types.UnpinPostDocument,
    "\n  subscription PostEdited {\n    timelinePostEdited { id text editedAt mentions { id handle } }\n  }\n": typeof types.PostEditedDocument,
    "\n  query ViewerLocked {\n    viewer { id locked }\n  }\n": typeof types.ViewerLockedDocument,
    "\n  mutation SetLocked($locked: Boolean!) {\n    updateProfile(locked: $locked) { id locked }\n  }\n": typeof types.SetLockedDocument,
    "\n  query FollowRequests($first: Int, $after: String) {\n    followRequests(first: $first, after: $after) {\n      totalCount\n      edges { cursor node { ...AuthorFields bio } }\n      pageInfo { hasNextPage endCursor }\n    }\n  }\n": typeof types.FollowRequestsDocument,
    "\n  mutation ApproveFollowRequest($handle: String!) {\n    approveFollowRequest(handle: $handle) { id handle }\n  }\n": typeof types.ApproveFollowRequestDocument,
    "\n  mutation RejectFollowRequest($handle: String!) {\n    rejectFollowRequest(handle: $handle) { id handle }\n  }\n": typeof types.RejectFollowRequestDocument,
    "\n  mutation Report($handle: String!, $postId: ID, $reason: ReportReason!, $comment: String) {\n    report(handle: $handle, postId: $postId, reason: $reason, comment: $comment) { id state }\n  }\n": typeof types.ReportDocument,
    "\n  query OpenReports($first: Int) {\n    reports(state: OPEN, first: $first) {\n      edges {\n        cursor\n        node {\n          id\n          reason\n          comment\n          createdAt\n          reporter { id handle }\n          account { id handle }\n          post { id text }\n        }\n      }\n    }\n  }\n": typeof types.OpenReportsDocument,
    "\n  mutation ResolveReport($id: ID!, $action: ModerationAction!) {\n    resolveReport(id: $id, action: $action) { id state resolution }\n  }\n": typeof types.ResolveReportDocument,
    "\n  fragment AuthorFields on User {\n    id\n    handle\n    displayName\n  }\n": typeof types.AuthorFieldsFragmentDoc,
    "\n  fragment PostFields on Post {\n    id\n    text\n    createdAt\n    visibility\n    likeCount\n    repostCount\n    replyCount\n    viewerHasLiked\n    viewerHasReposted\n    viewerHasBookmarked\n    author { ...AuthorFields }\n    mentions { id handle }\n    tags\n    replyTo { id author { ...AuthorFields } }\n    media { ...MediaFields }\n    editedAt\n    pinned\n    quoteCount\n    quoted { id text createdAt author { ...AuthorFields } media { ...MediaFields } }\n  }\n": typeof types.PostFieldsFragmentDoc,
    "\n  fragment MediaFields on Media {\n    id\n    kind\n    alt\n    width\n    height\n    url\n    previewUrl\n    blurhash\n  }\n": typeof types.MediaFieldsFragmentDoc,
    "\n  fragment PageInfoFields on PageInfo {\n    hasNextPage\n    hasPreviousPage\n    startCursor\n    endCursor\n  }\n": typeof types.PageInfoFieldsFragmentDoc,
    "\n  fragment PostEdgeFields on PostEdge {\n    cursor\n    repostedBy { ...AuthorFields }\n    node { ...PostFields }\n  }\n": typeof types.PostEdgeFieldsFragmentDoc,
    "\n  fragment PersonFields on User {\n    ...AuthorFields\n    bio\n    followerCount\n    viewerIsFollowing\n  }\n": typeof types.PersonFieldsFragmentDoc,
    "\n  query Viewer {\n    viewer { ...AuthorFields }\n  }\n": typeof types.ViewerDocument,
    "\n  query Timeline($first: Int, $after: String, $last: Int, $before: String) {\n    timeline(first: $first, after: $after, last: $last, before: $before) {\n      edges { ...PostEdgeFields }\n      pageInfo { ...PageInfoFields }\n    }\n  }\n": typeof types.TimelineDocument,
    "\n  query Profile($handle: String!, $first: Int, $after: String) {\n    user(handle: $handle) {\n      ...AuthorFields\n      bio\n      followerCount\n      followingCount\n      viewerIsFollowing\n      viewerHasMuted\n      viewerHasBlocked\n      locked\n      viewerFollowState\n      pinnedPosts { ...PostFields }\n      posts(first: $first, after: $after) {\n        edges { ...PostEdgeFields }\n        pageInfo { ...PageInfoFields }\n      }\n    }\n  }\n": typeof types.ProfileDocument,
    "\n  query Thread($id: ID!, $first: Int, $after: String) {\n    post(id: $id) {\n      ...PostFields\n      ancestors { ...PostFields }\n      descendants(first: $first, after: $after) {\n        edges { ...PostEdgeFields }\n        pageInfo { ...PageInfoFields }\n      }\n    }\n  }\n": typeof types.ThreadDocument,
    "\n  query Filters {\n    viewer { id keywordFilters { id phrase } }\n  }\n": typeof types.FiltersDocument,
    "\n  query MyProfile {\n    viewer { id handle displayName bio }\n  }\n": typeof types.MyProfileDocument,
    "\n  query SearchUsers($query: String!, $first: Int) {\n    searchUsers(query: $query, first: $first) { ...PersonFields }\n  }\n": typeof types.SearchUsersDocument,
    "\n  query Suggestions($first: Int) {\n    suggestedFollows(first: $first) {\n      mutualCount\n      user { ...PersonFields }\n      followedBy(first: 2) { ...AuthorFields }\n    }\n  }\n": typeof types.SuggestionsDocument,
    "\n  query Bookmarks($first: Int, $after: String) {\n    viewer {\n      id\n      bookmarks(first: $first, after: $after) {\n        edges { ...PostEdgeFields }\n        pageInfo { ...PageInfoFields }\n      }\n    }\n  }\n": typeof types.BookmarksDocument,
    "\n  fragment NotificationFields on Notification {\n    id\n    kind\n    createdAt\n    actorCount\n    unread\n    actors(first: 3) { ...AuthorFields }\n    post { id text visibility }\n  }\n": typeof types.NotificationFieldsFragmentDoc,
    "\n  query Notifications($first: Int, $after: String) {\n    notifications(first: $first, after: $after) {\n      edges { cursor node { ...NotificationFields } }\n      pageInfo { ...PageInfoFields }\n      unreadCount\n    }\n  }\n": typeof types.NotificationsDocument,
    "\n  query UnreadNotifications {\n    notifications(first: 1) { unreadCount }\n  }\n": typeof types.UnreadNotificationsDocument,
    "\n  subscription NotificationAdded {\n    notificationAdded { cursor node { ...NotificationFields } }\n  }\n": typeof types.NotificationAddedDocument,
    "\n  mutation MarkNotificationsRead($upTo: String!) {\n    markNotificationsRead(upTo: $upTo) {\n      unreadCount\n      notifications { id unread }\n    }\n  }\n": typeof types.MarkNotificationsReadDocument,
    "\n  query TimelineMarker {\n    timelineMarker { cursor unreadCount }\n  }\n": typeof types.TimelineMarkerDocument,
    "\n  mutation MarkTimelineRead($upTo: String!) {\n    markTimelineRead(upTo: $upTo) { cursor unreadCount }\n  }\n": typeof types.MarkTimelineReadDocument,
    "\n  fragment ListSummaryFields on List {\n    id\n    name\n    memberCount\n  }\n": typeof types.ListSummaryFieldsFragmentDoc,
    "\n  query Lists {\n    lists { ...ListSummaryFields }\n  }\n": typeof types.ListsDocument,
    "\n  query List($id: ID!, $first: Int, $after: String, $last: Int, $before: String) {\n    list(id: $id) {\n      ...ListSummaryFields\n      timeline(first: $first, after: $after, last: $last, before: $before) {\n        edges { ...PostEdgeFields }\n        pageInfo { ...PageInfoFields }\n      }\n    }\n  }\n": typeof types.ListDocument,
    "\n  query ListMembers($id: ID!, $after: String) {\n    list(id: $id) {\n      id\n      memberCount\n      members(first: 50, after: $after) {\n        edges { cursor node { ...AuthorFields } }\n        pageInfo { ...PageInfoFields }\n      }\n    }\n  }\n": typeof types.ListMembersDocument,
    "\n  subscription ListPostAdded($id: ID!) {\n    listPostAdded(id: $id) { ...PostEdgeFields }\n  }\n": typeof types.ListPostAddedDocument,
    "\n  mutation CreateList($name: String!) {\n    createList(name: $name) { ...ListSummaryFields }\n  }\n": typeof types.CreateListDocument,
    "\n  mutation RenameList($id: ID!, $name: String!) {\n    renameList(id: $id, name: $name) { ...ListSummaryFields }\n  }\n": typeof types.RenameListDocument,
    "\n  mutation DeleteList($id: ID!) {\n    deleteList(id: $id)\n  }\n": typeof types.DeleteListDocument,
    "\n  mutation AddToList($id: ID!, $handle: String!) {\n    addToList(id: $id, handle: $handle) { ...ListSummaryFields }\n  }\n": typeof types.AddToListDocument,
    "\n  mutation RemoveFromList($id: ID!, $handle: String!) {\n    removeFromList(id: $id, handle: $handle) { ...ListSummaryFields }\n  }\n": typeof types.RemoveFromListDocument,
    "\n  subscription PostAdded {\n    timelinePostAdded { ...PostEdgeFields }\n  }\n": typeof types.PostAddedDocument,
    "\n  subscription PostRemoved {\n    timelinePostRemoved\n  }\n": typeof types.PostRemovedDocument,
    "\n  mutation SignUp($handle: String!, $password: String!, $displayName: String) {\n    signUp(handle: $handle, password: $password, displayName: $displayName) { token user { ...AuthorFields } }\n  }\n": typeof types.SignUpDocument,
    "\n  mutation LogIn($handle: String!, $password: String!) {\n    logIn(handle: $handle, password: $password) { token user { ...AuthorFields } }\n  }\n": typeof types.LogInDocument,
    "\n  mutation CreatePost($text: String!, $replyTo: ID, $visibility: Visibility, $media: [ID!], $quoteOf: ID) {\n    createPost(text: $text, replyTo: $replyTo, visibility: $visibility, media: $media, quoteOf: $quoteOf) {\n      ...PostFields\n      replyTo { id replyCount }\n    }\n  }\n": typeof types.CreatePostDocument,
    "\n  mutation UpdateMedia($id: ID!, $alt: String) {\n    updateMedia(id: $id, alt: $alt) { id alt }\n  }\n": typeof types.UpdateMediaDocument,
    "\n  mutation DeletePost($id: ID!) {\n    deletePost(id: $id)\n  }\n": typeof types.DeletePostDocument,
    "\n  fragment CountFields on Post {\n    id\n    likeCount\n    viewerHasLiked\n    repostCount\n    viewerHasReposted\n  }\n": typeof types.CountFieldsFragmentDoc,
    "\n  mutation Like($id: ID!) {\n    likePost(id: $id) { ...CountFields }\n  }\n": typeof types.LikeDocument,
    "\n  mutation Unlike($id: ID!) {\n    unlikePost(id: $id) { ...CountFields }\n  }\n": typeof types.UnlikeDocument,
    "\n  mutation Repost($id: ID!) {\n    repost(id: $id) { ...CountFields }\n  }\n": typeof types.RepostDocument,
    "\n  mutation UndoRepost($id: ID!) {\n    undoRepost(id: $id) { ...CountFields }\n  }\n": typeof types.UndoRepostDocument,
    "\n  mutation Bookmark($id: ID!) {\n    bookmark(id: $id) { id viewerHasBookmarked }\n  }\n": typeof types.BookmarkDocument,
    "\n  mutation Unbookmark($id: ID!) {\n    unbookmark(id: $id) { id viewerHasBookmarked }\n  }\n": typeof types.UnbookmarkDocument,
    "\n  fragment RelationFields on User {\n    id\n    handle\n    followerCount\n    followingCount\n    viewerIsFollowing\n    viewerHasMuted\n    viewerHasBlocked\n    viewerFollowState\n  }\n": typeof types.RelationFieldsFragmentDoc,
    "\n    mutation Follow($handle: String!) {\n      follow(handle: $handle) { ...RelationFields }\n    }\n  ": typeof types.FollowDocument,
    "\n    mutation Unfollow($handle: String!) {\n      unfollow(handle: $handle) { ...RelationFields }\n    }\n  ": typeof types.UnfollowDocument,
    "\n    mutation Mute($handle: String!) {\n      mute(handle: $handle) { ...RelationFields }\n    }\n  ": typeof types.MuteDocument,
    "\n    mutation Unmute($handle: String!) {\n      unmute(handle: $handle) { ...RelationFields }\n    }\n  ": typeof types.UnmuteDocument,
    "\n    mutation Block($handle: String!) {\n      block(handle: $handle) { ...RelationFields }\n    }\n  ": typeof types.BlockDocument,
    "\n    mutation Unblock($handle: String!) {\n      unblock(handle: $handle) { ...RelationFields }\n    }\n  ": typeof types.UnblockDocument,
    "\n  mutation AddFilter($phrase: String!) {\n    addKeywordFilter(phrase: $phrase) { id phrase }\n  }\n": typeof types.AddFilterDocument,
    "\n  mutation RemoveFilter($id: ID!) {\n    removeKeywordFilter(id: $id)\n  }\n": typeof types.RemoveFilterDocument,
    "\n  mutation UpdateProfile($displayName: String, $bio: String) {\n    updateProfile(displayName: $displayName, bio: $bio) { id handle displayName bio }\n  }\n": typeof types.UpdateProfileDocument,
    "\n  mutation ChangePassword($current: String!, $next: String!) {\n    changePassword(current: $current, next: $next) { token user { ...AuthorFields } }\n  }\n": typeof types.ChangePasswordDocument,
    "\n  mutation LogOutEverywhere {\n    logOutEverywhere\n  }\n": typeof types.LogOutEverywhereDocument,
    "\n  query TagTimeline($tag: String!, $first: Int, $after: String) {\n    tagTimeline(tag: $tag, first: $first, after: $after) {\n      edges { ...PostEdgeFields }\n      pageInfo { ...PageInfoFields }\n    }\n    followedTags\n  }\n": typeof types.TagTimelineDocument,
    "\n  query SearchPosts($query: String!, $first: Int, $after: String) {\n    searchPosts(query: $query, first: $first, after: $after) {\n      edges { ...PostEdgeFields }\n      pageInfo { ...PageInfoFields }\n    }\n  }\n": typeof types.SearchPostsDocument,
    "\n  query TrendingTags($first: Int) {\n    trendingTags(first: $first) { tag accounts posts }\n  }\n": typeof types.TrendingTagsDocument,
    "\n  mutation FollowTag($tag: String!) {\n    followTag(tag: $tag)\n  }\n": typeof types.FollowTagDocument,
    "\n  mutation UnfollowTag($tag: String!) {\n    unfollowTag(tag: $tag)\n  }\n": typeof types.UnfollowTagDocument,
};
const documents: Documents = {
    "\n  mutation EditPost($id: ID!, $text: String!) {\n    editPost(id: $id, text: $text) { id text editedAt mentions { id handle } }\n  }\n": types.EditPostDocument,
    "\n  query PostEdits($id: ID!) {\n    post(id: $id) { id editedAt edits { text editedAt } }\n  }\n": types.PostEditsDocument,
    "\n  mutation PinPost($id: ID!) {\n    pinPost(id: $id) { id pinnedPosts { id pinned } }\n  }\n": types.PinPostDocument,
    "\n  mutation UnpinPost($id: ID!) {\n    unpinPost(id: $id) { id pinnedPosts { id pinned } }\n  }\n": types.UnpinPostDocument,
    "\n  subscription PostEdited {\n    timelinePostEdited { id text editedAt mentions { id handle } }\n  }\n": types.PostEditedDocument,
    "\n  query ViewerLocked {\n    viewer { id locked }\n  }\n": types.ViewerLockedDocument,
    "\n  mutation SetLocked($locked: Boolean!) {\n    updateProfile(locked: $locked) { id locked }\n  }\n": types.SetLockedDocument,
    "\n  query FollowRequests($first: Int, $after: String) {\n    followRequests(first: $first, after: $after) {\n      totalCount\n      edges { cursor node { ...AuthorFields bio } }\n      pageInfo { hasNextPage endCursor }\n    }\n  }\n": types.FollowRequestsDocument,
    "\n  mutation ApproveFollowRequest($handle: String!) {\n    approveFollowRequest(handle: $handle) { id handle }\n  }\n": types.ApproveFollowRequestDocument,
    "\n  mutation RejectFollowRequest($handle: String!) {\n    rejectFollowRequest(handle: $handle) { id handle }\n  }\n": types.RejectFollowRequestDocument,
    "\n  mutation Report($handle: String!, $postId: ID, $reason: ReportReason!, $comment: String) {\n    report(handle: $handle, postId: $postId, reason: $reason, comment: $comment) { id state }\n  }\n": types.ReportDocument,
    "\n  query OpenReports($first: Int) {\n    reports(state: OPEN, first: $first) {\n      edges {\n        cursor\n        node {\n          id\n          reason\n          comment\n          createdAt\n          reporter { id handle }\n          account { id handle }\n          post { id text }\n        }\n      }\n    }\n  }\n": types.OpenReportsDocument,
    "\n  mutation ResolveReport($id: ID!, $action: ModerationAction!) {\n    resolveReport(id: $id, action: $action) { id state resolution }\n  }\n": types.ResolveReportDocument,
    "\n  fragment AuthorFields on User {\n    id\n    handle\n    displayName\n  }\n": types.AuthorFieldsFragmentDoc,
    "\n  fragment PostFields on Post {\n    id\n    text\n    createdAt\n    visibility\n    likeCount\n    repostCount\n    replyCount\n    viewerHasLiked\n    viewerHasReposted\n    viewerHasBookmarked\n    author { ...AuthorFields }\n    mentions { id handle }\n    tags\n    replyTo { id author { ...AuthorFields } }\n    media { ...MediaFields }\n    editedAt\n    pinned\n    quoteCount\n    quoted { id text createdAt author { ...AuthorFields } media { ...MediaFields } }\n  }\n": types.PostFieldsFragmentDoc,
    "\n  fragment MediaFields on Media {\n    id\n    kind\n    alt\n    width\n    height\n    url\n    previewUrl\n    blurhash\n  }\n": types.MediaFieldsFragmentDoc,
    "\n  fragment PageInfoFields on PageInfo {\n    hasNextPage\n    hasPreviousPage\n    startCursor\n    endCursor\n  }\n": types.PageInfoFieldsFragmentDoc,
    "\n  fragment PostEdgeFields on PostEdge {\n    cursor\n    repostedBy { ...AuthorFields }\n    node { ...PostFields }\n  }\n": types.PostEdgeFieldsFragmentDoc,
    "\n  fragment PersonFields on User {\n    ...AuthorFields\n    bio\n    followerCount\n    viewerIsFollowing\n  }\n": types.PersonFieldsFragmentDoc,
    "\n  query Viewer {\n    viewer { ...AuthorFields }\n  }\n": types.ViewerDocument,
    "\n  query Timeline($first: Int, $after: String, $last: Int, $before: String) {\n    timeline(first: $first, after: $after, last: $last, before: $before) {\n      edges { ...PostEdgeFields }\n      pageInfo { ...PageInfoFields }\n    }\n  }\n": types.TimelineDocument,
    "\n  query Profile($handle: String!, $first: Int, $after: String) {\n    user(handle: $handle) {\n      ...AuthorFields\n      bio\n      followerCount\n      followingCount\n      viewerIsFollowing\n      viewerHasMuted\n      viewerHasBlocked\n      locked\n      viewerFollowState\n      pinnedPosts { ...PostFields }\n      posts(first: $first, after: $after) {\n        edges { ...PostEdgeFields }\n        pageInfo { ...PageInfoFields }\n      }\n    }\n  }\n": types.ProfileDocument,
    "\n  query Thread($id: ID!, $first: Int, $after: String) {\n    post(id: $id) {\n      ...PostFields\n      ancestors { ...PostFields }\n      descendants(first: $first, after: $after) {\n        edges { ...PostEdgeFields }\n        pageInfo { ...PageInfoFields }\n      }\n    }\n  }\n": types.ThreadDocument,
    "\n  query Filters {\n    viewer { id keywordFilters { id phrase } }\n  }\n": types.FiltersDocument,
    "\n  query MyProfile {\n    viewer { id handle displayName bio }\n  }\n": types.MyProfileDocument,
    "\n  query SearchUsers($query: String!, $first: Int) {\n    searchUsers(query: $query, first: $first) { ...PersonFields }\n  }\n": types.SearchUsersDocument,
    "\n  query Suggestions($first: Int) {\n    suggestedFollows(first: $first) {\n      mutualCount\n      user { ...PersonFields }\n      followedBy(first: 2) { ...AuthorFields }\n    }\n  }\n": types.SuggestionsDocument,
    "\n  query Bookmarks($first: Int, $after: String) {\n    viewer {\n      id\n      bookmarks(first: $first, after: $after) {\n        edges { ...PostEdgeFields }\n        pageInfo { ...PageInfoFields }\n      }\n    }\n  }\n": types.BookmarksDocument,
    "\n  fragment NotificationFields on Notification {\n    id\n    kind\n    createdAt\n    actorCount\n    unread\n    actors(first: 3) { ...AuthorFields }\n    post { id text visibility }\n  }\n": types.NotificationFieldsFragmentDoc,
    "\n  query Notifications($first: Int, $after: String) {\n    notifications(first: $first, after: $after) {\n      edges { cursor node { ...NotificationFields } }\n      pageInfo { ...PageInfoFields }\n      unreadCount\n    }\n  }\n": types.NotificationsDocument,
    "\n  query UnreadNotifications {\n    notifications(first: 1) { unreadCount }\n  }\n": types.UnreadNotificationsDocument,
    "\n  subscription NotificationAdded {\n    notificationAdded { cursor node { ...NotificationFields } }\n  }\n": types.NotificationAddedDocument,
    "\n  mutation MarkNotificationsRead($upTo: String!) {\n    markNotificationsRead(upTo: $upTo) {\n      unreadCount\n      notifications { id unread }\n    }\n  }\n": types.MarkNotificationsReadDocument,
    "\n  query TimelineMarker {\n    timelineMarker { cursor unreadCount }\n  }\n": types.TimelineMarkerDocument,
    "\n  mutation MarkTimelineRead($upTo: String!) {\n    markTimelineRead(upTo: $upTo) { cursor unreadCount }\n  }\n": types.MarkTimelineReadDocument,
    "\n  fragment ListSummaryFields on List {\n    id\n    name\n    memberCount\n  }\n": types.ListSummaryFieldsFragmentDoc,
    "\n  query Lists {\n    lists { ...ListSummaryFields }\n  }\n": types.ListsDocument,
    "\n  query List($id: ID!, $first: Int, $after: String, $last: Int, $before: String) {\n    list(id: $id) {\n      ...ListSummaryFields\n      timeline(first: $first, after: $after, last: $last, before: $before) {\n        edges { ...PostEdgeFields }\n        pageInfo { ...PageInfoFields }\n      }\n    }\n  }\n": types.ListDocument,
    "\n  query ListMembers($id: ID!, $after: String) {\n    list(id: $id) {\n      id\n      memberCount\n      members(first: 50, after: $after) {\n        edges { cursor node { ...AuthorFields } }\n        pageInfo { ...PageInfoFields }\n      }\n    }\n  }\n": types.ListMembersDocument,
    "\n  subscription ListPostAdded($id: ID!) {\n    listPostAdded(id: $id) { ...PostEdgeFields }\n  }\n": types.ListPostAddedDocument,
    "\n  mutation CreateList($name: String!) {\n    createList(name: $name) { ...ListSummaryFields }\n  }\n": types.CreateListDocument,
    "\n  mutation RenameList($id: ID!, $name: String!) {\n    renameList(id: $id, name: $name) { ...ListSummaryFields }\n  }\n": types.RenameListDocument,
    "\n  mutation DeleteList($id: ID!) {\n    deleteList(id: $id)\n  }\n": types.DeleteListDocument,
    "\n  mutation AddToList($id: ID!, $handle: String!) {\n    addToList(id: $id, handle: $handle) { ...ListSummaryFields }\n  }\n": types.AddToListDocument,
    "\n  mutation RemoveFromList($id: ID!, $handle: String!) {\n    removeFromList(id: $id, handle: $handle) { ...ListSummaryFields }\n  }\n": types.RemoveFromListDocument,
    "\n  subscription PostAdded {\n    timelinePostAdded { ...PostEdgeFields }\n  }\n": types.PostAddedDocument,
    "\n  subscription PostRemoved {\n    timelinePostRemoved\n  }\n": types.PostRemovedDocument,
    "\n  mutation SignUp($handle: String!, $password: String!, $displayName: String) {\n    signUp(handle: $handle, password: $password, displayName: $displayName) { token user { ...AuthorFields } }\n  }\n": types.SignUpDocument,
    "\n  mutation LogIn($handle: String!, $password: String!) {\n    logIn(handle: $handle, password: $password) { token user { ...AuthorFields } }\n  }\n": types.LogInDocument,
    "\n  mutation CreatePost($text: String!, $replyTo: ID, $visibility: Visibility, $media: [ID!], $quoteOf: ID) {\n    createPost(text: $text, replyTo: $replyTo, visibility: $visibility, media: $media, quoteOf: $quoteOf) {\n      ...PostFields\n      replyTo { id replyCount }\n    }\n  }\n": types.CreatePostDocument,
    "\n  mutation UpdateMedia($id: ID!, $alt: String) {\n    updateMedia(id: $id, alt: $alt) { id alt }\n  }\n": types.UpdateMediaDocument,
    "\n  mutation DeletePost($id: ID!) {\n    deletePost(id: $id)\n  }\n": types.DeletePostDocument,
    "\n  fragment CountFields on Post {\n    id\n    likeCount\n    viewerHasLiked\n    repostCount\n    viewerHasReposted\n  }\n": types.CountFieldsFragmentDoc,
    "\n  mutation Like($id: ID!) {\n    likePost(id: $id) { ...CountFields }\n  }\n": types.LikeDocument,
    "\n  mutation Unlike($id: ID!) {\n    unlikePost(id: $id) { ...CountFields }\n  }\n": types.UnlikeDocument,
    "\n  mutation Repost($id: ID!) {\n    repost(id: $id) { ...CountFields }\n  }\n": types.RepostDocument,
    "\n  mutation UndoRepost($id: ID!) {\n    undoRepost(id: $id) { ...CountFields }\n  }\n": types.UndoRepostDocument,
    "\n  mutation Bookmark($id: ID!) {\n    bookmark(id: $id) { id viewerHasBookmarked }\n  }\n": types.BookmarkDocument,
    "\n  mutation Unbookmark($id: ID!) {\n    unbookmark(id: $id) { id viewerHasBookmarked }\n  }\n": types.UnbookmarkDocument,
    "\n  fragment RelationFields on User {\n    id\n    handle\n    followerCount\n    followingCount\n    viewerIsFollowing\n    viewerHasMuted\n    viewerHasBlocked\n    viewerFollowState\n  }\n": types.RelationFieldsFragmentDoc,
    "\n    mutation Follow($handle: String!) {\n      follow(handle: $handle) { ...RelationFields }\n    }\n  ": types.FollowDocument,
    "\n    mutation Unfollow($handle: String!) {\n      unfollow(handle: $handle) { ...RelationFields }\n    }\n  ": types.UnfollowDocument,
    "\n    mutation Mute($handle: String!) {\n      mute(handle: $handle) { ...RelationFields }\n    }\n  ": types.MuteDocument,
    "\n    mutation Unmute($handle: String!) {\n      unmute(handle: $handle) { ...RelationFields }\n    }\n  ": types.UnmuteDocument,
    "\n    mutation Block($handle: String!) {\n      block(handle: $handle) { ...RelationFields }\n    }\n  ": types.BlockDocument,
    "\n    mutation Unblock($handle: String!) {\n      unblock(handle: $handle) { ...RelationFields }\n    }\n  ": types.UnblockDocument,
    "\n  mutation AddFilter($phrase: String!) {\n    addKeywordFilter(phrase: $phrase) { id phrase }\n  }\n": types.AddFilterDocument,
    "\n  mutation RemoveFilter($id: ID!) {\n    removeKeywordFilter(id: $id)\n  }\n": types.RemoveFilterDocument,
    "\n  mutation UpdateProfile($displayName: String, $bio: String) {\n    updateProfile(displayName: $displayName, bio: $bio) { id handle displayName bio }\n  }\n": types.UpdateProfileDocument,
    "\n  mutation ChangePassword($current: String!, $next: String!) {\n    changePassword(current: $current, next: $next) { token user { ...AuthorFields } }\n  }\n": types.ChangePasswordDocument,
    "\n  mutation LogOutEverywhere {\n    logOutEverywhere\n  }\n": types.LogOutEverywhereDocument,
    "\n  query TagTimeline($tag: String!, $first: Int, $after: String) {\n    tagTimeline(tag: $tag, first: $first, after: $after) {\n      edges { ...PostEdgeFields }\n      pageInfo { ...PageInfoFields }\n    }\n    followedTags\n  }\n": types.TagTimelineDocument,
    "\n  query SearchPosts($query: String!, $first: Int, $after: String) {\n    searchPosts(query: $query, first: $first, after: $after) {\n      edges { ...PostEdgeFields }\n      pageInfo { ...PageInfoFields }\n    }\n  }\n": types.SearchPostsDocument,
    "\n  query TrendingTags($first: Int) {\n    trendingTags(first: $first) { tag accounts posts }\n  }\n": types.TrendingTagsDocument,
    "\n  mutation FollowTag($tag: String!) {\n    followTag(tag: $tag)\n  }\n": types.FollowTagDocument,
    "\n  mutation UnfollowTag($tag: String!) {\n    unfollowTag(tag: $tag)\n  }\n": types.UnfollowTagDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 *
 *
 * @example
 * ```ts
 * const query = graphql(`query GetUser($id: ID!) { user(id: $id) { name } }`);
 * ```
 *
 * The query argument is unknown!
 * Please regenerate the types.
 */
export function graphql(source: string): unknown;

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation EditPost($id: ID!, $text: String!) {\n    editPost(id: $id, text: $text) { id text editedAt mentions { id handle } }\n  }\n"): (typeof documents)["\n  mutation EditPost($id: ID!, $text: String!) {\n    editPost(id: $id, text: $text) { id text editedAt mentions { id handle } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query PostEdits($id: ID!) {\n    post(id: $id) { id editedAt edits { text editedAt } }\n  }\n"): (typeof documents)["\n  query PostEdits($id: ID!) {\n    post(id: $id) { id editedAt edits { text editedAt } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation PinPost($id: ID!) {\n    pinPost(id: $id) { id pinnedPosts { id pinned } }\n  }\n"): (typeof documents)["\n  mutation PinPost($id: ID!) {\n    pinPost(id: $id) { id pinnedPosts { id pinned } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation UnpinPost($id: ID!) {\n    unpinPost(id: $id) { id pinnedPosts { id pinned } }\n  }\n"): (typeof documents)["\n  mutation UnpinPost($id: ID!) {\n    unpinPost(id: $id) { id pinnedPosts { id pinned } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription PostEdited {\n    timelinePostEdited { id text editedAt mentions { id handle } }\n  }\n"): (typeof documents)["\n  subscription PostEdited {\n    timelinePostEdited { id text editedAt mentions { id handle } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ViewerLocked {\n    viewer { id locked }\n  }\n"): (typeof documents)["\n  query ViewerLocked {\n    viewer { id locked }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SetLocked($locked: Boolean!) {\n    updateProfile(locked: $locked) { id locked }\n  }\n"): (typeof documents)["\n  mutation SetLocked($locked: Boolean!) {\n    updateProfile(locked: $locked) { id locked }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query FollowRequests($first: Int, $after: String) {\n    followRequests(first: $first, after: $after) {\n      totalCount\n      edges { cursor node { ...AuthorFields bio } }\n      pageInfo { hasNextPage endCursor }\n    }\n  }\n"): (typeof documents)["\n  query FollowRequests($first: Int, $after: String) {\n    followRequests(first: $first, after: $after) {\n      totalCount\n      edges { cursor node { ...AuthorFields bio } }\n      pageInfo { hasNextPage endCursor }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ApproveFollowRequest($handle: String!) {\n    approveFollowRequest(handle: $handle) { id handle }\n  }\n"): (typeof documents)["\n  mutation ApproveFollowRequest($handle: String!) {\n    approveFollowRequest(handle: $handle) { id handle }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RejectFollowRequest($handle: String!) {\n    rejectFollowRequest(handle: $handle) { id handle }\n  }\n"): (typeof documents)["\n  mutation RejectFollowRequest($handle: String!) {\n    rejectFollowRequest(handle: $handle) { id handle }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation Report($handle: String!, $postId: ID, $reason: ReportReason!, $comment: String) {\n    report(handle: $handle, postId: $postId, reason: $reason, comment: $comment) { id state }\n  }\n"): (typeof documents)["\n  mutation Report($handle: String!, $postId: ID, $reason: ReportReason!, $comment: String) {\n    report(handle: $handle, postId: $postId, reason: $reason, comment: $comment) { id state }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query OpenReports($first: Int) {\n    reports(state: OPEN, first: $first) {\n      edges {\n        cursor\n        node {\n          id\n          reason\n          comment\n          createdAt\n          reporter { id handle }\n          account { id handle }\n          post { id text }\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query OpenReports($first: Int) {\n    reports(state: OPEN, first: $first) {\n      edges {\n        cursor\n        node {\n          id\n          reason\n          comment\n          createdAt\n          reporter { id handle }\n          account { id handle }\n          post { id text }\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ResolveReport($id: ID!, $action: ModerationAction!) {\n    resolveReport(id: $id, action: $action) { id state resolution }\n  }\n"): (typeof documents)["\n  mutation ResolveReport($id: ID!, $action: ModerationAction!) {\n    resolveReport(id: $id, action: $action) { id state resolution }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment AuthorFields on User {\n    id\n    handle\n    displayName\n  }\n"): (typeof documents)["\n  fragment AuthorFields on User {\n    id\n    handle\n    displayName\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment PostFields on Post {\n    id\n    text\n    createdAt\n    visibility\n    likeCount\n    repostCount\n    replyCount\n    viewerHasLiked\n    viewerHasReposted\n    viewerHasBookmarked\n    author { ...AuthorFields }\n    mentions { id handle }\n    tags\n    replyTo { id author { ...AuthorFields } }\n    media { ...MediaFields }\n    editedAt\n    pinned\n    quoteCount\n    quoted { id text createdAt author { ...AuthorFields } media { ...MediaFields } }\n  }\n"): (typeof documents)["\n  fragment PostFields on Post {\n    id\n    text\n    createdAt\n    visibility\n    likeCount\n    repostCount\n    replyCount\n    viewerHasLiked\n    viewerHasReposted\n    viewerHasBookmarked\n    author { ...AuthorFields }\n    mentions { id handle }\n    tags\n    replyTo { id author { ...AuthorFields } }\n    media { ...MediaFields }\n    editedAt\n    pinned\n    quoteCount\n    quoted { id text createdAt author { ...AuthorFields } media { ...MediaFields } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment MediaFields on Media {\n    id\n    kind\n    alt\n    width\n    height\n    url\n    previewUrl\n    blurhash\n  }\n"): (typeof documents)["\n  fragment MediaFields on Media {\n    id\n    kind\n    alt\n    width\n    height\n    url\n    previewUrl\n    blurhash\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment PageInfoFields on PageInfo {\n    hasNextPage\n    hasPreviousPage\n    startCursor\n    endCursor\n  }\n"): (typeof documents)["\n  fragment PageInfoFields on PageInfo {\n    hasNextPage\n    hasPreviousPage\n    startCursor\n    endCursor\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment PostEdgeFields on PostEdge {\n    cursor\n    repostedBy { ...AuthorFields }\n    node { ...PostFields }\n  }\n"): (typeof documents)["\n  fragment PostEdgeFields on PostEdge {\n    cursor\n    repostedBy { ...AuthorFields }\n    node { ...PostFields }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment PersonFields on User {\n    ...AuthorFields\n    bio\n    followerCount\n    viewerIsFollowing\n  }\n"): (typeof documents)["\n  fragment PersonFields on User {\n    ...AuthorFields\n    bio\n    followerCount\n    viewerIsFollowing\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Viewer {\n    viewer { ...AuthorFields }\n  }\n"): (typeof documents)["\n  query Viewer {\n    viewer { ...AuthorFields }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Timeline($first: Int, $after: String, $last: Int, $before: String) {\n    timeline(first: $first, after: $after, last: $last, before: $before) {\n      edges { ...PostEdgeFields }\n      pageInfo { ...PageInfoFields }\n    }\n  }\n"): (typeof documents)["\n  query Timeline($first: Int, $after: String, $last: Int, $before: String) {\n    timeline(first: $first, after: $after, last: $last, before: $before) {\n      edges { ...PostEdgeFields }\n      pageInfo { ...PageInfoFields }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Profile($handle: String!, $first: Int, $after: String) {\n    user(handle: $handle) {\n      ...AuthorFields\n      bio\n      followerCount\n      followingCount\n      viewerIsFollowing\n      viewerHasMuted\n      viewerHasBlocked\n      locked\n      viewerFollowState\n      pinnedPosts { ...PostFields }\n      posts(first: $first, after: $after) {\n        edges { ...PostEdgeFields }\n        pageInfo { ...PageInfoFields }\n      }\n    }\n  }\n"): (typeof documents)["\n  query Profile($handle: String!, $first: Int, $after: String) {\n    user(handle: $handle) {\n      ...AuthorFields\n      bio\n      followerCount\n      followingCount\n      viewerIsFollowing\n      viewerHasMuted\n      viewerHasBlocked\n      locked\n      viewerFollowState\n      pinnedPosts { ...PostFields }\n      posts(first: $first, after: $after) {\n        edges { ...PostEdgeFields }\n        pageInfo { ...PageInfoFields }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Thread($id: ID!, $first: Int, $after: String) {\n    post(id: $id) {\n      ...PostFields\n      ancestors { ...PostFields }\n      descendants(first: $first, after: $after) {\n        edges { ...PostEdgeFields }\n        pageInfo { ...PageInfoFields }\n      }\n    }\n  }\n"): (typeof documents)["\n  query Thread($id: ID!, $first: Int, $after: String) {\n    post(id: $id) {\n      ...PostFields\n      ancestors { ...PostFields }\n      descendants(first: $first, after: $after) {\n        edges { ...PostEdgeFields }\n        pageInfo { ...PageInfoFields }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Filters {\n    viewer { id keywordFilters { id phrase } }\n  }\n"): (typeof documents)["\n  query Filters {\n    viewer { id keywordFilters { id phrase } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query MyProfile {\n    viewer { id handle displayName bio }\n  }\n"): (typeof documents)["\n  query MyProfile {\n    viewer { id handle displayName bio }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query SearchUsers($query: String!, $first: Int) {\n    searchUsers(query: $query, first: $first) { ...PersonFields }\n  }\n"): (typeof documents)["\n  query SearchUsers($query: String!, $first: Int) {\n    searchUsers(query: $query, first: $first) { ...PersonFields }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Suggestions($first: Int) {\n    suggestedFollows(first: $first) {\n      mutualCount\n      user { ...PersonFields }\n      followedBy(first: 2) { ...AuthorFields }\n    }\n  }\n"): (typeof documents)["\n  query Suggestions($first: Int) {\n    suggestedFollows(first: $first) {\n      mutualCount\n      user { ...PersonFields }\n      followedBy(first: 2) { ...AuthorFields }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Bookmarks($first: Int, $after: String) {\n    viewer {\n      id\n      bookmarks(first: $first, after: $after) {\n        edges { ...PostEdgeFields }\n        pageInfo { ...PageInfoFields }\n      }\n    }\n  }\n"): (typeof documents)["\n  query Bookmarks($first: Int, $after: String) {\n    viewer {\n      id\n      bookmarks(first: $first, after: $after) {\n        edges { ...PostEdgeFields }\n        pageInfo { ...PageInfoFields }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment NotificationFields on Notification {\n    id\n    kind\n    createdAt\n    actorCount\n    unread\n    actors(first: 3) { ...AuthorFields }\n    post { id text visibility }\n  }\n"): (typeof documents)["\n  fragment NotificationFields on Notification {\n    id\n    kind\n    createdAt\n    actorCount\n    unread\n    actors(first: 3) { ...AuthorFields }\n    post { id text visibility }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Notifications($first: Int, $after: String) {\n    notifications(first: $first, after: $after) {\n      edges { cursor node { ...NotificationFields } }\n      pageInfo { ...PageInfoFields }\n      unreadCount\n    }\n  }\n"): (typeof documents)["\n  query Notifications($first: Int, $after: String) {\n    notifications(first: $first, after: $after) {\n      edges { cursor node { ...NotificationFields } }\n      pageInfo { ...PageInfoFields }\n      unreadCount\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query UnreadNotifications {\n    notifications(first: 1) { unreadCount }\n  }\n"): (typeof documents)["\n  query UnreadNotifications {\n    notifications(first: 1) { unreadCount }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription NotificationAdded {\n    notificationAdded { cursor node { ...NotificationFields } }\n  }\n"): (typeof documents)["\n  subscription NotificationAdded {\n    notificationAdded { cursor node { ...NotificationFields } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation MarkNotificationsRead($upTo: String!) {\n    markNotificationsRead(upTo: $upTo) {\n      unreadCount\n      notifications { id unread }\n    }\n  }\n"): (typeof documents)["\n  mutation MarkNotificationsRead($upTo: String!) {\n    markNotificationsRead(upTo: $upTo) {\n      unreadCount\n      notifications { id unread }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query TimelineMarker {\n    timelineMarker { cursor unreadCount }\n  }\n"): (typeof documents)["\n  query TimelineMarker {\n    timelineMarker { cursor unreadCount }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation MarkTimelineRead($upTo: String!) {\n    markTimelineRead(upTo: $upTo) { cursor unreadCount }\n  }\n"): (typeof documents)["\n  mutation MarkTimelineRead($upTo: String!) {\n    markTimelineRead(upTo: $upTo) { cursor unreadCount }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment ListSummaryFields on List {\n    id\n    name\n    memberCount\n  }\n"): (typeof documents)["\n  fragment ListSummaryFields on List {\n    id\n    name\n    memberCount\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Lists {\n    lists { ...ListSummaryFields }\n  }\n"): (typeof documents)["\n  query Lists {\n    lists { ...ListSummaryFields }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query List($id: ID!, $first: Int, $after: String, $last: Int, $before: String) {\n    list(id: $id) {\n      ...ListSummaryFields\n      timeline(first: $first, after: $after, last: $last, before: $before) {\n        edges { ...PostEdgeFields }\n        pageInfo { ...PageInfoFields }\n      }\n    }\n  }\n"): (typeof documents)["\n  query List($id: ID!, $first: Int, $after: String, $last: Int, $before: String) {\n    list(id: $id) {\n      ...ListSummaryFields\n      timeline(first: $first, after: $after, last: $last, before: $before) {\n        edges { ...PostEdgeFields }\n        pageInfo { ...PageInfoFields }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ListMembers($id: ID!, $after: String) {\n    list(id: $id) {\n      id\n      memberCount\n      members(first: 50, after: $after) {\n        edges { cursor node { ...AuthorFields } }\n        pageInfo { ...PageInfoFields }\n      }\n    }\n  }\n"): (typeof documents)["\n  query ListMembers($id: ID!, $after: String) {\n    list(id: $id) {\n      id\n      memberCount\n      members(first: 50, after: $after) {\n        edges { cursor node { ...AuthorFields } }\n        pageInfo { ...PageInfoFields }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription ListPostAdded($id: ID!) {\n    listPostAdded(id: $id) { ...PostEdgeFields }\n  }\n"): (typeof documents)["\n  subscription ListPostAdded($id: ID!) {\n    listPostAdded(id: $id) { ...PostEdgeFields }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateList($name: String!) {\n    createList(name: $name) { ...ListSummaryFields }\n  }\n"): (typeof documents)["\n  mutation CreateList($name: String!) {\n    createList(name: $name) { ...ListSummaryFields }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RenameList($id: ID!, $name: String!) {\n    renameList(id: $id, name: $name) { ...ListSummaryFields }\n  }\n"): (typeof documents)["\n  mutation RenameList($id: ID!, $name: String!) {\n    renameList(id: $id, name: $name) { ...ListSummaryFields }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation DeleteList($id: ID!) {\n    deleteList(id: $id)\n  }\n"): (typeof documents)["\n  mutation DeleteList($id: ID!) {\n    deleteList(id: $id)\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation AddToList($id: ID!, $handle: String!) {\n    addToList(id: $id, handle: $handle) { ...ListSummaryFields }\n  }\n"): (typeof documents)["\n  mutation AddToList($id: ID!, $handle: String!) {\n    addToList(id: $id, handle: $handle) { ...ListSummaryFields }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RemoveFromList($id: ID!, $handle: String!) {\n    removeFromList(id: $id, handle: $handle) { ...ListSummaryFields }\n  }\n"): (typeof documents)["\n  mutation RemoveFromList($id: ID!, $handle: String!) {\n    removeFromList(id: $id, handle: $handle) { ...ListSummaryFields }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription PostAdded {\n    timelinePostAdded { ...PostEdgeFields }\n  }\n"): (typeof documents)["\n  subscription PostAdded {\n    timelinePostAdded { ...PostEdgeFields }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription PostRemoved {\n    timelinePostRemoved\n  }\n"): (typeof documents)["\n  subscription PostRemoved {\n    timelinePostRemoved\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SignUp($handle: String!, $password: String!, $displayName: String) {\n    signUp(handle: $handle, password: $password, displayName: $displayName) { token user { ...AuthorFields } }\n  }\n"): (typeof documents)["\n  mutation SignUp($handle: String!, $password: String!, $displayName: String) {\n    signUp(handle: $handle, password: $password, displayName: $displayName) { token user { ...AuthorFields } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation LogIn($handle: String!, $password: String!) {\n    logIn(handle: $handle, password: $password) { token user { ...AuthorFields } }\n  }\n"): (typeof documents)["\n  mutation LogIn($handle: String!, $password: String!) {\n    logIn(handle: $handle, password: $password) { token user { ...AuthorFields } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreatePost($text: String!, $replyTo: ID, $visibility: Visibility, $media: [ID!], $quoteOf: ID) {\n    createPost(text: $text, replyTo: $replyTo, visibility: $visibility, media: $media, quoteOf: $quoteOf) {\n      ...PostFields\n      replyTo { id replyCount }\n    }\n  }\n"): (typeof documents)["\n  mutation CreatePost($text: String!, $replyTo: ID, $visibility: Visibility, $media: [ID!], $quoteOf: ID) {\n    createPost(text: $text, replyTo: $replyTo, visibility: $visibility, media: $media, quoteOf: $quoteOf) {\n      ...PostFields\n      replyTo { id replyCount }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation UpdateMedia($id: ID!, $alt: String) {\n    updateMedia(id: $id, alt: $alt) { id alt }\n  }\n"): (typeof documents)["\n  mutation UpdateMedia($id: ID!, $alt: String) {\n    updateMedia(id: $id, alt: $alt) { id alt }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation DeletePost($id: ID!) {\n    deletePost(id: $id)\n  }\n"): (typeof documents)["\n  mutation DeletePost($id: ID!) {\n    deletePost(id: $id)\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment CountFields on Post {\n    id\n    likeCount\n    viewerHasLiked\n    repostCount\n    viewerHasReposted\n  }\n"): (typeof documents)["\n  fragment CountFields on Post {\n    id\n    likeCount\n    viewerHasLiked\n    repostCount\n    viewerHasReposted\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation Like($id: ID!) {\n    likePost(id: $id) { ...CountFields }\n  }\n"): (typeof documents)["\n  mutation Like($id: ID!) {\n    likePost(id: $id) { ...CountFields }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation Unlike($id: ID!) {\n    unlikePost(id: $id) { ...CountFields }\n  }\n"): (typeof documents)["\n  mutation Unlike($id: ID!) {\n    unlikePost(id: $id) { ...CountFields }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation Repost($id: ID!) {\n    repost(id: $id) { ...CountFields }\n  }\n"): (typeof documents)["\n  mutation Repost($id: ID!) {\n    repost(id: $id) { ...CountFields }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation UndoRepost($id: ID!) {\n    undoRepost(id: $id) { ...CountFields }\n  }\n"): (typeof documents)["\n  mutation UndoRepost($id: ID!) {\n    undoRepost(id: $id) { ...CountFields }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation Bookmark($id: ID!) {\n    bookmark(id: $id) { id viewerHasBookmarked }\n  }\n"): (typeof documents)["\n  mutation Bookmark($id: ID!) {\n    bookmark(id: $id) { id viewerHasBookmarked }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation Unbookmark($id: ID!) {\n    unbookmark(id: $id) { id viewerHasBookmarked }\n  }\n"): (typeof documents)["\n  mutation Unbookmark($id: ID!) {\n    unbookmark(id: $id) { id viewerHasBookmarked }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment RelationFields on User {\n    id\n    handle\n    followerCount\n    followingCount\n    viewerIsFollowing\n    viewerHasMuted\n    viewerHasBlocked\n    viewerFollowState\n  }\n"): (typeof documents)["\n  fragment RelationFields on User {\n    id\n    handle\n    followerCount\n    followingCount\n    viewerIsFollowing\n    viewerHasMuted\n    viewerHasBlocked\n    viewerFollowState\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n    mutation Follow($handle: String!) {\n      follow(handle: $handle) { ...RelationFields }\n    }\n  "): (typeof documents)["\n    mutation Follow($handle: String!) {\n      follow(handle: $handle) { ...RelationFields }\n    }\n  "];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n    mutation Unfollow($handle: String!) {\n      unfollow(handle: $handle) { ...RelationFields }\n    }\n  "): (typeof documents)["\n    mutation Unfollow($handle: String!) {\n      unfollow(handle: $handle) { ...RelationFields }\n    }\n  "];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n    mutation Mute($handle: String!) {\n      mute(handle: $handle) { ...RelationFields }\n    }\n  "): (typeof documents)["\n    mutation Mute($handle: String!) {\n      mute(handle: $handle) { ...RelationFields }\n    }\n  "];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n    mutation Unmute($handle: String!) {\n      unmute(handle: $handle) { ...RelationFields }\n    }\n  "): (typeof documents)["\n    mutation Unmute($handle: String!) {\n      unmute(handle: $handle) { ...RelationFields }\n    }\n  "];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n    mutation Block($handle: String!) {\n      block(handle: $handle) { ...RelationFields }\n    }\n  "): (typeof documents)["\n    mutation Block($handle: String!) {\n      block(handle: $handle) { ...RelationFields }\n    }\n  "];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n    mutation Unblock($handle: String!) {\n      unblock(handle: $handle) { ...RelationFields }\n    }\n  "): (typeof documents)["\n    mutation Unblock($handle: String!) {\n      unblock(handle: $handle) { ...RelationFields }\n    }\n  "];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation AddFilter($phrase: String!) {\n    addKeywordFilter(phrase: $phrase) { id phrase }\n  }\n"): (typeof documents)["\n  mutation AddFilter($phrase: String!) {\n    addKeywordFilter(phrase: $phrase) { id phrase }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RemoveFilter($id: ID!) {\n    removeKeywordFilter(id: $id)\n  }\n"): (typeof documents)["\n  mutation RemoveFilter($id: ID!) {\n    removeKeywordFilter(id: $id)\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation UpdateProfile($displayName: String, $bio: String) {\n    updateProfile(displayName: $displayName, bio: $bio) { id handle displayName bio }\n  }\n"): (typeof documents)["\n  mutation UpdateProfile($displayName: String, $bio: String) {\n    updateProfile(displayName: $displayName, bio: $bio) { id handle displayName bio }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ChangePassword($current: String!, $next: String!) {\n    changePassword(current: $current, next: $next) { token user { ...AuthorFields } }\n  }\n"): (typeof documents)["\n  mutation ChangePassword($current: String!, $next: String!) {\n    changePassword(current: $current, next: $next) { token user { ...AuthorFields } }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation LogOutEverywhere {\n    logOutEverywhere\n  }\n"): (typeof documents)["\n  mutation LogOutEverywhere {\n    logOutEverywhere\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query TagTimeline($tag: String!, $first: Int, $after: String) {\n    tagTimeline(tag: $tag, first: $first, after: $after) {\n      edges { ...PostEdgeFields }\n      pageInfo { ...PageInfoFields }\n    }\n    followedTags\n  }\n"): (typeof documents)["\n  query TagTimeline($tag: String!, $first: Int, $after: String) {\n    tagTimeline(tag: $tag, first: $first, after: $after) {\n      edges { ...PostEdgeFields }\n      pageInfo { ...PageInfoFields }\n    }\n    followedTags\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query SearchPosts($query: String!, $first: Int, $after: String) {\n    searchPosts(query: $query, first: $first, after: $after) {\n      edges { ...PostEdgeFields }\n      pageInfo { ...PageInfoFields }\n    }\n  }\n"): (typeof documents)["\n  query SearchPosts($query: String!, $first: Int, $after: String) {\n    searchPosts(query: $query, first: $first, after: $after) {\n      edges { ...PostEdgeFields }\n      pageInfo { ...PageInfoFields }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query TrendingTags($first: Int) {\n    trendingTags(first: $first) { tag accounts posts }\n  }\n"): (typeof documents)["\n  query TrendingTags($first: Int) {\n    trendingTags(first: $first) { tag accounts posts }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation FollowTag($tag: String!) {\n    followTag(tag: $tag)\n  }\n"): (typeof documents)["\n  mutation FollowTag($tag: String!) {\n    followTag(tag: $tag)\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation UnfollowTag($tag: String!) {\n    unfollowTag(tag: $tag)\n  }\n"): (typeof documents)["\n  mutation UnfollowTag($tag: String!) {\n    unfollowTag(tag: $tag)\n  }\n"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;