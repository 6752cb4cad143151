/**
 * The reference web client: a small feed app on the API as it is. Sign up or sign in; read the
 * home timeline (infinite scroll down, Refresh for newer posts, live posts behind an "N new posts"
 * pill); like, repost, reply, open a thread, delete your posts; visit profiles to follow, mute or
 * block; hide posts by keyword in Settings.
 *
 * Plain DOM and Apollo Client on purpose: the point is how a client talks to this API, not a UI
 * framework. Views are hash routes: #/ (home), #/u/<handle>, #/p/<id>, #/settings.
 */
import type { ApolloClient, ObservableQuery } from '@apollo/client';
import type { Subscription } from 'rxjs';
import {
  ADD_FILTER,
  CREATE_POST,
  DELETE_POST,
  FILTERS,
  LIKE,
  LOG_IN,
  POST_ADDED,
  POST_REMOVED,
  PROFILE,
  RELATIONS,
  REMOVE_FILTER,
  REPOST,
  SIGN_UP,
  THREAD,
  TIMELINE,
  UNDO_REPOST,
  UNLIKE,
  VIEWER,
  anonymousClient,
  createSession,
  errorCode,
  errorMessage,
  withEdgesOnTop,
  withoutPost,
  type Author,
  type Edge,
  type Profile,
  type Session,
  type ThreadPost,
  type TimelineData,
} from './api.js';
import { avatar, escape, nameOf, plural, postHtml, refreshTimes, renderKeyed } from './ui.js';

declare global {
  interface Window {
    /** Set by the example server: where the API lives. */
    FEED_API_URL: string;
  }
}

const pageSize = 20;
const maxPostLength = 500;
const apiUrl = window.FEED_API_URL;
const tokenKey = 'feed.token';
const handleKey = 'feed.handle';
const handlePattern = /^[a-z0-9_]{3,30}$/;

const app = document.querySelector<HTMLElement>('#app')!;
const nav = document.querySelector<HTMLElement>('#nav')!;
const announcer = document.querySelector<HTMLElement>('#announce')!;

setInterval(() => refreshTimes(), 30_000);

/** Says something to screen readers (and, briefly, on screen). */
function announce(text: string): void {
  announcer.textContent = text;
}

/**
 * Runs `action` with `button` disabled, once at a time: a double click, or Enter pressed twice,
 * sends one request.
 */
async function busy<T>(button: HTMLButtonElement | null, action: () => Promise<T>, label?: string): Promise<T | undefined> {
  if (button?.disabled || button?.dataset.busy) return undefined;
  const text = button?.textContent;
  if (button) {
    button.disabled = true;
    button.dataset.busy = 'yes';
    if (label) button.textContent = label;
  }
  try {
    return await action();
  } finally {
    if (button) {
      button.disabled = false;
      delete button.dataset.busy;
      if (label) button.textContent = text ?? '';
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Signing in

type Mode = 'signIn' | 'signUp';

function showSignIn(options: { notice?: string; handle?: string; mode?: Mode } = {}): void {
  let mode: Mode = options.mode ?? 'signIn';
  nav.innerHTML = '';
  app.innerHTML = `
    <section class="card auth">
      <div class="tabs" role="tablist">
        <button role="tab" class="tab" data-mode="signIn" data-testid="tab-sign-in">Sign in</button>
        <button role="tab" class="tab" data-mode="signUp" data-testid="tab-sign-up">Create account</button>
      </div>
      ${options.notice ? `<p class="notice" role="status" data-testid="notice">${escape(options.notice)}</p>` : ''}
      <form id="auth" data-testid="sign-in" novalidate>
        <label for="handle">Handle</label>
        <input id="handle" name="handle" autocomplete="username" autocapitalize="none" spellcheck="false" aria-describedby="handle-hint handle-error" value="${escape(options.handle ?? '')}" />
        <p class="hint" id="handle-hint">3–30 characters: lowercase a–z, 0–9 and _</p>
        <p class="field-error" id="handle-error" data-testid="handle-error"></p>
        <div class="signup-only">
          <label for="displayName">Display name <span class="optional">(optional)</span></label>
          <input id="displayName" name="displayName" autocomplete="name" maxlength="50" aria-describedby="displayName-error" />
          <p class="field-error" id="displayName-error" data-testid="displayName-error"></p>
        </div>
        <label for="password">Password</label>
        <input id="password" name="password" type="password" aria-describedby="password-hint password-error" />
        <p class="hint signup-only" id="password-hint">At least 8 characters</p>
        <p class="field-error" id="password-error" data-testid="password-error"></p>
        <p class="form-error" role="alert" data-testid="form-error"></p>
        <button type="submit" id="submit" data-testid="submit"></button>
      </form>
    </section>`;
  const form = app.querySelector<HTMLFormElement>('#auth')!;
  const submit = form.querySelector<HTMLButtonElement>('#submit')!;
  const fields = ['handle', 'displayName', 'password'] as const;
  type Field = (typeof fields)[number];
  const input = (field: Field) => form.querySelector<HTMLInputElement>(`#${field}`)!;
  const setMode = (next: Mode) => {
    mode = next;
    form.classList.toggle('signing-up', mode === 'signUp');
    for (const tab of app.querySelectorAll<HTMLButtonElement>('.tab')) tab.setAttribute('aria-selected', String(tab.dataset.mode === mode));
    submit.textContent = mode === 'signUp' ? 'Create account' : 'Sign in';
    input('password').autocomplete = mode === 'signUp' ? 'new-password' : 'current-password';
    clearErrors();
  };
  const clearErrors = () => {
    for (const field of fields) showFieldError(field, '');
    form.querySelector('.form-error')!.textContent = '';
  };
  const showFieldError = (field: Field, message: string) => {
    form.querySelector(`#${field}-error`)!.textContent = message;
    input(field).setAttribute('aria-invalid', String(Boolean(message)));
  };
  for (const tab of app.querySelectorAll<HTMLButtonElement>('.tab')) tab.addEventListener('click', () => setMode(tab.dataset.mode as Mode));
  for (const field of fields) input(field).addEventListener('input', () => showFieldError(field, ''));
  setMode(mode);
  (options.handle ? input('password') : input('handle')).focus();

  /** What is wrong with the handle, said so that a person knows what to type instead. */
  const handleProblem = (handle: string): string => {
    if (!handle) return 'Enter a handle.';
    if (handlePattern.test(handle)) return '';
    const lower = handle.toLowerCase();
    if (/[A-Z]/.test(handle) && handlePattern.test(lower)) return `Handles are lowercase: use “${lower}”.`;
    if (/[A-Z]/.test(handle)) return 'Handles are lowercase. Use 3–30 characters of a–z, 0–9 and _.';
    if (/[^a-z0-9_]/.test(handle)) {
      const bad = [...new Set(handle.replace(/[a-z0-9_]/g, ''))].map((c) => (c === ' ' ? 'spaces' : `“${c}”`)).join(', ');
      return `Only a–z, 0–9 and _ are allowed, not ${bad}.`;
    }
    return handle.length < 3 ? `Too short: at least 3 characters (you have ${handle.length}).` : `Too long: at most 30 characters (you have ${handle.length}).`;
  };

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    clearErrors();
    const handle = input('handle').value.trim().replace(/^@/, '');
    const password = input('password').value;
    const displayName = input('displayName').value.trim();
    if (mode === 'signUp') {
      const problems: [Field, string][] = [
        ['handle', handleProblem(handle)],
        ['password', password.length < 8 ? `Too short: at least 8 characters (you have ${password.length}).` : ''],
      ];
      const first = problems.find(([, problem]) => problem);
      for (const [field, problem] of problems) showFieldError(field, problem);
      if (first) return input(first[0]).focus();
    } else {
      if (!handle) return (showFieldError('handle', 'Enter your handle.'), input('handle').focus());
      if (/[A-Z]/.test(handle)) return (showFieldError('handle', handleProblem(handle)), input('handle').focus());
      if (!password) return (showFieldError('password', 'Enter your password.'), input('password').focus());
    }
    void busy(submit, async () => {
      const anonymous = anonymousClient(apiUrl);
      try {
        const result = await anonymous.mutate<{ signUp?: { token: string; user: Author }; logIn?: { token: string; user: Author } }>({
          mutation: mode === 'signUp' ? SIGN_UP : LOG_IN,
          variables: mode === 'signUp' ? { handle, password, displayName: displayName || null } : { handle, password },
        });
        const session = mode === 'signUp' ? result.data?.signUp : result.data?.logIn;
        if (!session) throw new Error('The server answered without a session; try again.');
        localStorage.setItem(tokenKey, session.token);
        localStorage.setItem(handleKey, session.user.handle);
        startSession(session.token, session.user);
      } catch (error) {
        // Say which field to fix; keep what was typed.
        const message = errorMessage(error);
        const code = errorCode(error);
        if (code === 'CONFLICT') showFieldError('handle', `${message}. Try another handle.`);
        else if (/^Handle/i.test(message)) showFieldError('handle', message);
        else if (/^Password/i.test(message)) showFieldError('password', message);
        else if (/^Display name/i.test(message)) showFieldError('displayName', message);
        else form.querySelector('.form-error')!.textContent = message;
        const invalid = form.querySelector<HTMLInputElement>('[aria-invalid="true"]');
        (invalid ?? (code === 'UNAUTHENTICATED' ? input('password') : null))?.focus();
      } finally {
        anonymous.stop();
      }
    }, mode === 'signUp' ? 'Creating account…' : 'Signing in…');
  });
}

// ---------------------------------------------------------------------------------------------
// A signed-in session

interface App {
  session: Session;
  client: ApolloClient;
  me: Author;
  timeline: ObservableQuery<TimelineData>;
  /** Live posts from others, newest first, waiting behind the "N new posts" pill. */
  pending: Edge[];
  /** Posts deleted while a view shows them. */
  removed: Set<string>;
  /** Follows, mutes, blocks or filters changed: the home timeline reads again on its next showing. */
  timelineStale: boolean;
  /** The current view's re-render, for live events. */
  onLive: () => void;
  confirming: Set<string>;
  live: Subscription[];
  cleanup: () => void;
}

let current: App | null = null;

function signOut(notice?: string): void {
  const state = current;
  current = null;
  localStorage.removeItem(tokenKey);
  window.removeEventListener('hashchange', route);
  if (state) {
    state.cleanup();
    for (const subscription of state.live) subscription.unsubscribe();
    void state.session.ws.dispose();
    state.client.stop();
  }
  if (location.hash) history.replaceState(null, '', location.pathname);
  showSignIn({ notice, handle: localStorage.getItem(handleKey) ?? '' });
}

const expired = () => {
  if (current) signOut('Your session has ended. Sign in again to continue.');
};

function startSession(token: string, me: Author): void {
  const session = createSession(apiUrl, token, expired);
  const { client } = session;
  const state: App = {
    session,
    client,
    me,
    timeline: client.watchQuery<TimelineData>({ query: TIMELINE, variables: { first: pageSize } }),
    pending: [],
    removed: new Set(),
    timelineStale: false,
    onLive: () => {},
    confirming: new Set(),
    live: [],
    cleanup: () => {},
  };
  current = state;
  nav.innerHTML = `
    <a href="#/" data-nav="home">Home</a>
    <a href="#/u/${encodeURIComponent(me.handle)}" data-nav="profile" data-testid="my-profile">Profile</a>
    <a href="#/settings" data-nav="settings">Settings</a>
    <span class="me" data-testid="me" title="@${escape(me.handle)}">${avatar(me)}<span class="me-name">${escape(nameOf(me))}</span></span>
    <button class="quiet small" id="sign-out" data-testid="sign-out">Sign out</button>`;
  nav.querySelector('#sign-out')!.addEventListener('click', () => signOut());

  // Live posts: one's own go straight on top; others' wait behind the pill, so the list does not
  // move under a reader's eyes.
  state.live.push(
    client.subscribe<{ timelinePostAdded: Edge }>({ query: POST_ADDED }).subscribe({
      next: ({ data }) => {
        const edge = data?.timelinePostAdded;
        if (!edge || current !== state) return;
        const shown = (client.readQuery<TimelineData>({ query: TIMELINE, variables: { first: pageSize } })?.timeline.edges ?? []).some(
          (e) => e.cursor === edge.cursor,
        );
        if (shown || state.pending.some((e) => e.cursor === edge.cursor)) return;
        if (edge.node.author.handle === me.handle && !edge.repostedBy) showOnTop(state, [edge]);
        else state.pending.unshift(edge);
        state.onLive();
      },
    }),
    client.subscribe<{ timelinePostRemoved: string }>({ query: POST_REMOVED }).subscribe({
      next: ({ data }) => {
        const id = data?.timelinePostRemoved;
        if (!id || current !== state) return;
        forget(state, id);
        state.onLive();
      },
    }),
  );
  window.addEventListener('hashchange', route);
  route();
}

/** Writes edges on top of the cached home timeline (startCursor moves with them). */
function showOnTop(state: App, edges: readonly Edge[]): void {
  if (!edges.length) return;
  if (!state.timeline.getCurrentResult().data?.timeline) return;
  state.timeline.updateQuery((previous) => withEdgesOnTop(previous as TimelineData, edges));
}

function forget(state: App, id: string): void {
  state.removed.add(id);
  state.pending = state.pending.filter((edge) => edge.node.id !== id);
  if (state.timeline.getCurrentResult().data?.timeline) state.timeline.updateQuery((previous) => withoutPost(previous as TimelineData, id));
}

function route(): void {
  const state = current;
  if (!state) return;
  state.cleanup();
  state.cleanup = () => {};
  state.onLive = () => {};
  state.confirming.clear();
  const hash = decodeURIComponent(location.hash.replace(/^#\/?/, ''));
  const [view = '', argument = '', extra = ''] = hash.split('/');
  for (const link of nav.querySelectorAll<HTMLAnchorElement>('a[data-nav]')) {
    const active = link.dataset.nav === (view === '' ? 'home' : view === 'u' && argument === state.me.handle ? 'profile' : view === 'settings' ? 'settings' : '');
    if (active) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  window.scrollTo(0, 0);
  if (view === 'u' && argument) state.cleanup = showProfile(state, argument);
  else if (view === 'p' && argument) state.cleanup = showThread(state, argument, extra === 'reply');
  else if (view === 'settings') state.cleanup = showSettings(state);
  else state.cleanup = showHome(state);
}

// ---------------------------------------------------------------------------------------------
// Posts: the actions every list shares

function composer(id: string, placeholder: string, button: string, autofocus = false): string {
  return `<form class="compose card" id="${id}" data-testid="${id}">
    <label class="visually-hidden" for="${id}-text">${escape(placeholder)}</label>
    <textarea id="${id}-text" name="text" rows="2" maxlength="${maxPostLength}" placeholder="${escape(placeholder)}" data-testid="compose"${autofocus ? ' autofocus' : ''}></textarea>
    <div class="compose-bar">
      <span class="counter" aria-live="polite" data-testid="counter">0/${maxPostLength}</span>
      <span class="field-error" data-testid="compose-error"></span>
      <button type="submit" data-testid="publish" disabled>${escape(button)}</button>
    </div>
  </form>`;
}

/** Wires a composer: counter, Ctrl+Enter, one request at a time; `done` gets the new post. */
function wireComposer(state: App, form: HTMLFormElement, replyTo: string | null, done: (post: Edge['node']) => void): void {
  const text = form.querySelector<HTMLTextAreaElement>('textarea')!;
  const submit = form.querySelector<HTMLButtonElement>('button[type="submit"]')!;
  const counter = form.querySelector<HTMLElement>('.counter')!;
  const error = form.querySelector<HTMLElement>('.field-error')!;
  const update = () => {
    counter.textContent = `${[...text.value].length}/${maxPostLength}`;
    if (!submit.dataset.busy) submit.disabled = !text.value.trim();
  };
  text.addEventListener('input', update);
  text.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) form.requestSubmit();
  });
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    if (!text.value.trim()) return;
    void busy(submit, async () => {
      error.textContent = '';
      try {
        const result = await state.client.mutate<{ createPost: Edge['node'] }>({ mutation: CREATE_POST, variables: { text: text.value, replyTo } });
        text.value = '';
        done(result.data!.createPost);
        announce(replyTo ? 'Reply posted' : 'Posted');
      } catch (caught) {
        error.textContent = errorMessage(caught);
      }
    }, 'Posting…').then(update);
  });
}

/** Like, repost, reply and delete in any list of posts. */
function wirePostActions(state: App, root: HTMLElement, rerender: () => void, onError: (message: string) => void): void {
  root.addEventListener('click', (event) => {
    const button = (event.target as HTMLElement).closest<HTMLButtonElement>('button[data-action]');
    if (!button || !root.contains(button)) return;
    const { action, id } = button.dataset;
    if (!id) return;
    if (action === 'reply') {
      location.hash = `#/p/${encodeURIComponent(id)}/reply`;
      return;
    }
    if (action === 'delete' || action === 'cancel-delete') {
      if (action === 'delete') state.confirming.add(id);
      else state.confirming.delete(id);
      rerender();
      const post = root.querySelector<HTMLElement>(`[data-id="${CSS.escape(id)}"]`);
      post?.querySelector<HTMLElement>(action === 'delete' ? '[data-action="cancel-delete"]' : '[data-action="delete"]')?.focus();
      return;
    }
    const mutation = { like: LIKE, unlike: UNLIKE, repost: REPOST, 'undo-repost': UNDO_REPOST, 'confirm-delete': DELETE_POST }[action ?? ''];
    if (!mutation) return;
    void busy(button, async () => {
      try {
        await state.client.mutate({ mutation, variables: { id } });
        if (action === 'confirm-delete') {
          state.confirming.delete(id);
          forget(state, id);
          announce('Post deleted');
          rerender();
        }
      } catch (error) {
        onError(errorMessage(error));
      }
    });
  });
}

const itemsOf = (state: App, edges: readonly Edge[]) =>
  edges
    .filter((edge) => !state.removed.has(edge.node.id))
    .map((edge) => ({ key: `${edge.repostedBy?.handle ?? ''}:${edge.node.id}`, html: postHtml(edge, { me: state.me.handle, confirming: state.confirming }) }));

const stateBox = (kind: 'loading' | 'empty' | 'error', text: string, retry = false) =>
  `<div class="state ${kind}" data-testid="${kind}"${kind === 'error' ? ' role="alert"' : ''}>${text}${retry ? ' <button class="quiet small" data-retry>Try again</button>' : ''}</div>`;

// ---------------------------------------------------------------------------------------------
// Home

function showHome(state: App): () => void {
  document.title = 'Home · Feed';
  app.innerHTML = `
    ${composer('new-post', 'What is happening?', 'Post')}
    <form class="open-profile" id="open-profile">
      <label for="open-handle" class="visually-hidden">Open a profile by handle</label>
      <input id="open-handle" name="handle" placeholder="Open a profile: @handle" autocapitalize="none" spellcheck="false" data-testid="open-handle" />
      <button class="quiet" data-testid="open-profile">Open</button>
    </form>
    <div class="toolbar">
      <span data-testid="count" aria-live="polite"></span>
      <button class="quiet small" id="refresh" data-testid="refresh">Refresh</button>
    </div>
    <p class="form-error" role="alert" data-testid="error"></p>
    <button class="pill" data-testid="new-posts" hidden></button>
    <div data-testid="status"></div>
    <ol class="timeline" data-testid="timeline"></ol>
    <div id="sentinel" class="sentinel" data-testid="sentinel"></div>`;
  const list = app.querySelector<HTMLOListElement>('.timeline')!;
  const status = app.querySelector<HTMLElement>('[data-testid="status"]')!;
  const sentinel = app.querySelector<HTMLElement>('#sentinel')!;
  const count = app.querySelector<HTMLElement>('[data-testid="count"]')!;
  const pill = app.querySelector<HTMLButtonElement>('.pill')!;
  const refresh = app.querySelector<HTMLButtonElement>('#refresh')!;
  const errorLine = app.querySelector<HTMLElement>('[data-testid="error"]')!;
  const report = (message: string) => (errorLine.textContent = message);
  let latest: TimelineData['timeline'] | null = null;
  let loadingOlder = false;

  const render = () => {
    if (!latest) return;
    const shown = new Set(latest.edges.map((edge) => edge.cursor));
    state.pending = state.pending.filter((edge) => !shown.has(edge.cursor));
    pill.hidden = state.pending.length === 0;
    pill.textContent = `↑ ${plural(state.pending.length, 'new post')}`;
    const items = itemsOf(state, latest.edges);
    count.textContent = plural(items.length, 'post');
    status.innerHTML = items.length
      ? ''
      : stateBox('empty', 'Your timeline is empty. Write your first post above, or open someone’s profile by handle and follow them.');
    renderKeyed(list, items);
    sentinel.textContent = !items.length ? '' : latest.pageInfo.hasNextPage ? 'Loading older posts…' : 'You’re all caught up.';
  };
  state.onLive = render;

  const watching = state.timeline.subscribe({
    next: ({ data, error, loading }) => {
      if (error) {
        if (errorCode(error) === 'UNAUTHENTICATED') return;
        if (!data?.timeline) status.innerHTML = stateBox('error', `Couldn’t load your timeline: ${escape(errorMessage(error))}`, true);
        else report(errorMessage(error));
        return;
      }
      if (!data?.timeline) {
        if (loading) status.innerHTML = stateBox('loading', 'Loading your timeline…');
        return;
      }
      latest = data.timeline as TimelineData['timeline'];
      render();
    },
  });
  if (state.timelineStale) {
    state.timelineStale = false;
    state.pending = [];
    void state.timeline.refetch({ first: pageSize }).catch(() => {});
  }
  status.addEventListener('click', (event) => {
    if ((event.target as HTMLElement).closest('[data-retry]')) void state.timeline.refetch({ first: pageSize }).catch(() => {});
  });

  wireComposer(state, app.querySelector<HTMLFormElement>('#new-post')!, null, (post) => {
    // The post also arrives live; if it was quicker than the answer, it is already on top.
    void post;
  });
  wirePostActions(state, list, render, report);

  app.querySelector<HTMLFormElement>('#open-profile')!.addEventListener('submit', (event) => {
    event.preventDefault();
    const handle = new FormData(event.currentTarget as HTMLFormElement).get('handle')?.toString().trim().replace(/^@/, '');
    if (handle) location.hash = `#/u/${encodeURIComponent(handle)}`;
  });

  // The pill: the live posts on top, and the reader taken there.
  pill.addEventListener('click', () => {
    showOnTop(state, state.pending);
    state.pending = [];
    render();
    window.scrollTo({ top: 0 });
    list.querySelector<HTMLElement>('a, button')?.focus({ preventScroll: true });
  });

  // Refresh: the posts waiting behind the pill, then those just newer than the newest one shown
  // (live delivery does not replay what a dropped connection missed).
  refresh.addEventListener('click', () => {
    void busy(refresh, async () => {
      report('');
      try {
        showOnTop(state, state.pending);
        state.pending = [];
        const startCursor = latest?.pageInfo.startCursor ?? latest?.edges[0]?.cursor;
        if (!latest?.edges.length || !startCursor) {
          await state.timeline.refetch({ first: pageSize });
          return;
        }
        const result = await state.timeline.fetchMore({ variables: { first: undefined, after: undefined, last: pageSize, before: startCursor } });
        const added = (result.data as TimelineData | undefined)?.timeline.edges.length ?? 0;
        announce(added ? `${plural(added, 'new post')}` : 'No new posts');
      } catch (error) {
        report(errorMessage(error));
      }
    }, 'Refreshing…');
  });

  // Infinite scroll: the sentinel below the list coming into view fetches the next (older) page.
  const observer = new IntersectionObserver(
    async (entries) => {
      if (!entries.some((entry) => entry.isIntersecting) || loadingOlder || !latest?.pageInfo.hasNextPage) return;
      loadingOlder = true;
      try {
        await state.timeline.fetchMore({ variables: { first: pageSize, after: latest.pageInfo.endCursor, last: undefined, before: undefined } });
      } catch (error) {
        sentinel.innerHTML = stateBox('error', `Couldn’t load older posts: ${escape(errorMessage(error))}`);
      } finally {
        loadingOlder = false;
      }
    },
    { rootMargin: '200px' },
  );
  observer.observe(sentinel);

  return () => {
    watching.unsubscribe();
    observer.disconnect();
  };
}

// ---------------------------------------------------------------------------------------------
// Profile

function showProfile(state: App, handle: string): () => void {
  document.title = `@${handle} · Feed`;
  app.innerHTML = `<section class="card profile" data-testid="profile">${stateBox('loading', 'Loading profile…')}</section>
    <p class="form-error" role="alert" data-testid="error"></p>
    <ol class="timeline" data-testid="timeline"></ol>
    <div class="sentinel"></div>`;
  const header = app.querySelector<HTMLElement>('.profile')!;
  const list = app.querySelector<HTMLOListElement>('.timeline')!;
  const more = app.querySelector<HTMLElement>('.sentinel')!;
  const errorLine = app.querySelector<HTMLElement>('[data-testid="error"]')!;
  const report = (message: string) => (errorLine.textContent = message);
  const query = state.client.watchQuery<{ user: Profile | null }>({ query: PROFILE, variables: { handle, first: pageSize }, fetchPolicy: 'cache-and-network' });
  let user: Profile | null = null;
  const mine = handle === state.me.handle;

  const render = () => {
    if (!user) return;
    const relation = (action: keyof typeof RELATIONS, label: string, kind = 'quiet') =>
      `<button class="${kind}" data-relation="${action}" data-testid="${action}">${label}</button>`;
    const buttons = mine
      ? '<span class="hint">This is you.</span>'
      : [
          user.viewerHasBlocked ? '' : user.viewerIsFollowing ? relation('unfollow', 'Unfollow') : relation('follow', 'Follow', ''),
          user.viewerHasMuted ? relation('unmute', 'Unmute') : relation('mute', 'Mute'),
          user.viewerHasBlocked ? relation('unblock', 'Unblock') : relation('block', 'Block', 'quiet danger-text'),
        ].join('');
    header.innerHTML = `
      <div class="profile-head">
        ${avatar(user, 'large')}
        <div>
          <h2 data-testid="profile-name">${escape(nameOf(user))}</h2>
          <div class="handle">@${escape(user.handle)}</div>
        </div>
      </div>
      <div class="counts">
        <span data-testid="followers"><strong>${user.followerCount.toLocaleString('en')}</strong> ${user.followerCount === 1 ? 'follower' : 'followers'}</span>
        <span data-testid="following"><strong>${user.followingCount.toLocaleString('en')}</strong> following</span>
      </div>
      ${user.viewerHasMuted ? '<p class="notice" data-testid="muted-note">Muted: their posts and reposts stay out of your timeline.</p>' : ''}
      ${user.viewerHasBlocked ? '<p class="notice" data-testid="blocked-note">Blocked: neither of you can follow the other or see the other’s posts.</p>' : ''}
      <div class="relations">${buttons}</div>`;
    const items = itemsOf(state, user.posts.edges);
    renderKeyed(list, items);
    more.innerHTML = items.length
      ? user.posts.pageInfo.hasNextPage
        ? '<button class="quiet" data-testid="older">Older posts</button>'
        : ''
      : stateBox('empty', user.viewerHasBlocked ? 'Posts hidden.' : mine ? 'You have not posted yet.' : `@${escape(user.handle)} has not posted yet.`);
  };
  state.onLive = render;

  const watching = query.subscribe({
    next: ({ data, error }) => {
      if (error && !data?.user) {
        if (errorCode(error) !== 'UNAUTHENTICATED') header.innerHTML = stateBox('error', `Couldn’t load @${escape(handle)}: ${escape(errorMessage(error))}`);
        return;
      }
      if (data && data.user === null) {
        header.innerHTML = stateBox('empty', `Nobody is called @${escape(handle)}. Handles are lowercase a–z, 0–9 and _.`);
        return;
      }
      if (!data?.user) return;
      user = data.user as Profile;
      render();
    },
  });

  header.addEventListener('click', (event) => {
    const button = (event.target as HTMLElement).closest<HTMLButtonElement>('button[data-relation]');
    if (!button || !user) return;
    const action = button.dataset.relation as keyof typeof RELATIONS;
    if (action === 'block' && !button.dataset.confirming) {
      button.dataset.confirming = 'yes';
      button.textContent = `Block @${user.handle}? Click again`;
      button.classList.add('danger');
      return;
    }
    void busy(button, async () => {
      try {
        await state.client.mutate({ mutation: RELATIONS[action], variables: { handle: user!.handle } });
        state.timelineStale = true;
        if (action === 'block' || action === 'unblock') await query.refetch();
      } catch (error) {
        report(errorMessage(error));
      }
    });
  });
  wirePostActions(state, list, render, report);
  more.addEventListener('click', (event) => {
    const button = (event.target as HTMLElement).closest<HTMLButtonElement>('[data-testid="older"]');
    if (!button || !user) return;
    void busy(button, () => query.fetchMore({ variables: { after: user!.posts.pageInfo.endCursor } }).catch((error) => report(errorMessage(error))), 'Loading…');
  });
  return () => watching.unsubscribe();
}

// ---------------------------------------------------------------------------------------------
// Thread: a post, what it replies to, and its replies

function showThread(state: App, id: string, replying: boolean): () => void {
  document.title = 'Post · Feed';
  app.innerHTML = `<a href="#/" class="back" data-testid="back">← Home</a>
    <div data-testid="thread">${stateBox('loading', 'Loading post…')}</div>`;
  const root = app.querySelector<HTMLElement>('[data-testid="thread"]')!;
  const query = state.client.watchQuery<{ post: ThreadPost | null }>({ query: THREAD, variables: { id, first: pageSize }, fetchPolicy: 'cache-and-network' });
  let post: ThreadPost | null = null;
  let built = false;

  const build = () => {
    root.innerHTML = `
      <ol class="timeline parent" data-testid="parent"></ol>
      <ol class="timeline main-post" data-testid="main-post"></ol>
      ${composer('reply-form', 'Write your reply', 'Reply', replying)}
      <p class="form-error" role="alert" data-testid="error"></p>
      <h3 class="replies-title" data-testid="replies-title"></h3>
      <ol class="timeline replies" data-testid="replies"></ol>
      <div class="sentinel"></div>`;
    const report = (message: string) => (root.querySelector('[data-testid="error"]')!.textContent = message);
    wireComposer(state, root.querySelector<HTMLFormElement>('#reply-form')!, id, () => void query.refetch().catch(() => {}));
    wirePostActions(state, root, render, report);
    root.querySelector('.sentinel')!.addEventListener('click', (event) => {
      const button = (event.target as HTMLElement).closest<HTMLButtonElement>('[data-testid="more-replies"]');
      if (button && post) void busy(button, () => query.fetchMore({ variables: { after: post!.replies.pageInfo.endCursor } }).catch((e) => report(errorMessage(e))));
    });
    if (replying) root.querySelector<HTMLTextAreaElement>('textarea')!.focus();
    built = true;
  };

  const render = () => {
    if (!post) return;
    if (state.removed.has(post.id)) {
      root.innerHTML = stateBox('empty', 'This post was deleted. <a href="#/">Back to your timeline</a>');
      built = false;
      return;
    }
    if (!built) build();
    const options = { me: state.me.handle, confirming: state.confirming };
    const parent = post.replyTo && !state.removed.has(post.replyTo.id) ? post.replyTo : null;
    renderKeyed(root.querySelector('[data-testid="parent"]')!, parent ? [{ key: parent.id, html: postHtml({ node: parent }, options) }] : []);
    renderKeyed(root.querySelector('[data-testid="main-post"]')!, [{ key: post.id, html: postHtml({ node: post }, { ...options, focus: true }) }]);
    root.querySelector<HTMLTextAreaElement>('#reply-form textarea')!.placeholder = `Reply to @${post.author.handle}`;
    const replies = itemsOf(state, post.replies.edges);
    root.querySelector('[data-testid="replies-title"]')!.textContent = replies.length ? plural(post.replyCount, 'reply', 'replies') : 'No replies yet';
    renderKeyed(root.querySelector('[data-testid="replies"]')!, replies);
    root.querySelector('.sentinel')!.innerHTML = post.replies.pageInfo.hasNextPage ? '<button class="quiet" data-testid="more-replies">More replies</button>' : '';
  };
  state.onLive = render;

  const watching = query.subscribe({
    next: ({ data, error }) => {
      if (error && !data?.post) {
        if (errorCode(error) !== 'UNAUTHENTICATED') root.innerHTML = stateBox('error', `Couldn’t load this post: ${escape(errorMessage(error))}`);
        return;
      }
      if (data && data.post === null) {
        root.innerHTML = stateBox('empty', 'This post does not exist or was deleted. <a href="#/">Back to your timeline</a>');
        return;
      }
      if (!data?.post) return;
      post = data.post as ThreadPost;
      render();
    },
  });
  return () => watching.unsubscribe();
}

// ---------------------------------------------------------------------------------------------
// Settings: keyword filters

function showSettings(state: App): () => void {
  document.title = 'Settings · Feed';
  app.innerHTML = `<section class="card settings">
      <h2>Keyword filters</h2>
      <p class="hint">Posts containing these words or phrases (whole words, any case) stay out of your home timeline.</p>
      <form id="add-filter" class="inline-form">
        <label for="phrase" class="visually-hidden">Word or phrase to hide</label>
        <input id="phrase" name="phrase" maxlength="100" placeholder="Word or phrase to hide" data-testid="filter-phrase" />
        <button type="submit" data-testid="add-filter">Add</button>
      </form>
      <p class="form-error" role="alert" data-testid="error"></p>
      <div data-testid="filters">${stateBox('loading', 'Loading…')}</div>
    </section>`;
  const form = app.querySelector<HTMLFormElement>('#add-filter')!;
  const box = app.querySelector<HTMLElement>('[data-testid="filters"]')!;
  const errorLine = app.querySelector<HTMLElement>('[data-testid="error"]')!;
  const query = state.client.watchQuery<{ viewer: { id: string; keywordFilters: { id: string; phrase: string }[] } | null }>({
    query: FILTERS,
    fetchPolicy: 'network-only',
  });
  const watching = query.subscribe({
    next: ({ data, error }) => {
      if (error) {
        box.innerHTML = stateBox('error', `Couldn’t load your filters: ${escape(errorMessage(error))}`);
        return;
      }
      const filters = data?.viewer?.keywordFilters as { id: string; phrase: string }[] | undefined;
      if (!filters) return;
      box.innerHTML = filters.length
        ? `<p data-testid="filter-count">${plural(filters.length, 'filter')}</p><ul class="filters">${filters
            .map(
              (filter) =>
                `<li data-testid="filter"><span>${escape(filter.phrase)}</span><button class="quiet small" data-remove="${escape(filter.id)}" aria-label="Remove filter ${escape(filter.phrase)}">Remove</button></li>`,
            )
            .join('')}</ul>`
        : stateBox('empty', 'No filters yet.');
    },
  });
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const input = form.querySelector<HTMLInputElement>('#phrase')!;
    const phrase = input.value.trim();
    if (!phrase) {
      errorLine.textContent = 'Type a word or phrase to hide.';
      return input.focus();
    }
    void busy(form.querySelector('button'), async () => {
      errorLine.textContent = '';
      try {
        await state.client.mutate({ mutation: ADD_FILTER, variables: { phrase } });
        input.value = '';
        state.timelineStale = true;
        await query.refetch();
        announce(`Filter “${phrase}” added`);
      } catch (error) {
        errorLine.textContent = errorMessage(error);
      }
    });
  });
  box.addEventListener('click', (event) => {
    const button = (event.target as HTMLElement).closest<HTMLButtonElement>('button[data-remove]');
    if (!button) return;
    void busy(button, async () => {
      try {
        await state.client.mutate({ mutation: REMOVE_FILTER, variables: { id: button.dataset.remove } });
        state.timelineStale = true;
        await query.refetch();
        form.querySelector<HTMLInputElement>('#phrase')!.focus();
      } catch (error) {
        errorLine.textContent = errorMessage(error);
      }
    });
  });
  return () => watching.unsubscribe();
}

// ---------------------------------------------------------------------------------------------
// Start: a saved token is checked before it is trusted

async function start(): Promise<void> {
  const token = localStorage.getItem(tokenKey);
  const handle = localStorage.getItem(handleKey) ?? '';
  if (!token) return showSignIn({ handle });
  app.innerHTML = stateBox('loading', 'Signing you in…');
  const probe = createSession(apiUrl, token, () => {});
  try {
    const { data } = await probe.client.query<{ viewer: Author | null }>({ query: VIEWER, fetchPolicy: 'network-only' });
    if (!data?.viewer) {
      localStorage.removeItem(tokenKey);
      return showSignIn({ handle, notice: 'Your session has ended. Sign in again to continue.' });
    }
    startSession(token, data.viewer);
  } catch (error) {
    if (errorCode(error) === 'UNAUTHENTICATED') {
      localStorage.removeItem(tokenKey);
      return showSignIn({ handle, notice: 'Your session has ended. Sign in again to continue.' });
    }
    app.innerHTML = stateBox('error', `Couldn’t reach the server: ${escape(errorMessage(error))}`, true);
    app.querySelector('[data-retry]')?.addEventListener('click', () => void start());
  } finally {
    probe.client.stop();
    void probe.ws.dispose();
  }
}

void start();
