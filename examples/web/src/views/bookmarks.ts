/** Bookmarks: the posts one kept, most recently bookmarked first. */
import { BOOKMARKS, type BookmarksData } from '../operations.js';
import { itemsOf, wirePostActions } from '../posts.js';
import { app, pageSize, pagedParts, watchView, wireOlder, type App } from '../shell.js';
import { escape, plural, renderKeyed, stateBox } from '../ui.js';

export function showBookmarks(state: App): () => void {
  document.title = 'Bookmarks · Feed';
  app.innerHTML = `
    <div class="page-head"><h2 class="page-title">Bookmarks</h2><span class="hint" data-testid="count"></span></div>
    <p class="form-error" role="alert" data-testid="error"></p>
    <div data-testid="status">${stateBox('loading', 'Loading bookmarks…')}</div>
    <ol class="timeline" data-testid="timeline"></ol>
    <div class="sentinel"></div>`;
  const { list, status, more, report } = pagedParts('timeline');
  const count = app.querySelector<HTMLElement>('[data-testid="count"]')!;
  const query = state.client.watchQuery({ query: BOOKMARKS, variables: { first: pageSize }, fetchPolicy: 'network-only' });
  let page: NonNullable<BookmarksData['viewer']>['bookmarks'] | null = null;
  /** Unbookmarked here: they leave this page at once, though the cached page still holds them. */
  const dropped = new Set<string>();

  const render = () => {
    if (!page) return;
    const items = itemsOf(state, page.edges.filter((edge) => !dropped.has(edge.node.id)));
    count.textContent = items.length ? (page.pageInfo.hasNextPage ? `${items.length}+ posts` : plural(items.length, 'post')) : '';
    status.innerHTML = items.length ? '' : stateBox('empty', 'No bookmarks yet. Press the bookmark button under a post to keep it here.');
    renderKeyed(list, items);
    more.innerHTML = items.length && page.pageInfo.hasNextPage ? '<button class="quiet" data-testid="older">Older bookmarks</button>' : '';
  };
  state.onLive = render;

  const watching = watchView(query, (data) => data.viewer?.bookmarks, {
    show: (bookmarks) => {
      page = bookmarks;
      render();
    },
    failed: (message) => (status.innerHTML = stateBox('error', `Couldn’t load your bookmarks: ${escape(message)}`)),
  });
  wirePostActions(state, list, {
    rerender: render,
    onError: report,
    after: (action, id) => {
      if (action !== 'unbookmark') return;
      dropped.add(id);
      render();
    },
  });
  wireOlder(more, query, () => page?.pageInfo.endCursor, report);
  return () => watching.unsubscribe();
}
