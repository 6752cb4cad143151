/** Small pieces of the page: escaping, plurals, relative times, avatars, and a post's markup. */
import type { Author, Edge, Post } from './api.js';

export function escape(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** "1 post", "2 posts"; `many` for the irregular ones ("1 reply", "2 replies"). */
export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count.toLocaleString('en')} ${count === 1 ? one : many}`;
}

/** "now", "3 min", "5 h", "2 d", then the date: short, as feeds show it. */
export function relativeTime(iso: string, now = Date.now()): string {
  const then = new Date(iso);
  const seconds = Math.max(0, Math.round((now - then.getTime()) / 1000));
  if (seconds < 45) return 'now';
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.round(minutes / 60);
  if (hours < 24) return `${hours} h`;
  const days = Math.round(hours / 24);
  if (days < 7) return `${days} d`;
  const sameYear = then.getFullYear() === new Date(now).getFullYear();
  return then.toLocaleDateString('en', { month: 'short', day: 'numeric', ...(sameYear ? {} : { year: 'numeric' }) });
}

/** Every `<time data-at>` on the page says how long ago again; called every 30 s. */
export function refreshTimes(root: ParentNode = document): void {
  const now = Date.now();
  for (const time of root.querySelectorAll<HTMLTimeElement>('time[data-at]')) {
    const text = relativeTime(time.dateTime, now);
    if (time.textContent !== text) time.textContent = text;
  }
}

export const nameOf = (user: Pick<Author, 'handle' | 'displayName'>): string => user.displayName?.trim() || user.handle;

/** Two letters and a colour of one's own, derived from the handle. */
export function avatar(user: Pick<Author, 'handle' | 'displayName'>, size: 'small' | 'large' = 'small'): string {
  const words = nameOf(user).split(/[\s_]+/u).filter(Boolean);
  const letters = (words.length > 1 ? [...words[0]!][0]! + [...words[1]!][0]! : [...(words[0] ?? '?')].slice(0, 2).join('')).toUpperCase();
  let hash = 0;
  for (const c of user.handle) hash = (hash * 31 + c.charCodeAt(0)) >>> 0;
  return `<span class="avatar ${size}" aria-hidden="true" style="background:hsl(${hash % 360} 55% 42%)">${escape(letters)}</span>`;
}

export function profileLink(user: Author, content: string, className = ''): string {
  return `<a href="#/u/${encodeURIComponent(user.handle)}" class="${className}">${content}</a>`;
}

/** Line icons drawn inline: emoji glyphs depend on the fonts a machine has. */
const icon = (path: string, filled = false) =>
  `<svg class="icon" viewBox="0 0 24 24" width="18" height="18" aria-hidden="true" fill="${filled ? 'currentColor' : 'none'}" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round"><path d="${path}"/></svg>`;
const icons = {
  reply: 'M21 12a8 8 0 0 1-11.6 7.1L4 20l1.2-4.4A8 8 0 1 1 21 12z',
  repost: 'M17 2l3 3-3 3M4 11V9a4 4 0 0 1 4-4h12M7 22l-3-3 3-3M20 13v2a4 4 0 0 1-4 4H4',
  like: 'M12 20.5s-7.5-4.6-9.2-9.3C1.6 7.7 4 4.5 7.3 4.5c2 0 3.6 1.1 4.7 2.8 1.1-1.7 2.7-2.8 4.7-2.8 3.3 0 5.7 3.2 4.5 6.7-1.7 4.7-9.2 9.3-9.2 9.3z',
};

export interface PostOptions {
  me: string;
  /** Posts whose Delete was clicked: they show the confirmation instead of the actions. */
  confirming: ReadonlySet<string>;
  /** The thread's main post is larger and does not link to itself. */
  focus?: boolean;
}

export function postHtml(edge: Pick<Edge, 'node' | 'repostedBy'>, options: PostOptions): string {
  const post: Post = edge.node;
  const mine = post.author.handle === options.me;
  const thread = `#/p/${encodeURIComponent(post.id)}`;
  const when = `<time datetime="${escape(post.createdAt)}" data-at title="${escape(new Date(post.createdAt).toLocaleString())}">${relativeTime(post.createdAt)}</time>`;
  const confirming = options.confirming.has(post.id);
  const actions = confirming
    ? `<div class="confirm" role="group" aria-label="Confirm delete">
        <span>Delete this post for everyone?</span>
        <button class="danger" data-action="confirm-delete" data-id="${escape(post.id)}" data-testid="confirm-delete">Delete</button>
        <button class="quiet" data-action="cancel-delete" data-id="${escape(post.id)}" data-testid="cancel-delete">Cancel</button>
      </div>`
    : `<div class="actions">
        <button class="action" data-action="reply" data-id="${escape(post.id)}" data-testid="reply" aria-label="Reply, ${plural(post.replyCount, 'reply', 'replies')}">${icon(icons.reply)}<span class="n">${post.replyCount}</span></button>
        <button class="action${post.viewerHasReposted ? ' on' : ''}" data-action="${post.viewerHasReposted ? 'undo-repost' : 'repost'}" data-id="${escape(post.id)}" data-testid="repost"
          aria-pressed="${post.viewerHasReposted}" aria-label="Repost, ${plural(post.repostCount, 'repost')}"${mine ? ' disabled title="Your own post"' : ''}>${icon(icons.repost)}<span class="n">${post.repostCount}</span></button>
        <button class="action${post.viewerHasLiked ? ' on' : ''}" data-action="${post.viewerHasLiked ? 'unlike' : 'like'}" data-id="${escape(post.id)}" data-testid="like"
          aria-pressed="${post.viewerHasLiked}" aria-label="Like, ${plural(post.likeCount, 'like')}">${icon(icons.like, post.viewerHasLiked)}<span class="n">${post.likeCount}</span></button>
        ${mine ? `<button class="link" data-action="delete" data-id="${escape(post.id)}" data-testid="delete">Delete</button>` : ''}
      </div>`;
  return `<article class="post${options.focus ? ' focus' : ''}" data-testid="post" data-id="${escape(post.id)}">
    ${edge.repostedBy ? `<div class="reposted" data-testid="reposted-by">${icon(icons.repost)} ${profileLink(edge.repostedBy, escape(nameOf(edge.repostedBy)))} reposted</div>` : ''}
    <div class="row">
      ${profileLink(post.author, avatar(post.author), 'avatar-link" tabindex="-1')}
      <div class="body">
        <div class="meta">
          ${profileLink(post.author, escape(nameOf(post.author)), 'name')}
          <span class="handle">@${escape(post.author.handle)}</span>
          <span aria-hidden="true">·</span>
          ${options.focus ? when : `<a href="${thread}" class="when" data-testid="open-thread">${when}</a>`}
        </div>
        ${post.replyTo ? `<div class="replying" data-testid="replying-to">replying to <a href="#/p/${encodeURIComponent(post.replyTo.id)}">@${escape(post.replyTo.author.handle)}</a></div>` : ''}
        <p class="text" data-testid="text">${escape(post.text)}</p>
        ${actions}
      </div>
    </div>
  </article>`;
}

const markup = new WeakMap<HTMLElement, string>();

/**
 * Puts `items` (key, markup) into `list`, reusing the elements whose markup did not change, and
 * giving focus back to the button that had it: a like answered must not throw keyboard users out.
 */
export function renderKeyed(list: HTMLElement, items: readonly { key: string; html: string }[]): void {
  const active = document.activeElement as HTMLElement | null;
  const focusedKey = active && list.contains(active) ? active.closest<HTMLElement>('[data-key]')?.dataset.key : undefined;
  const focusedTestId = active?.dataset.testid;
  const existing = new Map<string, HTMLElement>();
  for (const child of [...list.children] as HTMLElement[]) existing.set(child.dataset.key!, child);
  const next: HTMLElement[] = [];
  for (const { key, html } of items) {
    const old = existing.get(key);
    if (old && markup.get(old) === html) {
      next.push(old);
      existing.delete(key);
      continue;
    }
    const li = document.createElement('li');
    li.dataset.key = key;
    markup.set(li, html);
    li.innerHTML = html;
    next.push(li);
  }
  list.replaceChildren(...next);
  if (focusedKey && !list.contains(active)) {
    const item = next.find((element) => element.dataset.key === focusedKey);
    const target = item?.querySelector<HTMLElement>(`[data-testid="${focusedTestId}"]`) ?? item?.querySelector<HTMLElement>('button');
    target?.focus();
  }
}
