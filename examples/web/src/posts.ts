/** What every list of posts shares: the composer, the buttons on each post, and the list's items. */
import { errorMessage } from './api.js';
import { BOOKMARK, CREATE_POST, DELETE_POST, LIKE, REPOST, UNBOOKMARK, UNDO_REPOST, UNLIKE, type Edge, type Post, type Visibility } from './operations.js';
import { announce, busy, forget, type App } from './shell.js';
import { escape, postHtml } from './ui.js';

const maxPostLength = 500;

export function composer(id: string, placeholder: string, button: string, visibility: Visibility = 'PUBLIC'): string {
  const option = (value: Visibility, label: string) => `<option value="${value}"${value === visibility ? ' selected' : ''}>${label}</option>`;
  return `<form class="compose card" id="${id}" data-testid="${id}">
    <label class="visually-hidden" for="${id}-text">${escape(placeholder)}</label>
    <textarea id="${id}-text" name="text" rows="2" maxlength="${maxPostLength}" placeholder="${escape(placeholder)}" data-testid="compose"></textarea>
    <p class="hint" data-testid="visibility-hint" hidden>Only the accounts you @mention will see it.</p>
    <div class="compose-bar">
      <span class="counter" aria-live="polite" data-testid="counter">0/${maxPostLength}</span>
      <span class="field-error" data-testid="compose-error"></span>
      <label class="visually-hidden" for="${id}-visibility">Who can see this</label>
      <select id="${id}-visibility" name="visibility" data-testid="visibility-choice">
        ${option('PUBLIC', 'Everyone')}${option('FOLLOWERS', 'Followers only')}${option('MENTIONED', 'Mentioned only')}
      </select>
      <button type="submit" data-testid="publish" disabled>${escape(button)}</button>
    </div>
  </form>`;
}

/** Wires a composer: counter, Ctrl+Enter, one request at a time; `done` gets the new post. */
export function wireComposer(state: App, form: HTMLFormElement, replyTo: string | null, done: (post: Post) => void): void {
  const text = form.querySelector<HTMLTextAreaElement>('textarea')!;
  const visibility = form.querySelector<HTMLSelectElement>('select')!;
  const hint = form.querySelector<HTMLElement>('[data-testid="visibility-hint"]')!;
  const submit = form.querySelector<HTMLButtonElement>('button[type="submit"]')!;
  const counter = form.querySelector<HTMLElement>('.counter')!;
  const error = form.querySelector<HTMLElement>('.field-error')!;
  const update = () => {
    counter.textContent = `${[...text.value].length}/${maxPostLength}`;
    if (!submit.dataset.busy) submit.disabled = !text.value.trim();
    // A mentioned-only post that mentions nobody is seen by its author alone: say so before it is sent.
    hint.hidden = visibility.value !== 'MENTIONED';
  };
  text.addEventListener('input', update);
  visibility.addEventListener('change', update);
  text.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) form.requestSubmit();
  });
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    if (!text.value.trim()) return;
    void busy(submit, async () => {
      error.textContent = '';
      try {
        const result = await state.client.mutate({
          mutation: CREATE_POST,
          variables: { text: text.value, replyTo, visibility: visibility.value as Visibility },
        });
        text.value = '';
        done(result.data!.createPost);
        announce(replyTo ? 'Reply posted' : 'Posted');
      } catch (caught) {
        error.textContent = errorMessage(caught);
      }
    }, 'Posting…').then(update);
  });
}

const mutations: Record<string, import('@apollo/client').DocumentNode> = {
  like: LIKE,
  unlike: UNLIKE,
  repost: REPOST,
  'undo-repost': UNDO_REPOST,
  bookmark: BOOKMARK,
  unbookmark: UNBOOKMARK,
  'confirm-delete': DELETE_POST,
};

export interface PostActionOptions {
  rerender: () => void;
  onError: (message: string) => void;
  /** After an action the API accepted, e.g. the bookmarks page letting go of an unbookmarked post. */
  after?: (action: string, id: string) => void;
}

/** Like, repost, bookmark, reply and delete in any list of posts. */
export function wirePostActions(state: App, root: HTMLElement, options: PostActionOptions): void {
  root.addEventListener('click', (event) => {
    const button = (event.target as HTMLElement).closest<HTMLButtonElement>('button[data-action]');
    if (!button || !root.contains(button)) return;
    const { action, id } = button.dataset;
    if (!id || !action) return;
    if (action === 'reply') {
      location.hash = `#/p/${encodeURIComponent(id)}/reply`;
      return;
    }
    if (action === 'delete' || action === 'cancel-delete') {
      if (action === 'delete') state.confirming.add(id);
      else state.confirming.delete(id);
      options.rerender();
      const post = root.querySelector<HTMLElement>(`[data-id="${CSS.escape(id)}"]`);
      post?.querySelector<HTMLElement>(action === 'delete' ? '[data-action="cancel-delete"]' : '[data-action="delete"]')?.focus();
      return;
    }
    const mutation = mutations[action];
    if (!mutation) return;
    void busy(button, async () => {
      try {
        await state.client.mutate({ mutation, variables: { id } });
        if (action === 'confirm-delete') {
          state.confirming.delete(id);
          forget(state, id);
          announce('Post deleted');
          options.rerender();
        }
        if (action === 'bookmark' || action === 'unbookmark') announce(action === 'bookmark' ? 'Bookmarked' : 'Removed from bookmarks');
        options.after?.(action, id);
      } catch (error) {
        options.onError(errorMessage(error));
      }
    });
  });
}

/** The markup of a page of posts, keyed so that a repost and its original are two items. */
export const itemsOf = (state: App, edges: readonly Pick<Edge, 'node' | 'repostedBy'>[]) =>
  edges
    .filter((edge) => !state.removed.has(edge.node.id))
    .map((edge) => ({ key: `${edge.repostedBy?.handle ?? ''}:${edge.node.id}`, html: postHtml(edge, { me: state.me.handle, confirming: state.confirming }) }));
