/**
 * The reference web client: sign up or log in, read the home timeline with infinite scroll (Relay
 * cursors through Apollo Client's relayStylePagination), pull newer posts with "Refresh", receive new
 * and deleted posts live over graphql-ws, post, delete, and follow or unfollow a post's author.
 *
 * Plain DOM on purpose: the point is how a client talks to this API, not a UI framework.
 */
import { ApolloClient, ApolloLink, HttpLink, InMemoryCache, gql, type ObservableQuery } from '@apollo/client';
import { SetContextLink } from '@apollo/client/link/context';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import { getMainDefinition, relayStylePagination } from '@apollo/client/utilities';
import { createClient } from 'graphql-ws';

declare global {
  interface Window {
    /** Set by the example server: where the API lives. */
    FEED_API_URL: string;
  }
}

interface Post {
  id: string;
  text: string;
  createdAt: string;
  likeCount: number;
  viewerHasLiked: boolean;
  author: { id: string; handle: string; viewerIsFollowing: boolean };
}
interface Edge {
  cursor: string;
  repostedBy: { id: string; handle: string } | null;
  node: Post;
}
interface TimelineData {
  timeline: { edges: Edge[]; pageInfo: { hasNextPage: boolean; endCursor: string | null; startCursor: string | null } };
}

const pageSize = 20;
const apiUrl = window.FEED_API_URL;
const tokenKey = 'feed.token';
const handleKey = 'feed.handle';

const POST_FIELDS = gql`
  fragment PostFields on Post {
    id
    text
    createdAt
    likeCount
    viewerHasLiked
    author { id handle viewerIsFollowing }
  }
`;
const TIMELINE = gql`
  query Timeline($first: Int, $after: String, $last: Int, $before: String) {
    timeline(first: $first, after: $after, last: $last, before: $before) {
      edges { cursor repostedBy { id handle } node { ...PostFields } }
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    }
  }
  ${POST_FIELDS}
`;
const POST_ADDED = gql`
  subscription PostAdded { timelinePostAdded { cursor repostedBy { id handle } node { ...PostFields } } }
  ${POST_FIELDS}
`;
const POST_REMOVED = gql`subscription PostRemoved { timelinePostRemoved }`;
const SIGN_UP = gql`mutation SignUp($handle: String!, $password: String!) { signUp(handle: $handle, password: $password) { token user { handle } } }`;
const LOG_IN = gql`mutation LogIn($handle: String!, $password: String!) { logIn(handle: $handle, password: $password) { token user { handle } } }`;
const CREATE_POST = gql`mutation CreatePost($text: String!) { createPost(text: $text) { id } }`;
const DELETE_POST = gql`mutation DeletePost($id: ID!) { deletePost(id: $id) }`;
const FOLLOW = gql`mutation Follow($handle: String!) { follow(handle: $handle) { id handle viewerIsFollowing } }`;
const UNFOLLOW = gql`mutation Unfollow($handle: String!) { unfollow(handle: $handle) { id handle viewerIsFollowing } }`;
const LIKE = gql`mutation Like($id: ID!) { likePost(id: $id) { id likeCount viewerHasLiked } }`;
const UNLIKE = gql`mutation Unlike($id: ID!) { unlikePost(id: $id) { id likeCount viewerHasLiked } }`;

const app = document.querySelector<HTMLElement>('#app')!;
const session = document.querySelector<HTMLElement>('#session')!;

function escape(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** One Apollo Client per signed-in session: its links carry that session's token. */
function createApolloClient(token: string): ApolloClient {
  const authorization = `Bearer ${token}`;
  const http = new SetContextLink((prev) => ({ headers: { ...prev.headers, authorization } })).concat(new HttpLink({ uri: apiUrl }));
  const ws = new GraphQLWsLink(createClient({ url: apiUrl.replace(/^http/, 'ws'), connectionParams: { authorization } }));
  const link = ApolloLink.split(
    ({ query }) => {
      const definition = getMainDefinition(query);
      return definition.kind === 'OperationDefinition' && definition.operation === 'subscription';
    },
    ws,
    http,
  );
  const cache = new InMemoryCache({ typePolicies: { Query: { fields: { timeline: relayStylePagination() } } } });
  return new ApolloClient({ link, cache });
}

function withoutPost(data: TimelineData, id: string): TimelineData {
  if (!data.timeline) return data;
  return { timeline: { ...data.timeline, edges: data.timeline.edges.filter((edge) => edge.node.id !== id) } };
}

function showSignIn(message = ''): void {
  session.textContent = '';
  app.innerHTML = `
    <form id="sign-in" data-testid="sign-in">
      <input name="handle" placeholder="handle (a-z, 0-9, _)" autocomplete="username" required />
      <input name="password" type="password" placeholder="password (8+ characters)" autocomplete="current-password" required />
      <button name="action" value="logIn">Log in</button>
      <button name="action" value="signUp" class="quiet">Sign up</button>
    </form>
    <p class="error" data-testid="error">${escape(message)}</p>`;
  const form = document.querySelector<HTMLFormElement>('#sign-in')!;
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const submitter = (event as SubmitEvent).submitter as HTMLButtonElement | null;
    const data = new FormData(form);
    const variables = { handle: String(data.get('handle')), password: String(data.get('password')) };
    // Signing in needs no token: a throwaway client without one.
    const anonymous = new ApolloClient({ link: new HttpLink({ uri: apiUrl }), cache: new InMemoryCache() });
    const signUp = submitter?.value === 'signUp';
    try {
      const result = await anonymous.mutate<{ signUp?: { token: string }; logIn?: { token: string } }>({
        mutation: signUp ? SIGN_UP : LOG_IN,
        variables,
      });
      const token = (signUp ? result.data?.signUp : result.data?.logIn)?.token;
      if (!token) throw new Error('no token in the answer');
      localStorage.setItem(tokenKey, token);
      localStorage.setItem(handleKey, variables.handle);
      showTimeline(token, variables.handle);
    } catch (error) {
      showSignIn(error instanceof Error ? error.message : String(error));
    }
  });
}

function showTimeline(token: string, handle: string): void {
  const client = createApolloClient(token);
  session.innerHTML = `signed in as <strong data-testid="me">@${escape(handle)}</strong> <button class="quiet" id="sign-out">Sign out</button>`;
  app.innerHTML = `
    <form id="compose"><textarea name="text" rows="2" maxlength="500" placeholder="What is happening?" data-testid="compose"></textarea><button data-testid="publish">Post</button></form>
    <form id="follow"><input name="handle" placeholder="follow @handle" data-testid="follow-handle" /><button class="quiet" data-testid="follow">Follow</button></form>
    <p class="error" data-testid="error"></p>
    <div class="toolbar"><span data-testid="count"></span><button class="quiet" id="refresh" data-testid="refresh">Refresh</button></div>
    <ol class="timeline" data-testid="timeline"></ol>
    <div id="sentinel" data-testid="sentinel"></div>`;
  const list = app.querySelector<HTMLOListElement>('.timeline')!;
  const sentinel = app.querySelector<HTMLElement>('#sentinel')!;
  const errorLine = app.querySelector<HTMLElement>('.error')!;
  const report = (error: unknown) => (errorLine.textContent = error instanceof Error ? error.message : String(error));

  document.querySelector('#sign-out')!.addEventListener('click', () => {
    localStorage.removeItem(tokenKey);
    void client.clearStore().finally(() => client.stop());
    showSignIn();
  });

  const timeline: ObservableQuery<TimelineData> = client.watchQuery<TimelineData>({ query: TIMELINE, variables: { first: pageSize } });
  let latest: TimelineData['timeline'] | null = null;
  let loadingMore = false;

  timeline.subscribe({
    next: ({ data, error }) => {
      if (error) report(error);
      if (!data?.timeline) return;
      latest = data.timeline as TimelineData['timeline'];
      render(latest.edges);
      sentinel.textContent = latest.pageInfo.hasNextPage ? 'Loading older posts…' : 'You are all caught up.';
    },
    error: report,
  });

  function render(edges: readonly Edge[]): void {
    app.querySelector('[data-testid="count"]')!.textContent = `${edges.length} posts`;
    list.innerHTML = edges
      .map(({ node, repostedBy }) => {
        const mine = node.author.handle === handle;
        const followButton = mine
          ? `<button data-action="delete" data-id="${node.id}">Delete</button>`
          : `<button class="quiet" data-action="${node.author.viewerIsFollowing ? 'unfollow' : 'follow'}" data-handle="${escape(node.author.handle)}">${node.author.viewerIsFollowing ? 'Unfollow' : 'Follow'} @${escape(node.author.handle)}</button>`;
        return `<li class="post" data-testid="post" data-id="${node.id}">
          ${repostedBy ? `<div class="reposted">reposted by @${escape(repostedBy.handle)}</div>` : ''}
          <div class="meta"><span class="author">@${escape(node.author.handle)}</span><time>${new Date(node.createdAt).toLocaleString()}</time></div>
          <p class="text" data-testid="text">${escape(node.text)}</p>
          <div class="actions">
            <button class="quiet" data-action="${node.viewerHasLiked ? 'unlike' : 'like'}" data-id="${node.id}">${node.viewerHasLiked ? '♥' : '♡'} ${node.likeCount}</button>
            ${followButton}
          </div></li>`;
      })
      .join('');
  }

  // Infinite scroll: the sentinel below the list coming into view fetches the next (older) page.
  new IntersectionObserver(async (entries) => {
    if (!entries.some((entry) => entry.isIntersecting) || loadingMore || !latest?.pageInfo.hasNextPage) return;
    loadingMore = true;
    try {
      await timeline.fetchMore({ variables: { first: pageSize, after: latest.pageInfo.endCursor } });
    } catch (error) {
      report(error);
    } finally {
      loadingMore = false;
    }
  }).observe(sentinel);

  // Pull to refresh: the posts just newer than the newest one shown (live updates may have missed some).
  app.querySelector('#refresh')!.addEventListener('click', async () => {
    const newest = latest?.edges[0]?.cursor;
    try {
      if (newest) await timeline.fetchMore({ variables: { first: undefined, after: undefined, last: pageSize, before: newest } });
      else await timeline.refetch();
    } catch (error) {
      report(error);
    }
  });

  timeline.subscribeToMore<{ timelinePostAdded: Edge }>({
    document: POST_ADDED,
    updateQuery: (previous, { subscriptionData }) => {
      const edge = subscriptionData.data?.timelinePostAdded;
      const current = (previous as TimelineData).timeline;
      if (!edge || !current || current.edges.some((shown) => shown.node.id === edge.node.id)) return previous as TimelineData;
      return { timeline: { ...current, edges: [edge, ...current.edges] } };
    },
  });
  timeline.subscribeToMore<{ timelinePostRemoved: string }>({
    document: POST_REMOVED,
    updateQuery: (previous, { subscriptionData }) => {
      const removed = subscriptionData.data?.timelinePostRemoved;
      return removed ? withoutPost(previous as TimelineData, removed) : (previous as TimelineData);
    },
  });

  app.querySelector<HTMLFormElement>('#compose')!.addEventListener('submit', async (event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const text = String(new FormData(form).get('text') ?? '');
    try {
      await client.mutate({ mutation: CREATE_POST, variables: { text } });
      form.reset();
      errorLine.textContent = '';
      // The post itself arrives through the live subscription, like everyone else's.
    } catch (error) {
      report(error);
    }
  });

  app.querySelector<HTMLFormElement>('#follow')!.addEventListener('submit', async (event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    try {
      await client.mutate({ mutation: FOLLOW, variables: { handle: String(new FormData(form).get('handle') ?? '').replace(/^@/, '') } });
      form.reset();
      errorLine.textContent = '';
      await timeline.refetch({ first: pageSize });
    } catch (error) {
      report(error);
    }
  });

  list.addEventListener('click', async (event) => {
    const button = (event.target as HTMLElement).closest<HTMLButtonElement>('button[data-action]');
    if (!button) return;
    const { action, id, handle: author } = button.dataset;
    try {
      if (action === 'delete') {
        await client.mutate({ mutation: DELETE_POST, variables: { id } });
        // The removal also arrives live; taking it out now answers the click at once.
        timeline.updateQuery((previous) => withoutPost(previous as TimelineData, id!));
      } else if (action === 'like' || action === 'unlike') {
        await client.mutate({ mutation: action === 'like' ? LIKE : UNLIKE, variables: { id } });
      } else if (action === 'follow' || action === 'unfollow') {
        await client.mutate({ mutation: action === 'follow' ? FOLLOW : UNFOLLOW, variables: { handle: author } });
        await timeline.refetch({ first: pageSize });
      }
    } catch (error) {
      report(error);
    }
  });
}

const savedToken = localStorage.getItem(tokenKey);
const savedHandle = localStorage.getItem(handleKey);
if (savedToken && savedHandle) showTimeline(savedToken, savedHandle);
else showSignIn();
