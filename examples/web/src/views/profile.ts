/** A profile: names, bio, counts, follow, mute, block, adding to one's lists, and the posts. */
import { errorMessage } from '../api.js';
import { ADD_TO_LIST, LISTS, PROFILE, RELATIONS, type ListSummary, type Profile } from '../operations.js';
import { itemsOf, wirePostActions } from '../posts.js';
import { announce, app, busy, confirmedTwice, pageSize, watchView, wireOlder, type App } from '../shell.js';
import { avatar, escape, nameOf, renderKeyed, stateBox } from '../ui.js';
import { reportFormHtml, wireReportForm } from './moderation.js';

export function showProfile(state: App, handle: string): () => void {
  document.title = `@${handle} · Feed`;
  app.innerHTML = `<section class="card profile" data-testid="profile"><div>${stateBox('loading', 'Loading profile…')}</div><div></div></section>
    <p class="form-error" role="alert" data-testid="error"></p>
    ${handle === state.me.handle ? '' : `<div class="card" data-testid="report-box">${reportFormHtml(`@${handle}`)}</div>`}
    <ol class="timeline pinned-posts" data-testid="pinned" aria-label="Pinned posts"></ol>
    <ol class="timeline" data-testid="timeline"></ol>
    <div class="sentinel"></div>`;
  const [header, listBox] = [...app.querySelector<HTMLElement>('.profile')!.children] as [HTMLElement, HTMLElement];
  const list = app.querySelector<HTMLOListElement>('[data-testid="timeline"]')!;
  const pinned = app.querySelector<HTMLOListElement>('[data-testid="pinned"]')!;
  const more = app.querySelector<HTMLElement>('.sentinel')!;
  const errorLine = app.querySelector<HTMLElement>('[data-testid="error"]')!;
  const report = (message: string) => (errorLine.textContent = message);
  const query = state.client.watchQuery({ query: PROFILE, variables: { handle, first: pageSize }, fetchPolicy: 'cache-and-network' });
  let user: Profile | null = null;
  let lists: ListSummary[] | null = null;
  let listMarkup = '';
  const mine = handle === state.me.handle;

  const render = () => {
    if (!user) return;
    const relation = (action: keyof typeof RELATIONS, label: string, kind = 'quiet') =>
      `<button class="${kind}" data-relation="${action}" data-testid="${action}">${label}</button>`;
    const buttons = mine
      ? '<span class="hint">This is you. <a href="#/settings">Edit your profile</a></span>'
      : [
          // A locked account's follow waits as a request: "Requested" takes it back.
          user.viewerHasBlocked
            ? ''
            : user.viewerIsFollowing
              ? relation('unfollow', 'Unfollow')
              : user.viewerFollowState === 'REQUESTED'
                ? `<button class="quiet" data-relation="unfollow" data-testid="requested" title="Waiting for @${escape(user.handle)} to approve; click to take it back">Requested</button>`
                : relation('follow', user.locked ? 'Request to follow' : 'Follow', ''),
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
      ${user.bio ? `<p class="bio" data-testid="bio">${escape(user.bio)}</p>` : ''}
      <div class="counts">
        <span data-testid="followers"><strong>${user.followerCount.toLocaleString('en')}</strong> ${user.followerCount === 1 ? 'follower' : 'followers'}</span>
        <span data-testid="following"><strong>${user.followingCount.toLocaleString('en')}</strong> following</span>
      </div>
      ${user.viewerHasMuted ? '<p class="notice" data-testid="muted-note">Muted: their posts and reposts stay out of your timeline.</p>' : ''}
      ${user.viewerHasBlocked ? '<p class="notice" data-testid="blocked-note">Blocked: neither of you can follow the other or see the other’s posts.</p>' : ''}
      <div class="relations">${buttons}</div>`;
    // Apart from the rest, so that a live re-render keeps the list chosen and what adding said.
    const control = listControl(user, lists);
    if (control !== listMarkup) listBox.innerHTML = listMarkup = control;
    const items = itemsOf(state, user.posts.edges);
    renderKeyed(pinned, itemsOf(state, user.pinnedPosts.map((node) => ({ node, repostedBy: null }))).map((item) => ({ key: `pinned:${item.key}`, html: item.html })));
    renderKeyed(list, items);
    more.innerHTML = items.length
      ? user.posts.pageInfo.hasNextPage
        ? '<button class="quiet" data-testid="older">Older posts</button>'
        : ''
      : stateBox('empty', user.viewerHasBlocked ? 'Posts hidden.' : mine ? 'You have not posted yet.' : `@${escape(user.handle)} has not posted yet.`);
  };
  state.onLive = render;

  const watching = watchView(query, (data) => data.user, {
    show: (found) => {
      user = found;
      render();
    },
    missing: () =>
      (header.innerHTML = stateBox('empty', `Nobody is called @${escape(handle)}. <a href="#/search/${encodeURIComponent(handle)}">Search for “${escape(handle)}”</a>`)),
    failed: (message) => (header.innerHTML = stateBox('error', `Couldn’t load @${escape(handle)}: ${escape(message)}`)),
  });
  if (!mine) {
    void state.client
      .query({ query: LISTS, fetchPolicy: 'network-only' })
      .then(({ data }) => {
        lists = data?.lists ?? [];
        render();
      })
      .catch(() => {});
  }

  header.addEventListener('click', (event) => {
    const button = (event.target as HTMLElement).closest<HTMLButtonElement>('button[data-relation]');
    if (!button || !user) return;
    const action = button.dataset.relation as keyof typeof RELATIONS;
    if (action === 'block' && !confirmedTwice(button, `Block @${user.handle}? Click again`)) return;
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
  listBox.addEventListener('submit', (event) => {
    const form = (event.target as HTMLElement).closest<HTMLFormElement>('#add-to-list');
    if (!form || !user) return;
    event.preventDefault();
    const select = form.querySelector<HTMLSelectElement>('select')!;
    const status = form.querySelector<HTMLElement>('[data-testid="list-status"]')!;
    const chosen = lists?.find((candidate) => candidate.id === select.value);
    if (!chosen) return;
    void busy(form.querySelector('button'), async () => {
      status.textContent = '';
      try {
        await state.client.mutate({ mutation: ADD_TO_LIST, variables: { id: chosen.id, handle: user!.handle } });
        status.textContent = `Added to ${chosen.name}.`;
        announce(status.textContent);
      } catch (error) {
        status.textContent = errorMessage(error);
      }
    });
  });
  const refetchAfter = (action: string) => ['edit', 'pin', 'unpin', 'quote'].includes(action) && void query.refetch().catch(() => {});
  wirePostActions(state, list, { rerender: render, onError: report, after: refetchAfter });
  wirePostActions(state, pinned, { rerender: render, onError: report, after: refetchAfter });
  const reportBox = app.querySelector<HTMLElement>('[data-testid="report-box"]');
  if (reportBox) wireReportForm(state, reportBox, () => ({ handle, postId: null }));
  wireOlder(more, query, () => user?.posts.pageInfo.endCursor, report);
  return () => watching.unsubscribe();
}

/** Lists take only accounts one follows (FORBIDDEN otherwise), so the control says so instead of failing. */
function listControl(user: Profile, lists: ListSummary[] | null): string {
  if (!lists || user.viewerHasBlocked) return '';
  if (!user.viewerIsFollowing) return lists.length ? `<p class="hint list-control">Follow @${escape(user.handle)} to add them to a list.</p>` : '';
  if (!lists.length) return `<p class="hint list-control">Make a <a href="#/lists">list</a> to add @${escape(user.handle)} to it.</p>`;
  return `<form id="add-to-list" class="inline-form list-control" data-testid="add-to-list">
      <label for="list-choice">Add to list</label>
      <select id="list-choice" data-testid="list-choice">${lists.map((list) => `<option value="${escape(list.id)}">${escape(list.name)}</option>`).join('')}</select>
      <button class="quiet small" data-testid="add-to-list-button">Add</button>
      <span class="hint" role="status" data-testid="list-status"></span>
    </form>`;
}
