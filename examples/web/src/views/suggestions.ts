/** "Who to follow": accounts the people one follows follow, each with a Follow button and the reason. */
import { errorCode, errorMessage } from '../api.js';
import { RELATIONS, SUGGESTIONS, type Suggestion } from '../operations.js';
import { busy, type App } from '../shell.js';
import { escape, nameOf, personHtml, plural } from '../ui.js';

/** "Followed by Grace Hopper and Alan Turing", or "…, Alan Turing and 3 more you follow". */
export function reason(suggestion: Suggestion): string {
  const names = suggestion.followedBy.map((user) => escape(nameOf(user)));
  const more = suggestion.mutualCount - names.length;
  if (!names.length) return `Followed by ${plural(suggestion.mutualCount, 'account')} you follow`;
  if (more > 0) return `Followed by ${names.join(', ')} and ${more.toLocaleString('en')} more you follow`;
  return `Followed by ${names.length === 2 ? `${names[0]} and ${names[1]}` : names[0]}`;
}

/**
 * Fills `box` with up to `count` suggestions, or hides it when there are none (a new account follows
 * nobody yet, so nobody can be suggested). `followed` runs after each follow, e.g. to read the home
 * timeline again with the new account's posts.
 */
export function mountSuggestions(state: App, box: HTMLElement, count: number, followed: () => void): () => void {
  let stopped = false;
  box.hidden = true;
  box.innerHTML = '';
  void state.client
    .query({ query: SUGGESTIONS, variables: { first: count }, fetchPolicy: 'network-only' })
    .then(({ data }) => {
      const suggestions = data?.suggestedFollows ?? [];
      if (stopped || !suggestions.length) return;
      box.innerHTML = `<h2 id="suggestions-title">Who to follow</h2>
        <ul class="people" aria-labelledby="suggestions-title">${suggestions
          .map(
            (suggestion) =>
              `<li data-testid="suggestion">${personHtml(
                suggestion.user,
                `<p class="reason" data-testid="reason">${reason(suggestion)}</p>`,
                `<button class="small" data-follow="${escape(suggestion.user.handle)}" data-testid="follow-suggestion" aria-label="Follow @${escape(suggestion.user.handle)}">Follow</button>`,
              )}</li>`,
          )
          .join('')}</ul>
        <p class="form-error" role="alert" data-testid="suggestions-error"></p>`;
      box.hidden = false;
    })
    .catch((error: unknown) => {
      // Suggestions are an extra: a failure is a quiet line, never in the way of the timeline.
      if (stopped || errorCode(error) === 'UNAUTHENTICATED') return;
      box.innerHTML = `<p class="hint">Couldn’t load suggestions: ${escape(errorMessage(error))}</p>`;
      box.hidden = false;
    });
  const onClick = (event: Event) => {
    const button = (event.target as HTMLElement).closest<HTMLButtonElement>('button[data-follow]');
    if (!button || button.dataset.done) return;
    void busy(button, async () => {
      try {
        await state.client.mutate({ mutation: RELATIONS.follow, variables: { handle: button.dataset.follow! } });
        state.timelineStale = true;
        followed();
        return true;
      } catch (error) {
        box.querySelector('[data-testid="suggestions-error"]')!.textContent = errorMessage(error);
        return false;
      }
    }).then((done) => {
      // Followed: the suggestion stays until the next visit, saying so, so the list does not jump.
      if (!done) return;
      button.dataset.done = 'yes';
      button.textContent = 'Following';
      button.disabled = true;
      button.classList.add('quiet');
    });
  };
  box.addEventListener('click', onClick);
  return () => {
    stopped = true;
    box.removeEventListener('click', onClick);
  };
}
