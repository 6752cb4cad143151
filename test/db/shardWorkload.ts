import { jpeg } from '../support/images.js';
import type { TestApp } from '../support/testApp.js';
import { uploaded } from '../support/uploads.js';

/**
 * Every query, mutation and subscription of the API, and every field of every type, asked once or
 * more by a few accounts, in an order in which each has something to act on: the workload the shard
 * audit watches. `test/db/shardPlan.test.ts` checks that it selects every field the schema has, so a
 * new field is audited from the day it is added.
 */
export interface WorkloadStep {
  /** What a person did: the label the audit reports commands under. */
  label: string;
  as: string;
  query: string;
  variables?: (ids: WorkloadIds) => Record<string, unknown>;
  /** Keeps what the answer named, for later steps. */
  keep?: (data: any, ids: WorkloadIds) => void;
  /** What the person did over plain HTTP first (an upload, an image fetched), reported under `http`. */
  before?: { http: string; run: (app: TestApp, token: string, ids: WorkloadIds) => Promise<void> };
}

export type WorkloadIds = Record<string, string>;

/**
 * `ada` has three followers (a delivery split in sub-tasks when FANOUT_BATCH is 2) and `pop` four
 * (pulled at read time when FANOUT_PULL_THRESHOLD is 4).
 */
export const workloadAccounts = ['ada', 'bea', 'cal', 'dan', 'eve', 'pop'] as const;

const user = 'id handle displayName bio createdAt followerCount followingCount viewerIsFollowing viewerHasMuted viewerHasBlocked';
const post = `id text createdAt visibility likeCount repostCount replyCount viewerHasLiked viewerHasReposted viewerHasBookmarked
  author { handle } mentions { handle } tags replyTo { id text } media { id kind alt width height url previewUrl blurhash }`;
const pageInfo = 'pageInfo { hasNextPage hasPreviousPage startCursor endCursor }';
const posts = `edges { cursor repostedBy { handle } node { ${post} } } ${pageInfo}`;
const users = `edges { cursor node { handle } } ${pageInfo} totalCount`;
const notification = 'edges { cursor node { id kind createdAt actorCount actors(first: 3) { handle } post { id text } unread } } pageInfo { hasNextPage endCursor } unreadCount';

const follow = (as: string, handle: string): WorkloadStep => ({ label: 'follow', as, query: `mutation { follow(handle: "${handle}") { ${user} } }` });
const createPost = (as: string, name: string, text: string, extra = ''): WorkloadStep => ({
  label: 'createPost',
  as,
  query: `mutation($replyTo: ID) { createPost(text: "${text}"${extra}, replyTo: $replyTo) { ${post} } }`,
  variables: (ids) => ({ replyTo: name === 'reply' ? ids.adaPost : null }),
  keep: (data, ids) => {
    ids[name] = data.createPost.id;
  },
});

export const workload: WorkloadStep[] = [
  { label: 'logIn', as: 'ada', query: `mutation { logIn(handle: "ada", password: "correct horse battery") { token user { ${user} } } }` },
  follow('bea', 'ada'),
  follow('cal', 'ada'),
  follow('dan', 'ada'),
  ...['bea', 'cal', 'dan', 'eve'].map((as) => follow(as, 'pop')),
  follow('ada', 'bea'),
  follow('eve', 'bea'),
  { label: 'createList', as: 'bea', query: 'mutation { createList(name: "friends") { id name memberCount } }', keep: (data, ids) => void (ids.list = data.createList.id) },
  { label: 'addToList', as: 'bea', query: 'mutation($id: ID!) { addToList(id: $id, handle: "ada") { id memberCount } }', variables: (ids) => ({ id: ids.list }) },
  createPost('ada', 'adaPost', 'hello @bea'),
  createPost('pop', 'popPost', 'from the pulled account'),
  createPost('ada', 'followersOnly', 'for followers', ', visibility: FOLLOWERS'),
  createPost('ada', 'mentionedOnly', 'only for @cal', ', visibility: MENTIONED'),
  createPost('bea', 'reply', 'an answer'),
  // Discovery: a followed tag, a tag page both ways, a search, trends.
  { label: 'followTag', as: 'cal', query: 'mutation { followTag(tag: "#News") }' },
  createPost('eve', 'taggedPost', 'tagged #news and #日本語'),
  { label: 'tagTimeline', as: 'cal', query: `{ tagTimeline(tag: "news", first: 5) { ${posts} } }`, keep: (data, ids) => void (ids.tagCursor = data.tagTimeline.pageInfo.endCursor) },
  { label: 'tagTimeline', as: 'cal', query: `query($c: String) { tagTimeline(tag: "news", last: 5, before: $c) { ${posts} } }`, variables: (ids) => ({ c: ids.tagCursor }) },
  { label: 'searchPosts', as: 'bea', query: `{ searchPosts(query: "tagged 日本語", first: 5) { ${posts} } }` },
  { label: 'trendingTags', as: 'bea', query: '{ trendingTags(first: 5) { tag accounts posts } }' },
  { label: 'followedTags', as: 'cal', query: '{ followedTags }' },
  {
    label: 'createPost',
    as: 'ada',
    before: { http: 'upload', run: async (app, token, ids) => void (ids.upload = await uploaded(app, token, await jpeg(64, 48), 'a small photo')) },
    query: `mutation($media: [ID!]) { createPost(text: "with a picture", media: $media) { ${post} } }`,
    variables: (ids) => ({ media: [ids.upload] }),
    keep: (data, ids) => {
      ids.mediaPost = data.createPost.id;
      ids.mediaUrl = data.createPost.media[0].url;
    },
  },
  { label: 'timeline', as: 'bea', query: `{ timeline(first: 2) { ${posts} } }`, keep: (data, ids) => void (ids.cursor = data.timeline.pageInfo.endCursor) },
  { label: 'timeline', as: 'bea', query: `query($after: String) { timeline(first: 2, after: $after) { ${posts} } }`, variables: (ids) => ({ after: ids.cursor }) },
  { label: 'timeline', as: 'bea', query: `query($before: String) { timeline(last: 2, before: $before) { ${posts} } }`, variables: (ids) => ({ before: ids.cursor }) },
  { label: 'timeline', as: 'cal', query: `{ timeline { ${posts} } }` },
  { label: 'markTimelineRead', as: 'bea', query: 'mutation($upTo: String!) { markTimelineRead(upTo: $upTo) { cursor unreadCount updatedAt } }', variables: (ids) => ({ upTo: ids.cursor }) },
  { label: 'timelineMarker', as: 'bea', query: '{ timelineMarker { cursor unreadCount updatedAt } }' },
  { label: 'likePost', as: 'bea', query: `mutation($id: ID!) { likePost(id: $id) { ${post} } }`, variables: (ids) => ({ id: ids.adaPost }) },
  { label: 'likePost', as: 'cal', query: `mutation($id: ID!) { likePost(id: $id) { ${post} } }`, variables: (ids) => ({ id: ids.adaPost }) },
  { label: 'repost', as: 'bea', query: `mutation($id: ID!) { repost(id: $id) { ${post} } }`, variables: (ids) => ({ id: ids.adaPost }) },
  { label: 'bookmark', as: 'bea', query: `mutation($id: ID!) { bookmark(id: $id) { ${post} } }`, variables: (ids) => ({ id: ids.adaPost }) },
  { label: 'post', as: 'bea', query: `query($id: ID!) { post(id: $id) { ${post} replies(first: 5) { ${posts} } } }`, variables: (ids) => ({ id: ids.adaPost }) },
  // Conversations: a quote, an edit, a pin, and a thread read both ways.
  {
    label: 'createPost',
    as: 'cal',
    query: `mutation($quoteOf: ID) { createPost(text: "quoting ada", quoteOf: $quoteOf) { id quoted { id } } }`,
    variables: (ids) => ({ quoteOf: ids.adaPost }),
    keep: (data, ids) => void (ids.quote = data.createPost.id),
  },
  {
    label: 'editPost',
    as: 'ada',
    query: 'mutation($id: ID!) { editPost(id: $id, text: "hello again @bea") { id text editedAt edits { text editedAt } } }',
    variables: (ids) => ({ id: ids.adaPost }),
  },
  { label: 'pinPost', as: 'ada', query: 'mutation($id: ID!) { pinPost(id: $id) { handle pinnedPosts { id pinned } } }', variables: (ids) => ({ id: ids.adaPost }) },
  {
    label: 'post',
    as: 'bea',
    query: `query($id: ID!) { post(id: $id) { descendants(first: 5) { ${posts} } quoteCount quotes(first: 5) { ${posts} } } }`,
    variables: (ids) => ({ id: ids.adaPost }),
  },
  { label: 'post', as: 'bea', query: 'query($id: ID!) { post(id: $id) { ancestors { id text } descendants(first: 5) { edges { node { id } } } } }', variables: (ids) => ({ id: ids.reply }) },
  { label: 'post', as: 'bea', query: 'query($id: ID!) { post(id: $id) { quoted { id text quoteCount } } }', variables: (ids) => ({ id: ids.quote }) },
  { label: 'unpinPost', as: 'ada', query: 'mutation($id: ID!) { unpinPost(id: $id) { handle pinnedPosts { id } } }', variables: (ids) => ({ id: ids.adaPost }) },
  {
    label: 'user',
    as: 'bea',
    query: `{ user(handle: "ada") { ${user} posts(first: 3) { ${posts} } followers(first: 2) { ${users} } following(first: 2) { ${users} } } }`,
  },
  {
    label: 'user',
    as: 'bea',
    query: `{ user(handle: "ada") { id posts(last: 2) { ${posts} } followers(last: 2) { ${users} } following(last: 2) { ${users} } } }`,
    keep: (data, ids) => void (ids.ada = data.user.id),
  },
  { label: 'viewer', as: 'bea', query: `{ viewer { ${user} bookmarks(first: 5) { ${posts} } keywordFilters { id phrase } } }` },
  { label: 'viewer', as: 'bea', query: `{ viewer { bookmarks(last: 2) { ${posts} } } }` },
  { label: 'list', as: 'bea', query: `query($id: ID!) { list(id: $id) { id name memberCount members(first: 5) { ${users} } timeline(first: 5) { ${posts} } } }`, variables: (ids) => ({ id: ids.list }) },
  { label: 'list', as: 'bea', query: `query($id: ID!) { list(id: $id) { members(last: 2) { ${users} } } }`, variables: (ids) => ({ id: ids.list }) },
  { label: 'post', as: 'bea', query: `query($id: ID!) { post(id: $id) { replies(last: 2) { ${posts} } } }`, variables: (ids) => ({ id: ids.adaPost }) },
  {
    label: 'node',
    as: 'bea',
    query: `query($post: ID!, $ids: [ID!]!) { node(id: $post) { id ... on Post { text } } nodes(ids: $ids) { id ... on User { handle } ... on List { name } ... on Post { text } } }`,
    variables: (ids) => ({ post: ids.adaPost, ids: [ids.ada, ids.list, ids.adaPost, ids.reply] }),
  },
  { label: 'lists', as: 'bea', query: '{ lists { id name memberCount } }' },
  { label: 'searchUsers', as: 'bea', query: `{ searchUsers(query: "da", first: 5) { ${user} } }` },
  { label: 'suggestedFollows', as: 'eve', query: '{ suggestedFollows(first: 5) { user { handle } mutualCount followedBy(first: 2) { handle } } }' },
  { label: 'notifications', as: 'ada', query: `{ notifications(first: 10) { ${notification} } }`, keep: (data, ids) => void (ids.notification = data.notifications.edges[0].cursor) },
  { label: 'notifications', as: 'ada', query: `{ notifications(first: 10, kinds: [LIKE, FOLLOW]) { ${notification} } }` },
  { label: 'notifications', as: 'ada', query: `{ notifications(last: 2) { ${notification} } }`, keep: (data, ids) => void (ids.notificationId = data.notifications.edges[0].node.id) },
  { label: 'node', as: 'ada', query: 'query($ids: [ID!]!) { nodes(ids: $ids) { id ... on Notification { kind } } }', variables: (ids) => ({ ids: [ids.notificationId] }) },
  {
    label: 'markNotificationsRead',
    as: 'ada',
    query: 'mutation($upTo: String!) { markNotificationsRead(upTo: $upTo) { unreadCount notifications { id unread } } }',
    variables: (ids) => ({ upTo: ids.notification }),
  },
  { label: 'unlikePost', as: 'cal', query: `mutation($id: ID!) { unlikePost(id: $id) { likeCount } }`, variables: (ids) => ({ id: ids.adaPost }) },
  { label: 'undoRepost', as: 'bea', query: `mutation($id: ID!) { undoRepost(id: $id) { repostCount } }`, variables: (ids) => ({ id: ids.adaPost }) },
  { label: 'unbookmark', as: 'bea', query: `mutation($id: ID!) { unbookmark(id: $id) { viewerHasBookmarked } }`, variables: (ids) => ({ id: ids.adaPost }) },
  { label: 'mute', as: 'cal', query: 'mutation { mute(handle: "pop") { viewerHasMuted } }' },
  { label: 'unmute', as: 'cal', query: 'mutation { unmute(handle: "pop") { viewerHasMuted } }' },
  { label: 'block', as: 'dan', query: 'mutation { block(handle: "eve") { viewerHasBlocked } }' },
  { label: 'unblock', as: 'dan', query: 'mutation { unblock(handle: "eve") { viewerHasBlocked } }' },
  { label: 'addKeywordFilter', as: 'cal', query: 'mutation { addKeywordFilter(phrase: "spoilers") { id phrase } }', keep: (data, ids) => void (ids.filter = data.addKeywordFilter.id) },
  { label: 'timeline', as: 'cal', query: `{ timeline(first: 3) { ${posts} } }` },
  { label: 'removeKeywordFilter', as: 'cal', query: 'mutation($id: ID!) { removeKeywordFilter(id: $id) }', variables: (ids) => ({ id: ids.filter }) },
  { label: 'renameList', as: 'bea', query: 'mutation($id: ID!) { renameList(id: $id, name: "close friends") { name } }', variables: (ids) => ({ id: ids.list }) },
  { label: 'removeFromList', as: 'bea', query: 'mutation($id: ID!) { removeFromList(id: $id, handle: "ada") { memberCount } }', variables: (ids) => ({ id: ids.list }) },
  { label: 'deleteList', as: 'bea', query: 'mutation($id: ID!) { deleteList(id: $id) }', variables: (ids) => ({ id: ids.list }) },
  { label: 'updateProfile', as: 'dan', query: 'mutation { updateProfile(displayName: "Dan", bio: "hi") { displayName bio } }' },
  // A locked account: follows become requests, approved or rejected; unlocking approves the rest through the queue.
  { label: 'updateProfile', as: 'eve', query: 'mutation { updateProfile(locked: true) { locked } }' },
  follow('cal', 'eve'),
  follow('dan', 'eve'),
  follow('ada', 'eve'),
  { label: 'user', as: 'cal', query: '{ user(handle: "eve") { locked viewerFollowState followers { totalCount } } }' },
  { label: 'followRequests', as: 'eve', query: '{ followRequests(first: 5) { totalCount edges { cursor node { handle } } pageInfo { hasNextPage endCursor } } }' },
  { label: 'approveFollowRequest', as: 'eve', query: 'mutation { approveFollowRequest(handle: "cal") { handle viewerFollowState } }' },
  { label: 'rejectFollowRequest', as: 'eve', query: 'mutation { rejectFollowRequest(handle: "dan") { handle } }' },
  { label: 'updateProfile', as: 'eve', query: 'mutation { updateProfile(locked: false) { locked } }' },
  { label: 'changePassword', as: 'dan', query: `mutation { changePassword(current: "correct horse battery", next: "another horse battery") { token user { handle } } }`, keep: (data, ids) => void (ids.danToken = data.changePassword.token) },
  { label: 'unfollow', as: 'dan', query: 'mutation { unfollow(handle: "ada") { followerCount } }' },
  { label: 'unfollowTag', as: 'cal', query: 'mutation { unfollowTag(tag: "news") }' },
  {
    label: 'updateMedia',
    as: 'ada',
    before: {
      http: 'image',
      run: async (_app, _token, ids) => {
        if ((await fetch(ids.mediaUrl!)).status !== 200) throw new Error('the image did not answer');
      },
    },
    query: 'mutation($id: ID!) { updateMedia(id: $id, alt: "a smaller photo") { id kind alt width height url previewUrl blurhash } }',
    variables: (ids) => ({ id: ids.upload }),
  },
  { label: 'deletePost', as: 'ada', query: 'mutation($id: ID!) { deletePost(id: $id) }', variables: (ids) => ({ id: ids.mediaPost }) },
  { label: 'deletePost', as: 'ada', query: 'mutation($id: ID!) { deletePost(id: $id) }', variables: (ids) => ({ id: ids.adaPost }) },
  // Reports and staff actions (pop is staff): a post removed, an account suspended and brought back.
  createPost('dan', 'reportedPost', 'reported later'),
  {
    label: 'report',
    as: 'bea',
    query: 'mutation($id: ID) { report(handle: "dan", postId: $id, reason: SPAM, comment: "selling") { id reason comment state createdAt reporter { handle } account { handle } post { id } resolution } }',
    variables: (ids) => ({ id: ids.reportedPost }),
    keep: (data, ids) => void (ids.postReport = data.report.id),
  },
  { label: 'report', as: 'bea', query: 'mutation { report(handle: "cal", reason: ABUSE) { id } }', keep: (data, ids) => void (ids.accountReport = data.report.id) },
  { label: 'reports', as: 'pop', query: `{ reports(state: OPEN, first: 5) { edges { cursor node { id reason comment state createdAt reporter { handle } account { handle } post { id text } resolution } } ${pageInfo} } }` },
  { label: 'resolveReport', as: 'pop', query: 'mutation($id: ID!) { resolveReport(id: $id, action: REMOVE_POST) { id state resolution } }', variables: (ids) => ({ id: ids.postReport }) },
  { label: 'notifications', as: 'dan', query: '{ notifications(first: 5, kinds: [POST_REMOVED]) { edges { node { kind removalReason } } } }' },
  { label: 'resolveReport', as: 'pop', query: 'mutation($id: ID!) { resolveReport(id: $id, action: SUSPEND_ACCOUNT) { id state resolution } }', variables: (ids) => ({ id: ids.accountReport }) },
  { label: 'unsuspendAccount', as: 'pop', query: 'mutation { unsuspendAccount(handle: "cal") { handle followerCount } }' },
  { label: 'logOutEverywhere', as: 'eve', query: 'mutation { logOutEverywhere }' },
  { label: 'signUp', as: '', query: `mutation { signUp(handle: "gus", password: "correct horse battery", displayName: "Gus") { token user { handle } } }`, keep: (data, ids) => void (ids.gusToken = data.signUp.token) },
  { label: 'deleteAccount', as: 'gus', query: 'mutation { deleteAccount(password: "correct horse battery") }' },
];

/** The subscriptions a reader keeps open during the workload. */
export const liveSubscriptions = [
  `subscription { timelinePostAdded { cursor repostedBy { handle } node { ${post} } } }`,
  'subscription { timelinePostRemoved }',
  'subscription { timelinePostEdited { id text editedAt } }',
  `subscription { notificationAdded { cursor node { id kind createdAt actorCount actors { handle } post { id } unread } } }`,
];

export const listSubscription = (id: string) => `subscription { listPostAdded(id: "${id}") { cursor node { id text } } }`;

export async function signUpWorkloadAccounts(app: TestApp): Promise<Record<string, string>> {
  const tokens: Record<string, string> = {};
  for (const handle of workloadAccounts) tokens[handle] = await app.signUp(handle);
  return tokens;
}
