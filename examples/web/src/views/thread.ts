/**
 * A thread: the chain of posts a post answers (root first), the post, and the whole reply tree
 * below it in reading order, each reply indented by its depth, more loaded as the reader scrolls;
 * with a reply composer.
 */
import { THREAD, type Edge, type ThreadPost } from '../operations.js';
import { composer, itemsOf, wireComposer, wirePostActions } from '../posts.js';
import { app, pageSize, watchView, wireOlder, type App } from '../shell.js';
import { escape, plural, postHtml, renderKeyed, stateBox } from '../ui.js';
import { reportFormHtml, wireReportForm } from './moderation.js';

/** Deeper replies stop moving right here, so a long thread stays readable on a phone. */
const maxIndent = 6;

export function showThread(state: App, id: string, replying: boolean): () => void {
  document.title = 'Post · Feed';
  app.innerHTML = `<a href="#/" class="back" data-testid="back">← Home</a>
    <div data-testid="thread">${stateBox('loading', 'Loading post…')}</div>`;
  const root = app.querySelector<HTMLElement>('[data-testid="thread"]')!;
  const query = state.client.watchQuery({ query: THREAD, variables: { id, first: pageSize }, fetchPolicy: 'cache-and-network' });
  let post: ThreadPost | null = null;
  let built = false;
  let scrolling: IntersectionObserver | null = null;

  const build = () => {
    root.innerHTML = `
      <ol class="timeline parent" data-testid="parent"></ol>
      <ol class="timeline main-post" data-testid="main-post"></ol>
      ${composer('reply-form', 'Write your reply', 'Reply', post?.visibility)}
      <p class="form-error" role="alert" data-testid="error"></p>
      ${post && post.author.handle !== state.me.handle ? `<div class="card" data-testid="report-box">${reportFormHtml('this post')}</div>` : ''}
      <h3 class="replies-title" data-testid="replies-title"></h3>
      <ol class="timeline replies" data-testid="replies"></ol>
      <div class="sentinel"></div>`;
    const report = (message: string) => (root.querySelector('[data-testid="error"]')!.textContent = message);
    const refetch = () => void query.refetch().catch(() => {});
    wireComposer(state, root.querySelector<HTMLFormElement>('#reply-form')!, id, refetch);
    wirePostActions(state, root, { rerender: render, onError: report, after: (action) => ['edit', 'pin', 'unpin', 'quote'].includes(action) && refetch() });
    wireReportForm(state, root, () => (post ? { handle: post.author.handle, postId: post.id } : null));
    const sentinel = root.querySelector<HTMLElement>('.sentinel')!;
    wireOlder(sentinel, query, () => post?.descendants.pageInfo.endCursor, report);
    // More replies as the reader reaches the end of the list, as the button does.
    scrolling = new IntersectionObserver((seen) => {
      if (seen.some((entry) => entry.isIntersecting)) sentinel.querySelector<HTMLButtonElement>('[data-testid="older"]:not([disabled])')?.click();
    });
    scrolling.observe(sentinel);
    if (replying) root.querySelector<HTMLTextAreaElement>('textarea')!.focus();
    built = true;
  };

  const render = () => {
    if (!post) return;
    if (state.removed.has(post.id)) {
      root.innerHTML = stateBox('empty', 'This post was deleted. <a href="#/">Back to your timeline</a>');
      built = false;
      return;
    }
    if (!built) build();
    const options = { me: state.me.handle, confirming: state.confirming };
    const ancestors = post.ancestors.filter((ancestor) => !state.removed.has(ancestor.id));
    renderKeyed(root.querySelector('[data-testid="parent"]')!, ancestors.map((ancestor) => ({ key: ancestor.id, html: postHtml({ node: ancestor }, options) })));
    renderKeyed(root.querySelector('[data-testid="main-post"]')!, [{ key: post.id, html: postHtml({ node: post }, { ...options, focus: true }) }]);
    root.querySelector<HTMLTextAreaElement>('#reply-form textarea')!.placeholder = `Reply to @${post.author.handle}`;
    const replies = indented(post.id, itemsOf(state, post.descendants.edges), post.descendants.edges);
    root.querySelector('[data-testid="replies-title"]')!.textContent = replies.length ? plural(post.replyCount, 'reply', 'replies') : 'No replies yet';
    renderKeyed(root.querySelector('[data-testid="replies"]')!, replies);
    root.querySelector('.sentinel')!.innerHTML = post.descendants.pageInfo.hasNextPage ? '<button class="quiet" data-testid="older">More replies</button>' : '';
  };
  state.onLive = render;

  const watching = watchView(query, (data) => data.post, {
    show: (found) => {
      post = found;
      render();
    },
    missing: () => (root.innerHTML = stateBox('empty', 'This post does not exist or was deleted. <a href="#/">Back to your timeline</a>')),
    failed: (message) => (root.innerHTML = stateBox('error', `Couldn’t load this post: ${escape(message)}`)),
  });
  return () => {
    scrolling?.disconnect();
    watching.unsubscribe();
  };
}

/**
 * Each reply below its parent, one step further right: the list comes depth first, so a reply's
 * parent is always placed before it (one the reader may not see counts as the thread's post).
 */
function indented(rootId: string, items: { key: string; html: string }[], edges: readonly Pick<Edge, 'node'>[]): { key: string; html: string }[] {
  const depths = new Map<string, number>([[rootId, 0]]);
  for (const edge of edges) depths.set(edge.node.id, (depths.get(edge.node.replyTo?.id ?? rootId) ?? 0) + 1);
  return items.map((item) => {
    const depth = depths.get(item.key.slice(item.key.indexOf(':') + 1)) ?? 1;
    const indent = Math.min(depth - 1, maxIndent);
    return { key: item.key, html: `<div class="thread-reply" data-testid="thread-reply" data-depth="${depth}" style="--indent: ${indent}">${item.html}</div>` };
  });
}
