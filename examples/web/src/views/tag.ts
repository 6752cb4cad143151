/** A tag's page: its public posts, newest first, and a button to follow the tag into the home timeline. */
import { errorMessage } from '../api.js';
import { FOLLOW_TAG, TAG_TIMELINE, UNFOLLOW_TAG } from '../operations.js';
import { itemsOf, wirePostActions } from '../posts.js';
import { app, busy, pageSize, pagedParts, watchView, wireOlder, type App } from '../shell.js';
import { escape, renderKeyed, stateBox } from '../ui.js';

export function showTag(state: App, tag: string): () => void {
  document.title = `#${tag} · Feed`;
  app.innerHTML = `
    <div class="page-head">
      <h2 class="page-title" data-testid="tag-title">#${escape(tag)}</h2>
      <button class="small" data-testid="follow-tag" hidden></button>
    </div>
    <p class="form-error" role="alert" data-testid="error"></p>
    <div data-testid="status">${stateBox('loading', 'Loading posts…')}</div>
    <ol class="timeline" data-testid="timeline"></ol>
    <div class="sentinel"></div>`;
  const { list, status, more, report } = pagedParts('timeline');
  const followButton = app.querySelector<HTMLButtonElement>('[data-testid="follow-tag"]')!;
  const query = state.client.watchQuery({ query: TAG_TIMELINE, variables: { tag, first: pageSize }, fetchPolicy: 'network-only' });
  let page: { edges: Parameters<typeof itemsOf>[1]; pageInfo: { hasNextPage: boolean; endCursor?: string | null } } | null = null;
  let following = false;

  const showFollowing = () => {
    followButton.hidden = false;
    followButton.textContent = following ? 'Following' : 'Follow tag';
    followButton.setAttribute('aria-pressed', String(following));
  };
  const render = () => {
    if (!page) return;
    const items = itemsOf(state, page.edges);
    status.innerHTML = items.length ? '' : stateBox('empty', `No public posts with #${escape(tag)} yet.`);
    renderKeyed(list, items);
    more.innerHTML = items.length && page.pageInfo.hasNextPage ? '<button class="quiet" data-testid="older">Older posts</button>' : '';
  };
  state.onLive = render;

  const watching = watchView(
    query,
    (data) => {
      if (!data) return undefined;
      following = data.followedTags.includes(tag);
      return data.tagTimeline;
    },
    {
      show: (timeline) => {
        page = timeline;
        showFollowing();
        render();
      },
      failed: (message) => (status.innerHTML = stateBox('error', `Couldn’t load #${escape(tag)}: ${escape(message)}`)),
    },
  );
  followButton.addEventListener('click', () => {
    void busy(followButton, async () => {
      try {
        const tags = following
          ? ((await state.client.mutate({ mutation: UNFOLLOW_TAG, variables: { tag } })).data?.unfollowTag ?? [])
          : ((await state.client.mutate({ mutation: FOLLOW_TAG, variables: { tag } })).data?.followTag ?? []);
        following = tags.includes(tag);
        // The home timeline gains or loses this tag's posts.
        state.timelineStale = true;
      } catch (error) {
        report(errorMessage(error));
      }
    }).then(showFollowing);
  });
  wirePostActions(state, list, { rerender: render, onError: report });
  wireOlder(more, query, () => page?.pageInfo.endCursor, report);
  return () => watching.unsubscribe();
}
