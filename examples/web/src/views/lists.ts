/**
 * Lists: the index (create one, open one) and a list's page (its timeline, live posts behind a pill,
 * rename, delete, and its members, added by handle or from a profile, removed here).
 */
import { errorCode, errorMessage, withEdgesOnTop } from '../api.js';
import {
  ADD_TO_LIST,
  CREATE_LIST,
  DELETE_LIST,
  LIST,
  LIST_MEMBERS,
  LIST_POST_ADDED,
  LISTS,
  REMOVE_FROM_LIST,
  RENAME_LIST,
  type Edge,
  type ListMembers,
  type ListPage,
  type ListSummary,
} from '../operations.js';
import { itemsOf, wirePostActions } from '../posts.js';
import { announce, app, busy, confirmedTwice, pagedParts, pageSize, watchView, wireOlder, type App } from '../shell.js';
import { escape, personHtml, plural, renderKeyed, stateBox } from '../ui.js';

const members = (count: number) => plural(count, 'member');

/** A form that names a list (creating or renaming it): a blank name is refused here, the API's refusals at the field. */
function onListName(form: HTMLFormElement, errorLine: HTMLElement, save: (name: string) => Promise<void>): void {
  const input = form.querySelector<HTMLInputElement>('input')!;
  input.addEventListener('input', () => (errorLine.textContent = ''));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const name = input.value.trim();
    if (!name) return ((errorLine.textContent = 'Give the list a name.'), input.focus());
    void busy(form.querySelector('button'), () =>
      save(name).catch((error: unknown) => {
        errorLine.textContent = errorMessage(error);
        input.focus();
      }),
    );
  });
}

export function showLists(state: App): () => void {
  document.title = 'Lists · Feed';
  app.innerHTML = `
    <section class="card">
      <h2 class="page-title">Lists</h2>
      <p class="hint">A list is a timeline of some of the people you follow. Only you can see your lists.</p>
      <form id="new-list" class="inline-form" novalidate>
        <label for="list-name" class="visually-hidden">New list name</label>
        <input id="list-name" name="name" placeholder="New list name" aria-describedby="list-error" data-testid="list-name" />
        <button data-testid="create-list">Create</button>
      </form>
      <p class="field-error" id="list-error" data-testid="list-error"></p>
    </section>
    <div data-testid="lists">${stateBox('loading', 'Loading your lists…')}</div>`;
  const form = app.querySelector<HTMLFormElement>('#new-list')!;
  const fieldError = app.querySelector<HTMLElement>('#list-error')!;
  const box = app.querySelector<HTMLElement>('[data-testid="lists"]')!;
  const query = state.client.watchQuery({ query: LISTS, fetchPolicy: 'cache-and-network' });
  const watching = watchView(query, (data) => data.lists, {
    failed: (message) => (box.innerHTML = stateBox('error', `Couldn’t load your lists: ${escape(message)}`)),
    show: (lists) => {
      box.innerHTML = lists.length
        ? `<ul class="lists card">${lists
            .map(
              (list) =>
                `<li data-testid="list-item"><a href="#/lists/${encodeURIComponent(list.id)}" class="name">${escape(list.name)}</a><span class="hint">${members(list.memberCount)}</span></li>`,
            )
            .join('')}</ul>`
        : stateBox('empty', 'No lists yet. Name one above, then add people you follow to it.');
    },
  });
  onListName(form, fieldError, async (name) => {
    const { data } = await state.client.mutate({ mutation: CREATE_LIST, variables: { name } });
    announce(`List “${name}” created`);
    // Straight to the new list, where its members are added.
    location.hash = `#/lists/${encodeURIComponent(data!.createList.id)}`;
  });
  return () => watching.unsubscribe();
}

export function showList(state: App, id: string): () => void {
  document.title = 'List · Feed';
  app.innerHTML = `
    <a href="#/lists" class="back">← Lists</a>
    <section class="card list-head" data-testid="list-head">${stateBox('loading', 'Loading list…')}</section>
    <button class="pill" data-testid="new-posts" hidden></button>
    <p class="form-error" role="alert" data-testid="error"></p>
    <div data-testid="status"></div>
    <ol class="timeline" data-testid="timeline"></ol>
    <div class="sentinel"></div>`;
  const head = app.querySelector<HTMLElement>('[data-testid="list-head"]')!;
  const pill = app.querySelector<HTMLButtonElement>('.pill')!;
  const { list: timeline, status, more, report } = pagedParts('timeline');
  const query = state.client.watchQuery({ query: LIST, variables: { id, first: pageSize }, fetchPolicy: 'cache-and-network' });
  const memberQuery = state.client.watchQuery({ query: LIST_MEMBERS, variables: { id }, fetchPolicy: 'network-only' });
  let list: ListPage | null = null;
  let roster: ListMembers | null = null;
  let pending: Edge[] = [];
  let built = false;

  const build = () => {
    head.innerHTML = `
      <div class="list-title">
        <h2 data-testid="list-title"></h2>
        <span class="hint" data-testid="member-count"></span>
      </div>
      <form id="rename-form" class="inline-form" hidden novalidate>
        <label for="rename-input" class="visually-hidden">List name</label>
        <input id="rename-input" aria-describedby="rename-error" data-testid="rename-input" />
        <button data-testid="save-name">Save</button>
        <button type="button" class="quiet" data-testid="cancel-rename">Cancel</button>
      </form>
      <p class="field-error" id="rename-error" data-testid="rename-error"></p>
      <div class="relations">
        <button class="quiet small" data-testid="rename-list">Rename</button>
        <button class="quiet small danger-text" data-testid="delete-list">Delete list</button>
      </div>
      <details class="members" data-testid="members">
        <summary data-testid="members-toggle">Members</summary>
        <form id="add-member" class="inline-form" novalidate>
          <label for="member-handle" class="visually-hidden">Add someone you follow, by handle</label>
          <input id="member-handle" placeholder="Add someone you follow: @handle" autocapitalize="none" spellcheck="false" aria-describedby="member-error" data-testid="member-handle" />
          <button data-testid="add-member">Add</button>
        </form>
        <p class="field-error" id="member-error" data-testid="member-error"></p>
        <ul class="people" data-testid="member-list"></ul>
      </details>`;
    built = true;
    wireHead();
  };

  const render = () => {
    if (!list) return;
    if (!built) build();
    head.querySelector('[data-testid="list-title"]')!.textContent = list.name;
    head.querySelector('[data-testid="member-count"]')!.textContent = members(list.memberCount);
    head.querySelector('summary')!.textContent = `Members (${list.memberCount.toLocaleString('en')})`;
    document.title = `${list.name} · Feed`;
    const shown = new Set(list.timeline.edges.map((edge) => edge.cursor));
    pending = pending.filter((edge) => !shown.has(edge.cursor));
    pill.hidden = !pending.length;
    pill.textContent = `↑ ${plural(pending.length, 'new post')}`;
    const items = itemsOf(state, list.timeline.edges);
    status.innerHTML = items.length
      ? ''
      : stateBox('empty', list.memberCount ? 'No posts from this list’s members yet.' : 'No one is on this list yet. Add people you follow under Members.');
    renderKeyed(timeline, items);
    more.innerHTML = items.length && list.timeline.pageInfo.hasNextPage ? '<button class="quiet" data-testid="older">Older posts</button>' : '';
  };
  const renderMembers = () => {
    if (!roster || !built) return;
    const box = head.querySelector<HTMLElement>('[data-testid="member-list"]')!;
    box.innerHTML = roster.members.edges
      .map(
        ({ node }) =>
          `<li data-testid="member">${personHtml(node, '', `<button class="quiet small" data-remove-member="${escape(node.handle)}" aria-label="Remove @${escape(node.handle)} from this list">Remove</button>`)}</li>`,
      )
      .join('');
    // An empty list has nothing to show but its members form: open it.
    if (!roster.members.edges.length) head.querySelector('details')!.open = true;
  };
  state.onLive = render;

  pill.addEventListener('click', () => {
    const newest = pending;
    pending = [];
    query.updateQuery((previous) => {
      const page = (previous as { list: ListPage }).list;
      return { __typename: 'Query' as const, list: { ...page, timeline: withEdgesOnTop(page.timeline, newest) } };
    });
    window.scrollTo({ top: 0 });
  });

  /** Members changed: the count, the members and the timeline all follow. */
  const reread = () => Promise.all([query.refetch(), memberQuery.refetch()]);

  const wireHead = () => {
    const renameForm = head.querySelector<HTMLFormElement>('#rename-form')!;
    const renameInput = renameForm.querySelector<HTMLInputElement>('input')!;
    const renameError = head.querySelector<HTMLElement>('#rename-error')!;
    const title = head.querySelector<HTMLElement>('.list-title')!;
    const toggleRename = (open: boolean) => {
      renameForm.hidden = !open;
      title.hidden = open;
      renameError.textContent = '';
      if (open) {
        renameInput.value = list?.name ?? '';
        renameInput.focus();
      } else head.querySelector<HTMLButtonElement>('[data-testid="rename-list"]')!.focus();
    };
    head.querySelector('[data-testid="rename-list"]')!.addEventListener('click', () => toggleRename(true));
    head.querySelector('[data-testid="cancel-rename"]')!.addEventListener('click', () => toggleRename(false));
    onListName(renameForm, renameError, async (name) => {
      await state.client.mutate({ mutation: RENAME_LIST, variables: { id, name } });
      toggleRename(false);
      announce(`List renamed to “${name}”`);
    });

    const remove = head.querySelector<HTMLButtonElement>('[data-testid="delete-list"]')!;
    remove.addEventListener('click', () => {
      if (!confirmedTwice(remove, 'Delete this list? Click again')) return;
      void busy(remove, async () => {
        try {
          await state.client.mutate({ mutation: DELETE_LIST, variables: { id } });
          state.client.cache.evict({ id: state.client.cache.identify({ __typename: 'List', id }) });
          announce('List deleted');
          location.hash = '#/lists';
        } catch (error) {
          report(errorMessage(error));
        }
      });
    });

    const addForm = head.querySelector<HTMLFormElement>('#add-member')!;
    const handleInput = addForm.querySelector<HTMLInputElement>('input')!;
    const memberError = head.querySelector<HTMLElement>('#member-error')!;
    handleInput.addEventListener('input', () => (memberError.textContent = ''));
    addForm.addEventListener('submit', (event) => {
      event.preventDefault();
      const handle = handleInput.value.trim().replace(/^@/, '').toLowerCase();
      if (!handle) return ((memberError.textContent = 'Type the handle of someone you follow.'), handleInput.focus());
      void busy(addForm.querySelector('button'), async () => {
        try {
          await state.client.mutate({ mutation: ADD_TO_LIST, variables: { id, handle } });
          handleInput.value = '';
          await reread();
          announce(`@${handle} added`);
        } catch (error) {
          // FORBIDDEN: lists hold only accounts one follows; say what to do about it.
          memberError.textContent = errorCode(error) === 'FORBIDDEN' ? `You don’t follow @${handle}. Follow them first, then add them.` : errorMessage(error);
          handleInput.focus();
        }
      });
    });
    head.querySelector('[data-testid="member-list"]')!.addEventListener('click', (event) => {
      const button = (event.target as HTMLElement).closest<HTMLButtonElement>('button[data-remove-member]');
      if (!button) return;
      const handle = button.dataset.removeMember!;
      void busy(button, async () => {
        try {
          await state.client.mutate({ mutation: REMOVE_FROM_LIST, variables: { id, handle } });
          await reread();
          announce(`@${handle} removed`);
          handleInput.focus();
        } catch (error) {
          memberError.textContent = errorMessage(error);
        }
      });
    });
  };

  wirePostActions(state, timeline, { rerender: render, onError: report });
  wireOlder(more, query, () => list?.timeline.pageInfo.endCursor, report);
  // Last: a list already cached answers at once, and its rendering needs everything above.
  const watching = watchView(query, (data) => data.list, {
    show: (found) => {
      list = found;
      render();
      renderMembers();
    },
    missing: () => {
      head.innerHTML = stateBox('empty', 'This list does not exist, or was deleted. <a href="#/lists">Your lists</a>');
      built = false;
    },
    failed: (message) => (head.innerHTML = stateBox('error', `Couldn’t load this list: ${escape(message)}`)),
  });
  const watchingMembers = memberQuery.subscribe({
    next: ({ data }) => {
      if (!data?.list) return;
      roster = data.list as ListMembers;
      renderMembers();
    },
  });
  const live = state.client.subscribe({ query: LIST_POST_ADDED, variables: { id } }).subscribe({
    next: ({ data }) => {
      const edge = data?.listPostAdded;
      if (!edge || !list || pending.some((waiting) => waiting.cursor === edge.cursor)) return;
      pending.unshift(edge);
      render();
    },
  });
  return () => {
    watching.unsubscribe();
    watchingMembers.unsubscribe();
    live.unsubscribe();
  };
}
