/**
 * Search: people by handle or display-name prefix, and posts holding every word, as one types; who
 * to follow while the box is empty.
 */
import { errorCode, errorMessage } from '../api.js';
import { SEARCH_POSTS, SEARCH_USERS, type Person } from '../operations.js';
import { itemsOf, wirePostActions } from '../posts.js';
import { app, showFieldError, type App } from '../shell.js';
import { escape, personHtml, plural, renderKeyed, stateBox } from '../ui.js';
import { mountSuggestions } from './suggestions.js';

/** Keystrokes closer together than this send one search. */
const typingPause = 250;

export function showSearch(state: App, initial: string): () => void {
  document.title = 'Search · Feed';
  app.innerHTML = `
    <section class="card search">
      <h2 class="visually-hidden">Search people</h2>
      <form id="search-form" class="inline-form" role="search">
        <label for="search-input" class="visually-hidden">Search people by handle or name, and posts by their words</label>
        <input id="search-input" type="search" name="query" placeholder="Search people and posts" value="${escape(initial)}"
          autocapitalize="none" autocomplete="off" spellcheck="false" aria-describedby="search-error" data-testid="search-input" />
        <button data-testid="search-button">Search</button>
      </form>
      <p class="field-error" id="search-error" data-testid="search-error"></p>
    </section>
    <div data-testid="results"></div>
    <section data-testid="post-search" aria-label="Posts" hidden>
      <h2 class="page-title">Posts</h2>
      <ol class="timeline" data-testid="post-results"></ol>
    </section>
    <aside class="card" data-testid="suggestions" aria-label="Who to follow" hidden></aside>`;
  const form = app.querySelector<HTMLFormElement>('#search-form')!;
  const input = form.querySelector<HTMLInputElement>('input')!;
  const button = form.querySelector<HTMLButtonElement>('button')!;
  const fieldError = app.querySelector<HTMLElement>('#search-error')!;
  const results = app.querySelector<HTMLElement>('[data-testid="results"]')!;
  const postSearch = app.querySelector<HTMLElement>('[data-testid="post-search"]')!;
  const postResults = app.querySelector<HTMLOListElement>('[data-testid="post-results"]')!;
  let posts: Parameters<typeof itemsOf>[1] = [];
  const renderPosts = () => {
    renderKeyed(postResults, itemsOf(state, posts));
    postSearch.hidden = posts.length === 0;
  };
  wirePostActions(state, postResults, { rerender: renderPosts, onError: (message) => showError(message) });
  /** Posts holding every word of the query; a query with no word (only punctuation) finds none. */
  const searchPosts = async (query: string, ask: number) => {
    try {
      const { data } = await state.client.query({ query: SEARCH_POSTS, variables: { query, first: 20 }, fetchPolicy: 'network-only' });
      if (ask === asked) posts = data?.searchPosts.edges ?? [];
    } catch {
      if (ask === asked) posts = [];
    }
    if (ask === asked) renderPosts();
  };
  const stopSuggestions = mountSuggestions(state, app.querySelector<HTMLElement>('[data-testid="suggestions"]')!, 5, () => {});
  // Answers can overtake each other; only the newest question's answer is shown.
  let asked = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const showError = (message: string) => showFieldError(input, fieldError, message);
  const search = async () => {
    clearTimeout(timer);
    const query = input.value.trim();
    history.replaceState(null, '', query ? `#/search/${encodeURIComponent(query)}` : '#/search');
    const ask = ++asked;
    showError('');
    if (!query.replace(/^@/, '')) {
      results.innerHTML = stateBox('empty', 'Type the start of a handle or a name to find people.');
      posts = [];
      renderPosts();
      return;
    }
    void searchPosts(query, ask);
    button.disabled = true;
    results.setAttribute('aria-busy', 'true');
    try {
      const { data } = await state.client.query({ query: SEARCH_USERS, variables: { query, first: 20 }, fetchPolicy: 'network-only' });
      if (ask !== asked) return;
      const people = data?.searchUsers ?? [];
      results.innerHTML = people.length
        ? `<p class="hint result-count" data-testid="result-count" role="status">${plural(people.length, 'person', 'people')} found</p>
           <ul class="people card">${people
             .map((person) => `<li data-testid="result">${personHtml(person, `<p class="hint">${plural(person.followerCount, 'follower')}${person.viewerIsFollowing ? ' · you follow them' : ''}</p>`)}</li>`)
             .join('')}</ul>`
        : stateBox('empty', `No one found for “${escape(query)}”. Search matches the start of a handle or a display name.`);
    } catch (error) {
      if (ask !== asked || errorCode(error) === 'UNAUTHENTICATED') return;
      // A refused query (blank, too long) is about what was typed: say it at the box.
      if (errorCode(error) === 'BAD_USER_INPUT') {
        showError(`Can’t search for that: ${errorMessage(error)}.`);
        results.innerHTML = '';
      } else results.innerHTML = stateBox('error', `Search failed: ${escape(errorMessage(error))}`);
    } finally {
      if (ask === asked) {
        button.disabled = false;
        results.removeAttribute('aria-busy');
      }
    }
  };
  input.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(() => void search(), typingPause);
  });
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void search();
  });
  void search();
  input.focus();
  return () => {
    clearTimeout(timer);
    asked++;
    stopSuggestions();
  };
}
