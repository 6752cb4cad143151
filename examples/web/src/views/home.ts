/**
 * The home timeline: infinite scroll down, Refresh for newer posts, live posts behind an
 * "N new posts" pill, what came since the last visit set apart, and who to follow beside it.
 */
import { errorCode, errorMessage } from '../api.js';
import { MARK_TIMELINE_READ, TIMELINE_MARKER, type TimelineData } from '../operations.js';
import { composer, itemsOf, wireComposer, wirePostActions } from '../posts.js';
import { announce, app, busy, pagedParts, pageSize, showOnTop, type App } from '../shell.js';
import { escape, plural, renderKeyed, stateBox } from '../ui.js';
import { mountSuggestions } from './suggestions.js';
import { mountTrending } from './trending.js';

export function showHome(state: App): () => void {
  document.title = 'Home · Feed';
  app.classList.add('with-sidebar');
  app.innerHTML = `
    <div class="compose-area">${composer('new-post', 'What is happening?', 'Post')}</div>
    <div class="sidebar">
      <aside class="card" data-testid="suggestions" aria-label="Who to follow" hidden></aside>
      <aside class="card" data-testid="trending" aria-label="Trending tags" hidden></aside>
    </div>
    <div class="feed">
      <div class="toolbar">
        <span aria-live="polite"><span data-testid="count"></span><span data-testid="unread-count"></span></span>
        <button class="quiet small" id="refresh" data-testid="refresh">Refresh</button>
      </div>
      <p class="form-error" role="alert" data-testid="error"></p>
      <button class="pill" data-testid="new-posts" hidden></button>
      <div data-testid="status"></div>
      <ol class="timeline" data-testid="timeline"></ol>
      <div id="sentinel" class="sentinel" data-testid="sentinel"></div>
    </div>`;
  const { list, status, more: sentinel, report } = pagedParts('timeline');
  const count = app.querySelector<HTMLElement>('[data-testid="count"]')!;
  const pill = app.querySelector<HTMLButtonElement>('.pill')!;
  const refresh = app.querySelector<HTMLButtonElement>('#refresh')!;
  const unreadCount = app.querySelector<HTMLElement>('[data-testid="unread-count"]')!;
  let latest: TimelineData['timeline'] | null = null;
  let loadingOlder = false;
  /** Where reading had reached when this page opened (the API keeps it per account, for every device). */
  let marker: { cursor: string | null; unreadCount: number } | null = null;
  let markedUpTo = '';

  // What is on top has been seen: the marker moves there (it never moves back, whoever marks).
  const markTop = () => {
    const top = latest?.edges[0]?.cursor;
    if (!marker || !top || top === markedUpTo || top === marker.cursor) return;
    markedUpTo = top;
    // A post deleted meanwhile makes its cursor refused; the next top marks instead.
    void state.client.mutate({ mutation: MARK_TIMELINE_READ, variables: { upTo: top } }).catch(() => {});
  };

  const render = () => {
    if (!latest) return;
    const shown = new Set(latest.edges.map((edge) => edge.cursor));
    state.pending = state.pending.filter((edge) => !shown.has(edge.cursor));
    pill.hidden = state.pending.length === 0;
    pill.textContent = `↑ ${plural(state.pending.length, 'new post')}`;
    const items = itemsOf(state, latest.edges);
    count.textContent = plural(items.length, 'post');
    // Only a reader who has read before has a "since": a first visit's whole timeline is not news.
    const since = marker?.cursor && marker.unreadCount ? marker.cursor : null;
    unreadCount.textContent = since ? ` · ${marker!.unreadCount >= 1000 ? '1,000+' : marker!.unreadCount.toLocaleString('en')} new since you last read` : '';
    const read = since ? latest.edges.findIndex((edge) => edge.cursor === since) : -1;
    if (read > 0) {
      const at = items.findIndex((item) => item.key.endsWith(`:${latest!.edges[read]!.node.id}`));
      if (at > 0) items.splice(at, 0, { key: 'read-marker', html: '<div class="read-marker" data-testid="read-marker"><span>You read up to here</span></div>' });
    }
    status.innerHTML = items.length
      ? ''
      : stateBox('empty', 'Your timeline is empty. Write your first post above, or <a href="#/search">find people</a> to follow.');
    renderKeyed(list, items);
    sentinel.textContent = !items.length ? '' : latest.pageInfo.hasNextPage ? 'Loading older posts…' : 'You’re all caught up.';
    markTop();
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
  void state.client
    .query({ query: TIMELINE_MARKER, fetchPolicy: 'no-cache' })
    .then(({ data }) => (marker = data?.timelineMarker ?? { cursor: null, unreadCount: 0 }))
    .catch(() => (marker = { cursor: null, unreadCount: 0 }))
    .then(render);
  const reread = () => {
    state.timelineStale = false;
    state.pending = [];
    void state.timeline.refetch({ first: pageSize }).catch(() => {});
  };
  if (state.timelineStale) reread();
  status.addEventListener('click', (event) => {
    if ((event.target as HTMLElement).closest('[data-retry]')) void state.timeline.refetch({ first: pageSize }).catch(() => {});
  });

  // The post also arrives live, and goes on top from there: nothing to do with the answer.
  wireComposer(state, app.querySelector<HTMLFormElement>('#new-post')!, null, () => {});
  wirePostActions(state, list, { rerender: render, onError: report });
  // A follow backfills the followed account's recent posts, which no live event brings.
  const stopSuggestions = mountSuggestions(state, app.querySelector<HTMLElement>('[data-testid="suggestions"]')!, 3, reread);
  const stopTrending = mountTrending(state, app.querySelector<HTMLElement>('[data-testid="trending"]')!, 5);

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
    stopSuggestions();
    stopTrending();
  };
}
