/**
 * Notifications: who followed, liked, reposted, replied or mentioned, grouped as the API groups
 * them. Opening the page marks everything shown read (the badge clears); new ones arrive on top live
 * and are marked read as they come, since the reader is looking at them.
 */
import { errorMessage } from '../api.js';
import { MARK_NOTIFICATIONS_READ, NOTIFICATIONS, type Notification, type NotificationEdge, type NotificationsData } from '../operations.js';
import { app, pageSize, pagedParts, watchView, wireOlder, type App } from '../shell.js';
import { avatar, escape, icon, icons, nameOf, profileLink, relativeTime, renderKeyed, stateBox } from '../ui.js';

const kinds = {
  FOLLOW: { icon: icons.follow, did: 'followed you' },
  LIKE: { icon: icons.like, did: 'liked your post' },
  REPOST: { icon: icons.repost, did: 'reposted your post' },
  REPLY: { icon: icons.reply, did: 'replied to your post' },
  MENTION: { icon: icons.at, did: 'mentioned you' },
  FOLLOW_REQUEST: { icon: icons.follow, did: 'asked to follow you. <a href="#/requests" data-testid="review-requests">Review requests</a>' },
  POST_REMOVED: { icon: icons.settings, did: 'removed one of your posts for breaking the rules' },
  QUOTE: { icon: icons.repost, did: 'quoted your post' },
} as const;

/** "Bea", "Bea and Cy", "Bea and 4 others": the newest actor first, as the API lists them. */
function who(notification: Notification): string {
  const [first, second] = notification.actors.map((actor) => `<strong>${profileLink(actor, escape(nameOf(actor)))}</strong>`);
  const others = notification.actorCount - 1;
  if (!first) return 'Someone';
  if (others === 0) return first;
  if (others === 1 && second) return `${first} and ${second}`;
  return `${first} and ${others.toLocaleString('en')} others`;
}

/** `isNew`: unread when the page showed it, though the cache may say read since (the page marks what it shows). */
export function notificationHtml(notification: Notification, isNew = notification.unread): string {
  const kind = kinds[notification.kind];
  const post = notification.post;
  return `<article class="notification${isNew ? ' unread' : ''}" data-testid="notification" data-kind="${notification.kind}">
    <span class="kind ${notification.kind.toLowerCase()}">${icon(kind.icon, notification.kind === 'LIKE')}</span>
    <div class="body">
      <div class="avatars">${notification.actors.slice(0, 3).map((actor) => profileLink(actor, avatar(actor), 'avatar-link" tabindex="-1')).join('')}</div>
      <p><span data-testid="notification-text">${notification.kind === 'POST_REMOVED' ? 'Staff' : who(notification)} ${kind.did}</span>
        <time class="when" datetime="${escape(notification.createdAt)}" data-at>${relativeTime(notification.createdAt)}</time>
        ${isNew ? '<span class="new-tag" data-testid="unread">New</span>' : ''}</p>
      ${post ? `<a class="snippet" href="#/p/${encodeURIComponent(post.id)}" data-testid="notification-post">${escape(post.text)}</a>` : ''}
    </div>
  </article>`;
}

export function showNotifications(state: App): () => void {
  document.title = 'Notifications · Feed';
  app.innerHTML = `
    <h2 class="page-title">Notifications</h2>
    <p class="form-error" role="alert" data-testid="error"></p>
    <div data-testid="status">${stateBox('loading', 'Loading notifications…')}</div>
    <ol class="notifications" data-testid="notifications"></ol>
    <div class="sentinel"></div>`;
  const { list, status, more, errorLine } = pagedParts('notifications');
  const query = state.client.watchQuery({ query: NOTIFICATIONS, variables: { first: pageSize }, fetchPolicy: 'network-only' });
  let page: NotificationsData['notifications'] | null = null;
  let markedUpTo = '';
  // markNotificationsRead answers the notifications it marked, and the cache applies `unread: false`
  // to them at once: what was new when it came on screen stays marked New while the page is open.
  const newWhenShown = new Set<string>();

  // The newest shown is where reading reached; the marker never moves back, so marking twice is harmless.
  const markRead = (cursor: string) => {
    if (cursor === markedUpTo) return;
    markedUpTo = cursor;
    void state.client
      .mutate({ mutation: MARK_NOTIFICATIONS_READ, variables: { upTo: cursor } })
      // The marked notifications come back with `unread: false`: the cache shows them read without a refetch.
      .then(({ data }) => state.setUnread(data?.markNotificationsRead.unreadCount ?? 0))
      .catch((error: unknown) => (errorLine.textContent = `Couldn’t mark your notifications read: ${errorMessage(error)}`));
  };

  const render = () => {
    if (!page) return;
    status.innerHTML = page.edges.length
      ? ''
      : stateBox('empty', 'Nothing yet. When someone follows you, or likes, reposts, replies to or mentions your posts, it shows here.');
    for (const { node } of page.edges) if (node.unread) newWhenShown.add(node.id);
    renderKeyed(list, page.edges.map((edge) => ({ key: edge.node.id, html: notificationHtml(edge.node, newWhenShown.has(edge.node.id)) })));
    more.innerHTML = page.pageInfo.hasNextPage ? '<button class="quiet" data-testid="older">Older notifications</button>' : '';
    if (page.edges[0]) markRead(page.edges[0].cursor);
    else state.setUnread(0);
  };

  const watching = watchView(query, (data) => data.notifications, {
    show: (notifications) => {
      page = notifications;
      render();
    },
    failed: (message) => (status.innerHTML = stateBox('error', `Couldn’t load your notifications: ${escape(message)}`)),
  });

  // A group someone joined comes again: it leaves its old place and goes on top. relayStylePagination
  // gives the first edge `startCursor` and the last `endCursor` when it stores the page, so both
  // follow the edges (alone on the page, the group is both).
  state.onNotification = (edge: NotificationEdge) => {
    if (!page) return;
    query.updateQuery((previous) => {
      const notifications = (previous as NotificationsData).notifications;
      const edges = [edge, ...notifications.edges.filter((shown) => shown.node.id !== edge.node.id)];
      return { ...(previous as NotificationsData), notifications: { ...notifications, edges, pageInfo: { ...notifications.pageInfo, startCursor: edge.cursor, endCursor: edges.at(-1)!.cursor } } };
    });
  };

  wireOlder(more, query, () => page?.pageInfo.endCursor, (message) => (errorLine.textContent = message));
  return () => {
    watching.unsubscribe();
    state.onNotification = null;
  };
}
