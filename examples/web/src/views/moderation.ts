/**
 * Locked accounts, follow requests, reports and the staff page: the lock switch (in settings), the
 * requests page (#/requests), the Report form (on profiles and posts) and the open reports with
 * their three actions (#/staff, staff only).
 */
import { errorCode, errorMessage } from '../api.js';
import { APPROVE_REQUEST, FOLLOW_REQUESTS, OPEN_REPORTS, REJECT_REQUEST, REPORT, RESOLVE_REPORT, SET_LOCKED, VIEWER_LOCKED } from '../moderationOperations.js';
import { announce, app, busy, confirmedTwice, type App } from '../shell.js';
import { escape, personHtml, stateBox } from '../ui.js';

const reasons = [
  ['SPAM', 'Spam'],
  ['ABUSE', 'Abuse or harassment'],
  ['ILLEGAL', 'Illegal content'],
  ['OTHER', 'Something else'],
] as const;

/** The settings section with the lock switch and the way to one's requests. */
export const lockSectionHtml = `
  <section class="card settings" aria-labelledby="privacy-title">
    <h2 id="privacy-title">Who can follow you</h2>
    <label class="switch"><input type="checkbox" data-testid="lock-switch" /> Approve followers (locked account)</label>
    <p class="hint">While locked, a follow is a request you approve or reject; unlocking approves every waiting request.</p>
    <p class="hint"><a href="#/requests" data-testid="requests-link">Follow requests</a> · <a href="#/staff" data-testid="staff-link">Reports (staff)</a></p>
    <p class="hint" role="status" data-testid="lock-status"></p>
  </section>`;

export function wireLockSwitch(state: App, root: HTMLElement): void {
  const box = root.querySelector<HTMLInputElement>('[data-testid="lock-switch"]')!;
  const status = root.querySelector<HTMLElement>('[data-testid="lock-status"]')!;
  void state.client
    .query({ query: VIEWER_LOCKED, fetchPolicy: 'network-only' })
    .then(({ data }) => (box.checked = data?.viewer?.locked === true))
    .catch(() => {});
  box.addEventListener('change', async () => {
    box.disabled = true;
    try {
      const { data } = await state.client.mutate({ mutation: SET_LOCKED, variables: { locked: box.checked } });
      status.textContent = data?.updateProfile.locked ? 'Your account is locked: you approve new followers.' : 'Your account is open: anyone can follow you.';
      announce(status.textContent);
    } catch (error) {
      box.checked = !box.checked;
      status.textContent = errorMessage(error);
    } finally {
      box.disabled = false;
    }
  });
}

/** A Report form: reason, an optional comment, and what came of it. */
export function reportFormHtml(what: string): string {
  return `<form class="inline-form report-form" data-testid="report-form">
      <label for="report-reason">Report ${escape(what)}</label>
      <select id="report-reason" data-testid="report-reason">${reasons.map(([value, label]) => `<option value="${value}">${label}</option>`).join('')}</select>
      <input maxlength="1000" placeholder="What is wrong (optional)" aria-label="Comment" data-testid="report-comment" />
      <button class="quiet small danger-text" data-testid="report-button">Report</button>
      <span class="hint" role="status" data-testid="report-status"></span>
    </form>`;
}

export function wireReportForm(state: App, root: HTMLElement, target: () => { handle: string; postId: string | null } | null): void {
  root.addEventListener('submit', (event) => {
    const form = (event.target as HTMLElement).closest<HTMLFormElement>('[data-testid="report-form"]');
    const chosen = target();
    if (!form || !chosen) return;
    event.preventDefault();
    const status = form.querySelector<HTMLElement>('[data-testid="report-status"]')!;
    const reason = form.querySelector<HTMLSelectElement>('[data-testid="report-reason"]')!.value as (typeof reasons)[number][0];
    const comment = form.querySelector<HTMLInputElement>('[data-testid="report-comment"]')!.value;
    void busy(form.querySelector('button'), async () => {
      status.textContent = '';
      try {
        await state.client.mutate({ mutation: REPORT, variables: { ...chosen, reason, comment: comment || null } });
        status.textContent = 'Reported. Thank you: staff will look at it.';
        announce(status.textContent);
      } catch (error) {
        status.textContent = errorMessage(error);
      }
    });
  });
}

/** #/requests: who asks to follow the viewer, oldest first, with Approve and Reject. */
export function showRequests(state: App): () => void {
  document.title = 'Follow requests · Feed';
  app.innerHTML = `<h2 class="page-title">Follow requests</h2>
    <p class="form-error" role="alert" data-testid="error"></p>
    <div data-testid="requests">${stateBox('loading', 'Loading requests…')}</div>`;
  const box = app.querySelector<HTMLElement>('[data-testid="requests"]')!;
  const load = async () => {
    try {
      const { data } = await state.client.query({ query: FOLLOW_REQUESTS, variables: { first: 50 }, fetchPolicy: 'network-only' });
      const people = data?.followRequests.edges.map((edge) => edge.node) ?? [];
      box.innerHTML = people.length
        ? `<ul class="people">${people
            .map(
              (person) =>
                `<li data-testid="request" data-handle="${escape(person.handle)}">${personHtml(
                  person,
                  '',
                  `<button class="small" data-decide="approve" data-testid="approve">Approve</button><button class="quiet small" data-decide="reject" data-testid="reject">Reject</button>`,
                )}</li>`,
            )
            .join('')}</ul>`
        : stateBox('empty', 'No one is waiting for your approval.');
    } catch (error) {
      box.innerHTML = stateBox('error', `Couldn’t load your requests: ${escape(errorMessage(error))}`);
    }
  };
  box.addEventListener('click', (event) => {
    const button = (event.target as HTMLElement).closest<HTMLButtonElement>('button[data-decide]');
    const handle = button?.closest<HTMLElement>('[data-handle]')?.dataset.handle;
    if (!button || !handle) return;
    void busy(button, async () => {
      try {
        await state.client.mutate({ mutation: button.dataset.decide === 'approve' ? APPROVE_REQUEST : REJECT_REQUEST, variables: { handle } });
        announce(button.dataset.decide === 'approve' ? `@${handle} follows you now.` : `Request of @${handle} rejected.`);
        await load();
      } catch (error) {
        app.querySelector('[data-testid="error"]')!.textContent = errorMessage(error);
      }
    });
  });
  void load();
  return () => {};
}

/** #/staff: the open reports, oldest first, with the three actions. */
export function showStaff(state: App): () => void {
  document.title = 'Reports · Feed';
  app.innerHTML = `<h2 class="page-title">Open reports</h2>
    <p class="form-error" role="alert" data-testid="error"></p>
    <div data-testid="reports">${stateBox('loading', 'Loading reports…')}</div>`;
  const box = app.querySelector<HTMLElement>('[data-testid="reports"]')!;
  const load = async () => {
    try {
      const { data } = await state.client.query({ query: OPEN_REPORTS, variables: { first: 50 }, fetchPolicy: 'network-only' });
      const reports = data?.reports.edges.map((edge) => edge.node) ?? [];
      box.innerHTML = reports.length
        ? `<ul class="reports">${reports
            .map(
              (report) => `<li class="card" data-testid="report" data-id="${escape(report.id)}">
                <p><strong data-testid="report-reason">${escape(report.reason)}</strong> against <a href="#/u/${encodeURIComponent(report.account.handle)}">@${escape(report.account.handle)}</a>
                  by @${escape(report.reporter?.handle ?? '?')}</p>
                ${report.post ? `<blockquote data-testid="report-post">${escape(report.post.text)}</blockquote>` : ''}
                ${report.comment ? `<p class="hint" data-testid="report-comment">${escape(report.comment)}</p>` : ''}
                <div class="relations">
                  <button class="quiet small" data-action="DISMISS" data-testid="dismiss">Dismiss</button>
                  ${report.post ? '<button class="quiet small danger-text" data-action="REMOVE_POST" data-testid="remove-post">Remove post</button>' : ''}
                  <button class="quiet small danger-text" data-action="SUSPEND_ACCOUNT" data-testid="suspend">Suspend account</button>
                </div>
              </li>`,
            )
            .join('')}</ul>`
        : stateBox('empty', 'No open reports.');
    } catch (error) {
      box.innerHTML =
        errorCode(error) === 'FORBIDDEN' ? stateBox('empty', 'Only staff can see reports.') : stateBox('error', `Couldn’t load reports: ${escape(errorMessage(error))}`);
    }
  };
  box.addEventListener('click', (event) => {
    const button = (event.target as HTMLElement).closest<HTMLButtonElement>('button[data-action]');
    const id = button?.closest<HTMLElement>('[data-id]')?.dataset.id;
    if (!button || !id) return;
    const action = button.dataset.action as 'DISMISS' | 'REMOVE_POST' | 'SUSPEND_ACCOUNT';
    if (action !== 'DISMISS' && !confirmedTwice(button, 'Sure? Click again')) return;
    void busy(button, async () => {
      try {
        await state.client.mutate({ mutation: RESOLVE_REPORT, variables: { id, action } });
        announce('Report resolved.');
        await load();
      } catch (error) {
        app.querySelector('[data-testid="error"]')!.textContent = errorMessage(error);
      }
    });
  });
  void load();
  return () => {};
}
