/**
 * The reference web client: a small feed app on the API as it is. Sign up or sign in; read the
 * home timeline (live, infinite scroll, Refresh); post to everyone, followers or the mentioned;
 * like, repost, bookmark, reply, open a thread, delete; find people, follow, mute, block, list
 * them; read notifications (a live badge); edit one's profile, filters and password in Settings.
 *
 * Plain DOM and Apollo Client on purpose: the point is how a client talks to this API, not a UI
 * framework. Views are hash routes, one module each under views/: #/ (home), #/notifications,
 * #/search[/<query>], #/tag/<tag>, #/bookmarks, #/lists[/<id>], #/u/<handle>, #/p/<id>, #/settings.
 */
import { createSession, errorCode, errorMessage } from './api.js';
import { POST_EDITED } from './conversationOperations.js';
import { NOTIFICATION_ADDED, POST_ADDED, POST_REMOVED, TIMELINE, UNREAD_NOTIFICATIONS, VIEWER, type Author, type Edge, type NotificationEdge, type TimelineData } from './operations.js';
import { account, apiUrl, app, forget, nav, pageSize, showOnTop, type App } from './shell.js';
import { avatar, escape, icon, icons, nameOf, refreshTimes, stateBox, wireMediaViewer } from './ui.js';
import { showBookmarks } from './views/bookmarks.js';
import { showHome } from './views/home.js';
import { showList, showLists } from './views/lists.js';
import { showRequests, showStaff } from './views/moderation.js';
import { showNotifications } from './views/notifications.js';
import { showProfile } from './views/profile.js';
import { showSearch } from './views/search.js';
import { showSettings } from './views/settings.js';
import { handleKey, showSignIn, tokenKey, type SignInOptions } from './views/signIn.js';
import { showTag } from './views/tag.js';
import { showThread } from './views/thread.js';

setInterval(() => refreshTimes(), 30_000);
wireMediaViewer();

const sessionEnded = 'Your session has ended. Sign in again to continue.';

function signIn(options: SignInOptions = {}): void {
  showSignIn(options, (token, user) => {
    localStorage.setItem(tokenKey, token);
    localStorage.setItem(handleKey, user.handle);
    startSession(token, user);
  });
}

let current: App | null = null;

/** Stops everything a session runs: views, live subscriptions, its socket and client. */
function endSession(state: App): void {
  if (current === state) current = null;
  window.removeEventListener('hashchange', route);
  state.cleanup();
  for (const subscription of state.live) subscription.unsubscribe();
  void state.session.ws.dispose();
  state.client.stop();
}

function signOut(notice?: string): void {
  if (current) endSession(current);
  localStorage.removeItem(tokenKey);
  if (location.hash) history.replaceState(null, '', location.pathname);
  signIn({ notice, handle: localStorage.getItem(handleKey) ?? '' });
}

const navLinks = [
  { key: 'home', href: '#/', label: 'Home', path: icons.home },
  { key: 'notifications', href: '#/notifications', label: 'Notifications', path: icons.bell },
  { key: 'search', href: '#/search', label: 'Search', path: icons.search },
  { key: 'bookmarks', href: '#/bookmarks', label: 'Bookmarks', path: icons.bookmark },
  { key: 'lists', href: '#/lists', label: 'Lists', path: icons.list },
  { key: 'profile', href: '', label: 'Profile', path: icons.user },
  { key: 'settings', href: '#/settings', label: 'Settings', path: icons.settings },
];

function renderNav(me: Author): void {
  nav.innerHTML = navLinks
    .map(
      (link) =>
        `<a href="${link.key === 'profile' ? `#/u/${encodeURIComponent(me.handle)}` : link.href}" data-nav="${link.key}" title="${link.label}"${link.key === 'profile' ? ' data-testid="my-profile"' : ''}>${icon(link.path)}<span class="label">${link.label}</span>${
          link.key === 'notifications' ? '<span class="badge" data-testid="unread-badge" hidden></span>' : ''
        }</a>`,
    )
    .join('');
  account.innerHTML = `<span class="me" data-testid="me"></span>
    <button class="quiet small" id="sign-out" data-testid="sign-out">Sign out</button>`;
  account.querySelector('#sign-out')!.addEventListener('click', () => signOut());
  renderMe(me);
}

function renderMe(me: Author): void {
  const chip = account.querySelector<HTMLElement>('[data-testid="me"]')!;
  chip.title = `@${me.handle}`;
  chip.innerHTML = `${avatar(me)}<span class="me-name">${escape(nameOf(me))}</span>`;
}

/** The badge on Notifications: hidden at 0; its number is part of the link's name. */
function showUnread(count: number): void {
  const badge = nav.querySelector<HTMLElement>('[data-testid="unread-badge"]');
  if (!badge) return;
  badge.hidden = count === 0;
  badge.textContent = count > 99 ? '99+' : String(count);
  badge.parentElement!.setAttribute('aria-label', count ? `Notifications, ${count} unread` : 'Notifications');
}

function startSession(token: string, me: Author, flash = ''): void {
  const session = createSession(apiUrl, token, () => {
    if (current === state && !state.ending) signOut(sessionEnded);
  });
  const { client } = session;
  // Counts asked before the reader marked notifications read would bring the old number back.
  let readMarks = 0;
  let recount: ReturnType<typeof setTimeout> | undefined;
  const state: App = {
    session,
    client,
    me,
    timeline: client.watchQuery({ query: TIMELINE, variables: { first: pageSize } }),
    pending: [],
    removed: new Set(),
    timelineStale: false,
    onLive: () => {},
    onNotification: null,
    setUnread: (count) => {
      readMarks++;
      showUnread(count);
    },
    recountUnread: () => {
      clearTimeout(recount);
      // A burst of likes is one question, not one each.
      recount = setTimeout(() => {
        const asked = readMarks;
        void client
          .query({ query: UNREAD_NOTIFICATIONS, fetchPolicy: 'no-cache' })
          .then(({ data }) => {
            if (current === state && asked === readMarks && data) showUnread(data.notifications.unreadCount);
          })
          .catch(() => {});
      }, 150);
    },
    confirming: new Set(),
    live: [],
    cleanup: () => {},
    signOut,
    switchToken: (next, message) => {
      localStorage.setItem(tokenKey, next);
      endSession(state);
      startSession(next, state.me, message);
    },
    flash,
    ending: false,
  };
  current = state;
  renderNav(me);

  // The "me" chip follows profile edits: the viewer is watched in the cache the edit writes to.
  client.writeQuery({ query: VIEWER, data: { __typename: 'Query', viewer: me } });
  state.live.push(
    client.watchQuery({ query: VIEWER, fetchPolicy: 'cache-only' }).subscribe(({ data }) => {
      if (current !== state || !data?.viewer) return;
      state.me = data.viewer as Author;
      renderMe(state.me);
    }),
  );

  // Live posts: one's own go straight on top; others' wait behind the pill, so the list does not
  // move under a reader's eyes.
  state.live.push(
    client.subscribe({ query: POST_ADDED }).subscribe({
      next: ({ data }) => {
        const edge = data?.timelinePostAdded;
        if (!edge || current !== state) return;
        const shown = (client.readQuery({ query: TIMELINE, variables: { first: pageSize } })?.timeline.edges ?? []).some(
          (e) => e.cursor === edge.cursor,
        );
        if (shown || state.pending.some((e) => e.cursor === edge.cursor)) return;
        if (edge.node.author.handle === state.me.handle && !edge.repostedBy) showOnTop(state, [edge]);
        else state.pending.unshift(edge);
        state.onLive();
      },
    }),
    client.subscribe({ query: POST_REMOVED }).subscribe({
      next: ({ data }) => {
        const id = data?.timelinePostRemoved;
        if (!id || current !== state) return;
        forget(state, id);
        state.onLive();
      },
    }),
    // An edited post: its new text is normalised into the cache under the post's id; lists redraw.
    client.subscribe({ query: POST_EDITED }).subscribe({
      next: ({ data }) => {
        const edited = data?.timelinePostEdited;
        if (!edited || current !== state) return;
        // Posts waiting behind the pill are copies of their own: they take the edit too.
        state.pending = state.pending.map((edge) => (edge.node.id === edited.id ? { ...edge, node: { ...edge.node, text: edited.text, editedAt: edited.editedAt, mentions: edited.mentions } } : edge));
        state.onLive();
      },
    }),
    client.subscribe({ query: NOTIFICATION_ADDED }).subscribe({
      next: ({ data }) => {
        const edge = data?.notificationAdded;
        if (!edge || current !== state) return;
        if (state.onNotification) state.onNotification(edge);
        else state.recountUnread();
      },
    }),
  );
  state.recountUnread();
  window.addEventListener('hashchange', route);
  route();
}

/** `#/u/ada` → ['u', 'ada']; a malformed escape is taken as typed. */
function routeParts(): string[] {
  return location.hash
    .replace(/^#\/?/, '')
    .split('/')
    .map((part) => {
      try {
        return decodeURIComponent(part);
      } catch {
        return part;
      }
    });
}

function route(): void {
  const state = current;
  if (!state) return;
  state.cleanup();
  state.cleanup = () => {};
  state.onLive = () => {};
  state.confirming.clear();
  app.className = '';
  const [view = '', argument = '', extra = ''] = routeParts();
  const active = view === '' ? 'home' : view === 'u' ? (argument === state.me.handle ? 'profile' : '') : view;
  for (const link of nav.querySelectorAll<HTMLAnchorElement>('a[data-nav]')) {
    if (link.dataset.nav === active) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  window.scrollTo(0, 0);
  const show = (): (() => void) => {
    if (view === 'u' && argument) return showProfile(state, argument);
    if (view === 'p' && argument) return showThread(state, argument, extra === 'reply');
    if (view === 'settings') return showSettings(state);
    if (view === 'search') return showSearch(state, argument);
    if (view === 'tag' && argument) return showTag(state, argument);
    if (view === 'notifications') return showNotifications(state);
    if (view === 'bookmarks') return showBookmarks(state);
    if (view === 'lists') return argument ? showList(state, argument) : showLists(state);
    if (view === 'requests') return showRequests(state);
    if (view === 'staff') return showStaff(state);
    return showHome(state);
  };
  state.cleanup = show();
}

// A saved token is checked before it is trusted.
async function start(): Promise<void> {
  const token = localStorage.getItem(tokenKey);
  const handle = localStorage.getItem(handleKey) ?? '';
  if (!token) return signIn({ handle });
  app.innerHTML = stateBox('loading', 'Signing you in…');
  const probe = createSession(apiUrl, token, () => {});
  try {
    const { data } = await probe.client.query({ query: VIEWER, fetchPolicy: 'network-only' });
    if (!data?.viewer) {
      localStorage.removeItem(tokenKey);
      return signIn({ handle, notice: sessionEnded });
    }
    startSession(token, data.viewer);
  } catch (error) {
    if (errorCode(error) === 'UNAUTHENTICATED') {
      localStorage.removeItem(tokenKey);
      return signIn({ handle, notice: sessionEnded });
    }
    app.innerHTML = stateBox('error', `Couldn’t reach the server: ${escape(errorMessage(error))}`, true);
    app.querySelector('[data-retry]')?.addEventListener('click', () => void start());
  } finally {
    probe.client.stop();
    void probe.ws.dispose();
  }
}

void start();
