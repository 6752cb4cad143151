/** What every list of posts shares: the composer, the buttons on each post, and the list's items. */
import { errorMessage, type UploadedImage } from './api.js';
import { BOOKMARK, CREATE_POST, DELETE_POST, LIKE, REPOST, UNBOOKMARK, UNDO_REPOST, UNLIKE, UPDATE_MEDIA, type Edge, type Post, type Visibility } from './operations.js';
import { announce, busy, forget, type App } from './shell.js';
import { escape, icon, postHtml } from './ui.js';
import { conversationAction, isConversationAction } from './conversations.js';

const maxPostLength = 500;
const maxImages = 4;
const maxAltLength = 1500;
const imageTypes = ['image/jpeg', 'image/png', 'image/webp', 'image/gif'];
const imageIcon = 'M4 5h16v14H4zM4 16l5-5 4 4 3-3 4 4M15.5 9.5h.01';

export function composer(id: string, placeholder: string, button: string, visibility: Visibility = 'PUBLIC'): string {
  const option = (value: Visibility, label: string) => `<option value="${value}"${value === visibility ? ' selected' : ''}>${label}</option>`;
  return `<form class="compose card" id="${id}" data-testid="${id}">
    <label class="visually-hidden" for="${id}-text">${escape(placeholder)}</label>
    <textarea id="${id}-text" name="text" rows="2" maxlength="${maxPostLength}" placeholder="${escape(placeholder)}" data-testid="compose"></textarea>
    <p class="hint" data-testid="visibility-hint" hidden>Only the accounts you @mention will see it.</p>
    <ul class="attachments" data-testid="attachments" aria-label="Images to post" hidden></ul>
    <div class="compose-bar">
      <input type="file" id="${id}-files" accept="${imageTypes.join(',')}" multiple hidden data-testid="attach-input">
      <button type="button" class="quiet small attach" data-testid="attach" aria-label="Add images" title="Add up to ${maxImages} images (or paste them)">${icon(imageIcon)}<span class="label"> Images</span></button>
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

/** An image picked or pasted into a composer: uploaded at once, posted with the post. */
interface Attachment {
  element: HTMLLIElement;
  preview: string;
  state: 'uploading' | 'ready' | 'failed';
  uploaded: UploadedImage | null;
  cancel: () => void;
}

/**
 * Wires a composer: counter, Ctrl+Enter, one request at a time; `done` gets the new post. Images
 * (picked, or pasted into the text) upload as soon as they are added, each with a progress bar, a
 * preview and a field for its description; a missing description is pointed out, gently, and
 * never blocks posting.
 */
export function wireComposer(state: App, form: HTMLFormElement, replyTo: string | null, done: (post: Post) => void): void {
  const text = form.querySelector<HTMLTextAreaElement>('textarea')!;
  const visibility = form.querySelector<HTMLSelectElement>('select')!;
  const hint = form.querySelector<HTMLElement>('[data-testid="visibility-hint"]')!;
  const submit = form.querySelector<HTMLButtonElement>('button[type="submit"]')!;
  const counter = form.querySelector<HTMLElement>('.counter')!;
  const error = form.querySelector<HTMLElement>('.field-error')!;
  const list = form.querySelector<HTMLUListElement>('.attachments')!;
  const picker = form.querySelector<HTMLInputElement>('input[type="file"]')!;
  const attach = form.querySelector<HTMLButtonElement>('button.attach')!;
  const attachments: Attachment[] = [];

  const ready = () => attachments.filter((item) => item.state === 'ready');
  const update = () => {
    counter.textContent = `${[...text.value].length}/${maxPostLength}`;
    const uploading = attachments.some((item) => item.state === 'uploading');
    if (!submit.dataset.busy) submit.disabled = uploading || (!text.value.trim() && ready().length === 0);
    attach.disabled = attachments.length >= maxImages;
    list.hidden = attachments.length === 0;
    // A mentioned-only post that mentions nobody is seen by its author alone: say so before it is sent.
    hint.hidden = visibility.value !== 'MENTIONED';
  };

  const remove = (item: Attachment) => {
    item.cancel();
    URL.revokeObjectURL(item.preview);
    item.element.remove();
    attachments.splice(attachments.indexOf(item), 1);
    list.querySelectorAll<HTMLElement>('[data-number]').forEach((number, index) => (number.textContent = String(index + 1)));
    update();
  };

  const add = (files: readonly File[]) => {
    error.textContent = '';
    const images = files.filter((file) => imageTypes.includes(file.type) || file.type === '');
    if (images.length < files.length) error.textContent = 'Only JPEG, PNG, WebP and GIF images can be attached';
    const room = maxImages - attachments.length;
    if (images.length > room) error.textContent = `A post takes up to ${maxImages} images`;
    for (const file of images.slice(0, Math.max(0, room))) {
      const preview = URL.createObjectURL(file);
      const element = document.createElement('li');
      element.className = 'attachment';
      element.dataset.testid = 'attachment';
      const altId = `alt-${Math.random().toString(36).slice(2)}`;
      element.innerHTML = `
        <img class="attachment-preview" src="${escape(preview)}" alt="" data-testid="attachment-preview">
        <div class="attachment-body">
          <label for="${altId}">Description of image <span data-number>${attachments.length + 1}</span> (alt text)</label>
          <textarea id="${altId}" rows="2" maxlength="${maxAltLength}" data-testid="alt-input" placeholder="What does it show? Say it for people who cannot see it."></textarea>
          <p class="hint alt-warning" data-testid="alt-warning">No description yet: people who use screen readers will not know what this image shows.</p>
          <progress max="1" value="0" data-testid="upload-progress" aria-label="Uploading"></progress>
          <p class="field-error" data-testid="upload-error"></p>
        </div>
        <button type="button" class="link remove" data-testid="remove-attachment" aria-label="Remove image">Remove</button>`;
      list.append(element);
      const progress = element.querySelector<HTMLProgressElement>('progress')!;
      const altInput = element.querySelector<HTMLTextAreaElement>('textarea')!;
      const warning = element.querySelector<HTMLElement>('.alt-warning')!;
      altInput.addEventListener('input', () => (warning.hidden = altInput.value.trim() !== ''));
      const upload = state.session.upload(file, (fraction) => (progress.value = fraction));
      const item: Attachment = { element, preview, state: 'uploading', uploaded: null, cancel: upload.cancel };
      element.querySelector('button.remove')!.addEventListener('click', () => remove(item));
      attachments.push(item);
      upload.done.then(
        (uploaded) => {
          item.state = 'ready';
          item.uploaded = uploaded;
          progress.value = 1;
          progress.hidden = true;
          element.dataset.state = 'ready';
          update();
        },
        (failure: Error) => {
          item.state = 'failed';
          progress.hidden = true;
          element.dataset.state = 'failed';
          element.querySelector<HTMLElement>('[data-testid="upload-error"]')!.textContent = failure.message;
          update();
        },
      );
    }
    update();
  };

  attach.addEventListener('click', () => picker.click());
  picker.addEventListener('change', () => {
    add([...(picker.files ?? [])]);
    picker.value = '';
  });
  text.addEventListener('paste', (event) => {
    const files = [...(event.clipboardData?.files ?? [])];
    if (files.length === 0) return;
    event.preventDefault();
    add(files);
  });
  text.addEventListener('input', update);
  visibility.addEventListener('change', update);
  text.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) form.requestSubmit();
  });
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const images = ready();
    if ((!text.value.trim() && images.length === 0) || attachments.some((item) => item.state === 'uploading')) return;
    void busy(submit, async () => {
      error.textContent = '';
      try {
        // Descriptions written after the upload go with it before the post does.
        for (const item of images) {
          const alt = item.element.querySelector<HTMLTextAreaElement>('textarea')!.value.trim();
          if (alt !== (item.uploaded!.alt ?? '')) {
            await state.client.mutate({ mutation: UPDATE_MEDIA, variables: { id: item.uploaded!.id, alt: alt || null } });
            item.uploaded = { ...item.uploaded!, alt: alt || null };
          }
        }
        const result = await state.client.mutate({
          mutation: CREATE_POST,
          variables: { text: text.value, replyTo, visibility: visibility.value as Visibility, media: images.map((item) => item.uploaded!.id) },
        });
        text.value = '';
        for (const item of [...attachments]) remove(item);
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
    if (isConversationAction(action)) return conversationAction(state, button, action, id, options.onError, () => options.after?.(action, id));
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
