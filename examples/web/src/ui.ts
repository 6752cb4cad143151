/** Small pieces of the page: escaping, plurals, relative times, avatars, icons, and a post's markup. */
import { decode } from 'blurhash';
import type { Author, Edge, Media, Post, Visibility } from './operations.js';

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

/** Someone in a list of people (search, suggestions, list members): avatar, names, bio, `extra` below, `action` beside. */
export function personHtml(user: Author & { bio?: string | null }, extra = '', action = ''): string {
  return `<div class="person" data-testid="person">
    ${profileLink(user, avatar(user), 'avatar-link" tabindex="-1')}
    <div class="person-body">
      <div class="meta">${profileLink(user, escape(nameOf(user)), 'name')} <span class="handle">@${escape(user.handle)}</span></div>
      ${user.bio ? `<p class="bio" data-testid="bio">${escape(user.bio)}</p>` : ''}
      ${extra}
    </div>
    ${action}
  </div>`;
}

/** Line icons drawn inline: emoji glyphs depend on the fonts a machine has. */
export const icon = (path: string, filled = false) =>
  `<svg class="icon" viewBox="0 0 24 24" width="18" height="18" aria-hidden="true" fill="${filled ? 'currentColor' : 'none'}" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round"><path d="${path}"/></svg>`;
export const icons = {
  reply: 'M21 12a8 8 0 0 1-11.6 7.1L4 20l1.2-4.4A8 8 0 1 1 21 12z',
  repost: 'M17 2l3 3-3 3M4 11V9a4 4 0 0 1 4-4h12M7 22l-3-3 3-3M20 13v2a4 4 0 0 1-4 4H4',
  like: 'M12 20.5s-7.5-4.6-9.2-9.3C1.6 7.7 4 4.5 7.3 4.5c2 0 3.6 1.1 4.7 2.8 1.1-1.7 2.7-2.8 4.7-2.8 3.3 0 5.7 3.2 4.5 6.7-1.7 4.7-9.2 9.3-9.2 9.3z',
  bookmark: 'M18 21l-6-4.5L6 21V5a2 2 0 0 1 2-2h8a2 2 0 0 1 2 2z',
  lock: 'M6 11h12v10H6zM8.5 11V7.5a3.5 3.5 0 0 1 7 0V11',
  at: 'M16 12a4 4 0 1 1-8 0 4 4 0 0 1 8 0zM16 8v5a3 3 0 0 0 6 0v-1a10 10 0 1 0-3.9 7.9',
  follow: 'M15 20v-1.5a4 4 0 0 0-4-4H6a4 4 0 0 0-4 4V20M8.5 4a3.5 3.5 0 1 0 0 7 3.5 3.5 0 1 0 0-7zM19 8v6M16 11h6',
  home: 'M3 11l9-8 9 8M5.5 9.5V21h5v-6h3v6h5V9.5',
  bell: 'M18 9a6 6 0 0 0-12 0c0 7-3 8.5-3 8.5h18S18 16 18 9M13.7 21a2 2 0 0 1-3.4 0',
  search: 'M11 4a7 7 0 1 0 0 14 7 7 0 1 0 0-14zM21 21l-4.6-4.6',
  list: 'M8 6h13M8 12h13M8 18h13M3.5 6h.01M3.5 12h.01M3.5 18h.01',
  user: 'M20 21v-1.5a4 4 0 0 0-4-4H8a4 4 0 0 0-4 4V21M12 3.5a4 4 0 1 0 0 8 4 4 0 1 0 0-8z',
  settings: 'M4 21v-7M4 10V3M12 21v-9M12 8V3M20 21v-5M20 12V3M1 14h6M9 8h6M17 16h6',
};

/** Who may see a limited post, as its label and its longer explanation. */
export const visibilityLabels: Record<Exclude<Visibility, 'PUBLIC'>, { label: string; title: string }> = {
  FOLLOWERS: { label: 'Followers only', title: 'Only the author’s followers can see this post' },
  MENTIONED: { label: 'Mentioned only', title: 'Only the accounts this post mentions can see it' },
};

// The server's mention rule (src/records/mentions.ts): `@` not inside a word or an e-mail address;
// and its tag rule (src/records/tags.ts): `#` not after a letter, digit, `#`, `&` or `/`.
const linkPattern = /(?<![a-z0-9_@])@([a-z0-9_]+)(?![a-z0-9_@])|(?<![\p{L}\p{M}\p{N}_#&/])#([\p{L}\p{M}\p{N}_]+)/giu;

/**
 * A post's text, its `@handle`s of existing accounts (the API's `mentions`) as profile links and
 * its tags (the API's `tags`, normalised as the server does) as links to their tag pages.
 */
export function textHtml(text: string, mentions: readonly Pick<Author, 'handle'>[], tags: readonly string[] = []): string {
  const known = new Set(mentions.map((user) => user.handle));
  const tagged = new Set(tags);
  let html = '';
  let from = 0;
  for (const match of text.matchAll(linkPattern)) {
    let link: string;
    if (match[1] !== undefined) {
      const handle = match[1].toLowerCase();
      if (!known.has(handle)) continue;
      link = `<a href="#/u/${encodeURIComponent(handle)}" class="mention" data-testid="mention">@${escape(match[1])}</a>`;
    } else {
      const tag = match[2]!.normalize('NFKC').toLowerCase();
      if (!tagged.has(tag)) continue;
      link = `<a href="#/tag/${encodeURIComponent(tag)}" class="tag" data-testid="tag-link">#${escape(match[2]!)}</a>`;
    }
    html += `${escape(text.slice(from, match.index))}${link}`;
    from = match.index + match[0].length;
  }
  return html + escape(text.slice(from));
}

export const stateBox = (kind: 'loading' | 'empty' | 'error', text: string, retry = false) =>
  `<div class="state ${kind}" data-testid="${kind}"${kind === 'error' ? ' role="alert"' : ''}>${text}${retry ? ' <button class="quiet small" data-retry>Try again</button>' : ''}</div>`;

export interface PostOptions {
  me: string;
  /** Posts whose Delete was clicked: they show the confirmation instead of the actions. */
  confirming: ReadonlySet<string>;
  /** The thread's main post is larger and does not link to itself. */
  focus?: boolean;
}

export function postHtml(edge: { node: Post; repostedBy?: Edge['repostedBy'] }, options: PostOptions): string {
  const post: Post = edge.node;
  const mine = post.author.handle === options.me;
  const thread = `#/p/${encodeURIComponent(post.id)}`;
  const when = `<time datetime="${escape(post.createdAt)}" data-at title="${escape(new Date(post.createdAt).toLocaleString())}">${relativeTime(post.createdAt)}</time>`;
  const confirming = options.confirming.has(post.id);
  const id = escape(post.id);
  // Only public posts can be reposted (the API answers FORBIDDEN), and never one's own.
  const repostBlocked = mine ? ' disabled title="Your own post"' : post.visibility !== 'PUBLIC' ? ' disabled title="Only public posts can be reposted"' : '';
  const actions = confirming
    ? `<div class="confirm" role="group" aria-label="Confirm delete">
        <span>Delete this post for everyone?</span>
        <button class="danger" data-action="confirm-delete" data-id="${id}" data-testid="confirm-delete">Delete</button>
        <button class="quiet" data-action="cancel-delete" data-id="${id}" data-testid="cancel-delete">Cancel</button>
      </div>`
    : `<div class="actions">
        <button class="action" data-action="reply" data-id="${id}" data-testid="reply" aria-label="Reply, ${plural(post.replyCount, 'reply', 'replies')}">${icon(icons.reply)}<span class="n">${post.replyCount}</span></button>
        <button class="action${post.viewerHasReposted ? ' on' : ''}" data-action="${post.viewerHasReposted ? 'undo-repost' : 'repost'}" data-id="${id}" data-testid="repost"
          aria-pressed="${post.viewerHasReposted}" aria-label="Repost, ${plural(post.repostCount, 'repost')}"${repostBlocked}>${icon(icons.repost)}<span class="n">${post.repostCount}</span></button>
        <button class="action${post.viewerHasLiked ? ' on' : ''}" data-action="${post.viewerHasLiked ? 'unlike' : 'like'}" data-id="${id}" data-testid="like"
          aria-pressed="${post.viewerHasLiked}" aria-label="Like, ${plural(post.likeCount, 'like')}">${icon(icons.like, post.viewerHasLiked)}<span class="n">${post.likeCount}</span></button>
        <button class="action${post.viewerHasBookmarked ? ' on' : ''}" data-action="${post.viewerHasBookmarked ? 'unbookmark' : 'bookmark'}" data-id="${id}" data-testid="bookmark"
          aria-pressed="${post.viewerHasBookmarked}" aria-label="Bookmark" title="${post.viewerHasBookmarked ? 'Remove from bookmarks' : 'Bookmark'}">${icon(icons.bookmark, post.viewerHasBookmarked)}</button>
        ${conversationActions(post, mine)}
        ${mine ? `<button class="link" data-action="delete" data-id="${id}" data-testid="delete">Delete</button>` : ''}
      </div>`;
  const limited = post.visibility === 'PUBLIC' ? null : visibilityLabels[post.visibility];
  return `<article class="post${options.focus ? ' focus' : ''}" data-testid="post" data-id="${id}">
    ${edge.repostedBy ? `<div class="reposted" data-testid="reposted-by">${icon(icons.repost)} ${profileLink(edge.repostedBy, escape(nameOf(edge.repostedBy)))} reposted</div>` : ''}
    <div class="row">
      ${profileLink(post.author, avatar(post.author), 'avatar-link" tabindex="-1')}
      <div class="body">
        <div class="meta">
          ${profileLink(post.author, escape(nameOf(post.author)), 'name')}
          <span class="handle">@${escape(post.author.handle)}</span>
          <span aria-hidden="true">·</span>
          ${options.focus ? when : `<a href="${thread}" class="when" data-testid="open-thread">${when}</a>`}
          ${limited ? `<span class="visibility" data-testid="visibility" title="${limited.title}">${icon(post.visibility === 'MENTIONED' ? icons.at : icons.lock)}${limited.label}</span>` : ''}
          ${post.editedAt ? `<button class="link edited" data-action="history" data-id="${id}" data-testid="edited" title="Edited ${escape(new Date(post.editedAt).toLocaleString())}: show earlier versions">edited</button>` : ''}
          ${post.pinned ? '<span class="pinned" data-testid="pinned-badge">Pinned</span>' : ''}
        </div>
        ${post.replyTo ? `<div class="replying" data-testid="replying-to">replying to <a href="#/p/${encodeURIComponent(post.replyTo.id)}">@${escape(post.replyTo.author.handle)}</a></div>` : ''}
        ${post.text ? `<p class="text" data-testid="text">${textHtml(post.text, post.mentions, post.tags)}</p>` : ''}
        ${mediaHtml(post.media ?? [])}
        ${quotedHtml(post)}
        <ol class="edit-history" data-testid="edit-history" hidden></ol>
        ${actions}
      </div>
    </div>
  </article>`;
}

/** The post a quote shows, as a card: the quoted author and text as they are now, or a note when it is gone or hidden. */
function quotedHtml(post: Post): string {
  if (!post.quoted) return '';
  const quoted = post.quoted;
  return `<blockquote class="quoted" data-testid="quoted-card">
    <div class="meta">${profileLink(quoted.author, escape(nameOf(quoted.author)), 'name')} <span class="handle">@${escape(quoted.author.handle)}</span></div>
    ${quoted.text ? `<p class="text" data-testid="quoted-text">${escape(quoted.text)}</p>` : ''}
    ${mediaHtml(quoted.media ?? [])}
    <a href="#/p/${encodeURIComponent(quoted.id)}" data-testid="open-quoted">Open the quoted post</a>
  </blockquote>`;
}

/** Quote (public posts only, as the API allows), and for one's own posts edit and pin. */
function conversationActions(post: Post, mine: boolean): string {
  const id = escape(post.id);
  const quote =
    post.visibility === 'PUBLIC'
      ? `<button class="link" data-action="quote" data-id="${id}" data-testid="quote" aria-label="Quote, ${plural(post.quoteCount, 'quote')}">Quote${post.quoteCount ? ` (${post.quoteCount})` : ''}</button>`
      : '';
  if (!mine) return quote;
  return `${quote}
    <button class="link" data-action="edit" data-id="${id}" data-testid="edit">Edit</button>
    <button class="link" data-action="${post.pinned ? 'unpin' : 'pin'}" data-id="${id}" data-testid="${post.pinned ? 'unpin' : 'pin'}">${post.pinned ? 'Unpin' : 'Pin'}</button>`;
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

const placeholders = new Map<string, string>();

/** A blurhash as a small PNG data URL, shown behind an image until it has loaded (decoded once per hash). */
export function placeholder(blurhash: string): string {
  let url = placeholders.get(blurhash);
  if (url === undefined) {
    url = '';
    try {
      const pixels = decode(blurhash, 32, 32);
      const canvas = document.createElement('canvas');
      canvas.width = 32;
      canvas.height = 32;
      const context = canvas.getContext('2d')!;
      const image = context.createImageData(32, 32);
      image.data.set(pixels);
      context.putImageData(image, 0, 0);
      url = canvas.toDataURL();
    } catch {
      // A hash this page cannot read shows a plain background instead.
    }
    placeholders.set(blurhash, url);
  }
  return url;
}

/**
 * A post's images: each preview with its alt text as `alt` (and a visible ALT badge that shows
 * it), the blurhash behind it while it loads, and a button that opens the full size.
 */
export function mediaHtml(media: readonly Media[]): string {
  if (media.length === 0) return '';
  const items = media.map((image, index) => {
    const blur = placeholder(image.blurhash);
    const alt = image.alt ?? '';
    return `<figure class="media-item" data-testid="media">
      <button type="button" class="media-open" data-action="open-media" data-url="${escape(image.url)}" data-alt="${escape(alt)}"
        data-width="${image.width}" data-height="${image.height}" aria-label="Open image ${index + 1} of ${media.length} full size">
        <img src="${escape(image.previewUrl)}" alt="${escape(alt)}" loading="lazy" decoding="async" width="${image.width}" height="${image.height}"
          style="${blur ? `background-image:url(${blur});` : ''}aspect-ratio:${image.width}/${image.height}" data-testid="media-image">
      </button>
      ${alt ? `<span class="alt-badge" title="${escape(alt)}" data-testid="alt-badge">ALT</span>` : ''}
    </figure>`;
  });
  return `<div class="media-grid n${media.length}" data-testid="media-grid">${items.join('')}</div>`;
}

/** Opens a post's image full size in a dialog; any click or Escape closes it. Wired once for the whole page. */
export function wireMediaViewer(): void {
  document.addEventListener('click', (event) => {
    const button = (event.target as HTMLElement).closest<HTMLButtonElement>('button[data-action="open-media"]');
    if (!button) return;
    event.preventDefault();
    const dialog = document.createElement('dialog');
    dialog.className = 'lightbox';
    dialog.dataset.testid = 'lightbox';
    const image = document.createElement('img');
    image.src = button.dataset.url!;
    image.alt = button.dataset.alt ?? '';
    image.dataset.testid = 'full-image';
    image.width = Number(button.dataset.width);
    image.height = Number(button.dataset.height);
    const caption = document.createElement('p');
    caption.textContent = button.dataset.alt || 'No description';
    dialog.append(image, caption);
    dialog.addEventListener('click', () => dialog.close());
    dialog.addEventListener('close', () => {
      dialog.remove();
      button.focus();
    });
    document.body.append(dialog);
    dialog.showModal();
  });
}
