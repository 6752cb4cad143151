/**
 * What a person does to a conversation from any list of posts: quote a post, edit their own (the
 * history behind the "edited" mark), pin and unpin. Each opens in place, under the post, as a small
 * form; the API's answer updates Apollo's cache, so every list showing the post shows the change.
 */
import { errorMessage } from './api.js';
import { EDIT_POST, PIN_POST, POST_EDITS, UNPIN_POST } from './conversationOperations.js';
import { CREATE_POST } from './operations.js';
import { announce, busy, type App } from './shell.js';
import { escape, relativeTime } from './ui.js';

export const conversationActionNames = ['quote', 'edit', 'history', 'pin', 'unpin'] as const;
type ConversationAction = (typeof conversationActionNames)[number];

export const isConversationAction = (action: string): action is ConversationAction => (conversationActionNames as readonly string[]).includes(action);

/** A form under the post: one at a time per post; `submit` gets the text and says whether it is done. */
function inlineForm(article: HTMLElement, testId: string, label: string, button: string, initial: string, submit: (text: string) => Promise<void>): void {
  article.querySelector('.inline-post-form')?.remove();
  const form = document.createElement('form');
  form.className = 'inline-post-form';
  form.dataset.testid = testId;
  const fieldId = `${testId}-${Math.random().toString(36).slice(2)}`;
  form.innerHTML = `<label for="${fieldId}">${escape(label)}</label>
    <textarea id="${fieldId}" rows="2" maxlength="500" data-testid="${testId}-text"></textarea>
    <div class="compose-bar">
      <span class="field-error" data-testid="${testId}-error"></span>
      <button type="button" class="quiet small" data-testid="${testId}-cancel">Cancel</button>
      <button type="submit" class="small" data-testid="${testId}-submit">${escape(button)}</button>
    </div>`;
  const text = form.querySelector('textarea')!;
  text.value = initial;
  form.querySelector('[data-testid$="-cancel"]')!.addEventListener('click', () => form.remove());
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void busy(form.querySelector('button[type="submit"]'), async () => {
      try {
        await submit(text.value);
        form.remove();
      } catch (error) {
        form.querySelector<HTMLElement>('.field-error')!.textContent = errorMessage(error);
      }
    });
  });
  article.querySelector('.body')!.append(form);
  text.focus();
}

/** Runs a conversation action of a post's button; `after` lets the list refresh what it shows. */
export function conversationAction(state: App, button: HTMLButtonElement, action: ConversationAction, id: string, report: (message: string) => void, after: () => void): void {
  const article = button.closest<HTMLElement>('article.post');
  if (!article) return;
  switch (action) {
    case 'quote':
      return inlineForm(article, 'quote-form', 'Say something about this post', 'Quote', '', async (text) => {
        await state.client.mutate({ mutation: CREATE_POST, variables: { text, quoteOf: id } });
        state.timelineStale = true;
        announce('Quote posted');
        after();
      });
    case 'edit': {
      const current = article.querySelector<HTMLElement>('.row > .body > [data-testid="text"]')?.textContent ?? '';
      return inlineForm(article, 'edit-form', 'Edit your post', 'Save', current, async (text) => {
        await state.client.mutate({ mutation: EDIT_POST, variables: { id, text } });
        announce('Post edited');
        after();
      });
    }
    case 'history': {
      const list = article.querySelector<HTMLOListElement>('[data-testid="edit-history"]')!;
      if (!list.hidden) {
        list.hidden = true;
        return;
      }
      void busy(button, async () => {
        try {
          const { data } = await state.client.query({ query: POST_EDITS, variables: { id }, fetchPolicy: 'network-only' });
          const edits = data?.post?.edits ?? [];
          list.innerHTML = edits
            .map((edit) => `<li data-testid="edit-version"><span class="when">until ${relativeTime(edit.editedAt)}</span> <span data-testid="edit-version-text">${escape(edit.text)}</span></li>`)
            .join('');
          list.hidden = false;
        } catch (error) {
          report(errorMessage(error));
        }
      });
      return;
    }
    case 'pin':
    case 'unpin':
      void busy(button, async () => {
        try {
          await state.client.mutate({ mutation: action === 'pin' ? PIN_POST : UNPIN_POST, variables: { id } });
          announce(action === 'pin' ? 'Pinned to your profile' : 'Unpinned');
          after();
        } catch (error) {
          report(errorMessage(error));
        }
      });
      return;
  }
}
