/**
 * What every view shares: the page's fixed elements, the signed-in session's state, and the two
 * habits of every button (one request at a time, disabled meanwhile) and of every change (said to
 * screen readers).
 */
import type { ApolloClient, ObservableQuery } from '@apollo/client';
import type { Subscription } from 'rxjs';
import { errorCode, errorMessage, withEdgesOnTop, withoutPost, type Session } from './api.js';
import type { Author, Edge, NotificationEdge, TimelineData } from './operations.js';

declare global {
  interface Window {
    /** Set by the example server: where the API lives. */
    FEED_API_URL: string;
  }
}

export const apiUrl = window.FEED_API_URL;
export const pageSize = 20;
export const app = document.querySelector<HTMLElement>('#app')!;
export const nav = document.querySelector<HTMLElement>('#nav')!;
export const account = document.querySelector<HTMLElement>('#account')!;
const announcer = document.querySelector<HTMLElement>('#announce')!;

/** Says something to screen readers. */
export function announce(text: string): void {
  announcer.textContent = text;
}

/**
 * Runs `action` with `button` disabled, once at a time: a double click, or Enter pressed twice,
 * sends one request.
 */
export async function busy<T>(button: HTMLButtonElement | null, action: () => Promise<T>, label?: string): Promise<T | undefined> {
  if (button?.disabled || button?.dataset.busy) return undefined;
  const text = button?.textContent;
  if (button) {
    button.disabled = true;
    button.dataset.busy = 'yes';
    if (label) button.textContent = label;
  }
  try {
    return await action();
  } finally {
    if (button) {
      button.disabled = false;
      delete button.dataset.busy;
      if (label) button.textContent = text ?? '';
    }
  }
}

/** A signed-in session, as the views see it. */
export interface App {
  session: Session;
  client: ApolloClient;
  me: Author;
  timeline: ObservableQuery<TimelineData>;
  /** Live posts from others, newest first, waiting behind the home timeline's "N new posts" pill. */
  pending: Edge[];
  /** Posts deleted while a view shows them. */
  removed: Set<string>;
  /** Follows, mutes, blocks or filters changed: the home timeline reads again on its next showing. */
  timelineStale: boolean;
  /** The current view's re-render, for live posts. */
  onLive: () => void;
  /** The notifications view takes live notifications itself; elsewhere they only move the badge. */
  onNotification: ((edge: NotificationEdge) => void) | null;
  /** Shows the unread notifications' count in the navigation. */
  setUnread: (count: number) => void;
  /** Asks the API for the unread count again (a group that grows may or may not add one). */
  recountUnread: () => void;
  /** Posts whose Delete was clicked: they show the confirmation instead of the actions. */
  confirming: Set<string>;
  live: Subscription[];
  cleanup: () => void;
  /** Ends this session and shows the sign-in form, with `notice` above it. */
  signOut: (notice?: string) => void;
  /** Carries on as the same person with a new token (after a password change), `flash` said on the next view. */
  switchToken: (token: string, flash: string) => void;
  /** Said once by the next view that shows messages (the settings after a password change). */
  flash: string;
  /** Set while the session ends on purpose: the server closing its socket then is no expiry. */
  ending: boolean;
}

/** Writes edges on top of the cached home timeline (startCursor moves with them). */
export function showOnTop(state: App, edges: readonly Edge[]): void {
  if (!edges.length || !state.timeline.getCurrentResult().data?.timeline) return;
  state.timeline.updateQuery((previous) => ({ ...(previous as TimelineData), timeline: withEdgesOnTop((previous as TimelineData).timeline, edges) }));
}

/** A post deleted: out of every view now, and of the home timeline's cache. */
export function forget(state: App, id: string): void {
  state.removed.add(id);
  state.pending = state.pending.filter((edge) => edge.node.id !== id);
  if (state.timeline.getCurrentResult().data?.timeline) {
    state.timeline.updateQuery((previous) => ({ ...(previous as TimelineData), timeline: withoutPost((previous as TimelineData).timeline, id) }));
  }
}

/** A destructive button asks once more: its first press only turns it into `question`. */
/**
 * The parts below a paged view's head, as each view renders them: the error line (and `report`,
 * which writes it), the status box, the list (by its test id) and the sentinel that loads more.
 */
export function pagedParts(listTestId: string) {
  const find = <T extends HTMLElement = HTMLElement>(selector: string) => app.querySelector<T>(selector)!;
  const errorLine = find('[data-testid="error"]');
  return {
    list: find<HTMLOListElement>(`[data-testid="${listTestId}"]`),
    status: find('[data-testid="status"]'),
    more: find('.sentinel'),
    errorLine,
    report: (message: string) => (errorLine.textContent = message),
  };
}

export function confirmedTwice(button: HTMLButtonElement, question: string): boolean {
  if (button.dataset.confirming) return true;
  button.dataset.confirming = 'yes';
  button.textContent = question;
  button.classList.add('danger');
  return false;
}

/** What is wrong with `input`, on its error line and to assistive technology; '' clears both. */
export function showFieldError(input: Element, line: Element, message: string): void {
  line.textContent = message;
  input.setAttribute('aria-invalid', String(Boolean(message)));
}

/**
 * Follows a view's query: `show` gets what `pick` finds in each answer, `missing` runs when the API
 * answers null (unknown, or not the viewer's), and a failure with nothing to show goes to `failed`.
 * UNAUTHENTICATED is left alone: the session is ending, and the sign-in form is on its way.
 */
export function watchView<TData, T>(
  query: ObservableQuery<TData, any>,
  pick: (data: TData) => T | null | undefined,
  view: { show: (value: T) => void; missing?: () => void; failed: (message: string) => void },
): Subscription {
  return query.subscribe({
    next: ({ data, error }) => {
      const value = data ? pick(data as TData) : undefined;
      if (error && !value) {
        if (errorCode(error) !== 'UNAUTHENTICATED') view.failed(errorMessage(error));
        return;
      }
      if (value === null) view.missing?.();
      else if (value !== undefined) view.show(value);
    },
  });
}

/** The "Older …" button (`data-testid="older"`) that `box` shows pages `query` on from `endCursor()`. */
export function wireOlder(box: HTMLElement, query: ObservableQuery<any, any>, endCursor: () => string | null | undefined, report: (message: string) => void): void {
  box.addEventListener('click', (event) => {
    const button = (event.target as HTMLElement).closest<HTMLButtonElement>('[data-testid="older"]');
    const after = endCursor();
    if (!button || !after) return;
    void busy(button, () => query.fetchMore({ variables: { after } }).catch((error: unknown) => report(errorMessage(error))), 'Loading…');
  });
}
