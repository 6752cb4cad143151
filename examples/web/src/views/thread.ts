/** A thread: a post, what it replies to, and its replies, with a reply composer. */
import { THREAD, type ThreadPost } from '../operations.js';
import { composer, itemsOf, wireComposer, wirePostActions } from '../posts.js';
import { app, pageSize, watchView, wireOlder, type App } from '../shell.js';
import { escape, plural, postHtml, renderKeyed, stateBox } from '../ui.js';
import { reportFormHtml, wireReportForm } from './moderation.js';

export function showThread(state: App, id: string, replying: boolean): () => void {
  document.title = 'Post · Feed';
  app.innerHTML = `<a href="#/" class="back" data-testid="back">← Home</a>
    <div data-testid="thread">${stateBox('loading', 'Loading post…')}</div>`;
  const root = app.querySelector<HTMLElement>('[data-testid="thread"]')!;
  const query = state.client.watchQuery({ query: THREAD, variables: { id, first: pageSize }, fetchPolicy: 'cache-and-network' });
  let post: ThreadPost | null = null;
  let built = false;

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
    wireComposer(state, root.querySelector<HTMLFormElement>('#reply-form')!, id, () => void query.refetch().catch(() => {}));
    wirePostActions(state, root, { rerender: render, onError: report });
    wireReportForm(state, root, () => (post ? { handle: post.author.handle, postId: post.id } : null));
    wireOlder(root.querySelector('.sentinel')!, query, () => post?.replies.pageInfo.endCursor, report);
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
    const parent = post.replyTo && !state.removed.has(post.replyTo.id) ? post.replyTo : null;
    renderKeyed(root.querySelector('[data-testid="parent"]')!, parent ? [{ key: parent.id, html: postHtml({ node: parent }, options) }] : []);
    renderKeyed(root.querySelector('[data-testid="main-post"]')!, [{ key: post.id, html: postHtml({ node: post }, { ...options, focus: true }) }]);
    root.querySelector<HTMLTextAreaElement>('#reply-form textarea')!.placeholder = `Reply to @${post.author.handle}`;
    const replies = itemsOf(state, post.replies.edges);
    root.querySelector('[data-testid="replies-title"]')!.textContent = replies.length ? plural(post.replyCount, 'reply', 'replies') : 'No replies yet';
    renderKeyed(root.querySelector('[data-testid="replies"]')!, replies);
    root.querySelector('.sentinel')!.innerHTML = post.replies.pageInfo.hasNextPage ? '<button class="quiet" data-testid="older">More replies</button>' : '';
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
  return () => watching.unsubscribe();
}
