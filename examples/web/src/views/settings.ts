/** Settings: one's profile, keyword filters, password, and signing out on every device. */
import { errorCode, errorMessage } from '../api.js';
import { ADD_FILTER, CHANGE_PASSWORD, FILTERS, LOG_OUT_EVERYWHERE, MY_PROFILE, REMOVE_FILTER, UPDATE_PROFILE, type Author } from '../operations.js';
import { announce, app, busy, confirmedTwice, showFieldError, watchView, type App } from '../shell.js';
import { escape, plural, stateBox } from '../ui.js';
import { lockSectionHtml, wireLockSwitch } from './moderation.js';

const maxBioLength = 300;

export function showSettings(state: App): () => void {
  document.title = 'Settings · Feed';
  app.innerHTML = `
    ${state.flash ? `<p class="notice" role="status" data-testid="flash">${escape(state.flash)}</p>` : ''}
    <section class="card settings" aria-labelledby="profile-title">
      <h2 id="profile-title">Profile</h2>
      <form id="profile-form" class="stacked" data-testid="profile-form" novalidate>
        <label for="displayName">Display name</label>
        <input id="displayName" name="displayName" autocomplete="name" aria-describedby="displayName-error" data-testid="display-name" />
        <p class="field-error" id="displayName-error" data-testid="displayName-error"></p>
        <label for="bio">Bio</label>
        <textarea id="bio" name="bio" rows="3" aria-describedby="bio-counter bio-error" data-testid="bio-input"></textarea>
        <p class="hint" id="bio-counter" data-testid="bio-counter">0/${maxBioLength}</p>
        <p class="field-error" id="bio-error" data-testid="bio-error"></p>
        <div class="form-bar">
          <button type="submit" data-testid="save-profile" disabled>Save profile</button>
          <span class="hint" role="status" data-testid="profile-status"></span>
        </div>
      </form>
    </section>
    <section class="card settings" aria-labelledby="filters-title">
      <h2 id="filters-title">Keyword filters</h2>
      <p class="hint">Posts containing these words or phrases (whole words, any case) stay out of your home timeline.</p>
      <form id="add-filter" class="inline-form">
        <label for="phrase" class="visually-hidden">Word or phrase to hide</label>
        <input id="phrase" name="phrase" maxlength="100" placeholder="Word or phrase to hide" data-testid="filter-phrase" />
        <button type="submit" data-testid="add-filter">Add</button>
      </form>
      <p class="form-error" role="alert" data-testid="error"></p>
      <div data-testid="filters">${stateBox('loading', 'Loading…')}</div>
    </section>
    <section class="card settings" aria-labelledby="password-title">
      <h2 id="password-title">Password</h2>
      <form id="password-form" class="stacked" data-testid="password-form" novalidate>
        <input type="text" name="username" autocomplete="username" value="${escape(state.me.handle)}" hidden />
        <label for="current-password">Current password</label>
        <input id="current-password" type="password" autocomplete="current-password" aria-describedby="current-error" />
        <p class="field-error" id="current-error" data-testid="current-error"></p>
        <label for="new-password">New password</label>
        <input id="new-password" type="password" autocomplete="new-password" aria-describedby="new-hint new-error" />
        <p class="hint" id="new-hint">At least 8 characters. Your other devices will be signed out.</p>
        <p class="field-error" id="new-error" data-testid="new-error"></p>
        <p class="form-error" role="alert" data-testid="password-error"></p>
        <div class="form-bar"><button type="submit" data-testid="change-password">Change password</button></div>
      </form>
    </section>
    <section class="card settings" aria-labelledby="sessions-title">
      <h2 id="sessions-title">Devices</h2>
      <p class="hint">Lost a phone? This signs you out on every device, this one included.</p>
      <p class="form-error" role="alert" data-testid="sessions-error"></p>
      <div class="form-bar"><button class="quiet danger-text" data-testid="log-out-everywhere">Log out everywhere</button></div>
    </section>
    ${lockSectionHtml}`;
  wireLockSwitch(state, app);
  state.flash = '';
  const stops = [profileSection(state), filtersSection(state)];
  passwordSection(state);
  sessionsSection(state);
  return () => stops.forEach((stop) => stop());
}

/** Which field an API message is about, by how the API begins it ("Display name must…", "Bio must…"). */
function fieldOf<F extends string>(message: string, fields: Record<F, RegExp>): F | undefined {
  return (Object.keys(fields) as F[]).find((field) => fields[field].test(message));
}

function profileSection(state: App): () => void {
  const form = app.querySelector<HTMLFormElement>('#profile-form')!;
  const name = form.querySelector<HTMLInputElement>('#displayName')!;
  const bio = form.querySelector<HTMLTextAreaElement>('#bio')!;
  const save = form.querySelector<HTMLButtonElement>('button[type="submit"]')!;
  const counter = form.querySelector<HTMLElement>('#bio-counter')!;
  const status = form.querySelector<HTMLElement>('[data-testid="profile-status"]')!;
  const inputs = { displayName: name, bio };
  const showError = (field: keyof typeof inputs, message: string) => showFieldError(inputs[field], form.querySelector(`#${field}-error`)!, message);
  const count = () => {
    const length = [...bio.value.trim()].length;
    counter.textContent = `${length}/${maxBioLength}`;
    counter.classList.toggle('over', length > maxBioLength);
  };
  let stopped = false;
  void state.client
    .query({ query: MY_PROFILE, fetchPolicy: 'network-only' })
    .then(({ data }) => {
      if (stopped || !data?.viewer) return;
      name.value = data.viewer.displayName ?? '';
      bio.value = data.viewer.bio ?? '';
      count();
      save.disabled = false;
    })
    .catch((error: unknown) => {
      if (!stopped && errorCode(error) !== 'UNAUTHENTICATED') status.textContent = `Couldn’t load your profile: ${errorMessage(error)}`;
    });
  bio.addEventListener('input', () => (count(), showError('bio', '')));
  name.addEventListener('input', () => showError('displayName', ''));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    showError('displayName', '');
    showError('bio', '');
    status.textContent = '';
    void busy(save, async () => {
      try {
        // A blank field clears it: the API's rule, so an emptied box means "none".
        await state.client.mutate({ mutation: UPDATE_PROFILE, variables: { displayName: name.value, bio: bio.value } });
        status.textContent = 'Saved.';
        announce('Profile saved');
      } catch (error) {
        const message = errorMessage(error);
        const field = errorCode(error) === 'BAD_USER_INPUT' ? fieldOf(message, { displayName: /^Display name/i, bio: /^Bio/i }) : undefined;
        if (field) {
          showError(field, message);
          inputs[field].focus();
        } else status.textContent = message;
      }
    }, 'Saving…');
  });
  return () => {
    stopped = true;
  };
}

function filtersSection(state: App): () => void {
  const form = app.querySelector<HTMLFormElement>('#add-filter')!;
  const box = app.querySelector<HTMLElement>('[data-testid="filters"]')!;
  const errorLine = app.querySelector<HTMLElement>('[data-testid="error"]')!;
  const query = state.client.watchQuery({
    query: FILTERS,
    fetchPolicy: 'network-only',
  });
  const watching = watchView(query, (data) => data.viewer?.keywordFilters, {
    failed: (message) => (box.innerHTML = stateBox('error', `Couldn’t load your filters: ${escape(message)}`)),
    show: (filters) => {
      box.innerHTML = filters.length
        ? `<p data-testid="filter-count">${plural(filters.length, 'filter')}</p><ul class="filters">${filters
            .map(
              (filter) =>
                `<li data-testid="filter"><span>${escape(filter.phrase)}</span><button class="quiet small" data-remove="${escape(filter.id)}" aria-label="Remove filter ${escape(filter.phrase)}">Remove</button></li>`,
            )
            .join('')}</ul>`
        : stateBox('empty', 'No filters yet.');
    },
  });
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const input = form.querySelector<HTMLInputElement>('#phrase')!;
    const phrase = input.value.trim();
    if (!phrase) {
      errorLine.textContent = 'Type a word or phrase to hide.';
      return input.focus();
    }
    void busy(form.querySelector('button'), async () => {
      errorLine.textContent = '';
      try {
        await state.client.mutate({ mutation: ADD_FILTER, variables: { phrase } });
        input.value = '';
        state.timelineStale = true;
        await query.refetch();
        announce(`Filter “${phrase}” added`);
      } catch (error) {
        errorLine.textContent = errorMessage(error);
      }
    });
  });
  box.addEventListener('click', (event) => {
    const button = (event.target as HTMLElement).closest<HTMLButtonElement>('button[data-remove]');
    if (!button) return;
    void busy(button, async () => {
      try {
        await state.client.mutate({ mutation: REMOVE_FILTER, variables: { id: button.dataset.remove! } });
        state.timelineStale = true;
        await query.refetch();
        form.querySelector<HTMLInputElement>('#phrase')!.focus();
      } catch (error) {
        errorLine.textContent = errorMessage(error);
      }
    });
  });
  return () => watching.unsubscribe();
}

function passwordSection(state: App): void {
  const form = app.querySelector<HTMLFormElement>('#password-form')!;
  const current = form.querySelector<HTMLInputElement>('#current-password')!;
  const next = form.querySelector<HTMLInputElement>('#new-password')!;
  const formError = form.querySelector<HTMLElement>('[data-testid="password-error"]')!;
  const show = (input: HTMLInputElement, line: string, message: string) => showFieldError(input, form.querySelector(`#${line}`)!, message);
  current.addEventListener('input', () => show(current, 'current-error', ''));
  next.addEventListener('input', () => show(next, 'new-error', ''));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    show(current, 'current-error', '');
    show(next, 'new-error', '');
    formError.textContent = '';
    if (!current.value) return (show(current, 'current-error', 'Enter your current password.'), current.focus());
    if (next.value.length < 8) return (show(next, 'new-error', `Too short: at least 8 characters (you have ${next.value.length}).`), next.focus());
    // The server closes this session's live connection when the password changes: that is no expiry.
    state.ending = true;
    void busy(form.querySelector<HTMLButtonElement>('button[type="submit"]'), async () => {
      try {
        const { data } = await state.client.mutate({
          mutation: CHANGE_PASSWORD,
          variables: { current: current.value, next: next.value },
        });
        state.switchToken(data!.changePassword.token, 'Password changed. Your other devices are signed out.');
      } catch (error) {
        state.ending = false;
        const code = errorCode(error);
        const message = errorMessage(error);
        if (code === 'FORBIDDEN') (show(current, 'current-error', 'That is not your current password.'), current.focus());
        else if (code === 'BAD_USER_INPUT' && /^Password/i.test(message)) (show(next, 'new-error', message), next.focus());
        else formError.textContent = message;
      }
    }, 'Changing…');
  });
}

function sessionsSection(state: App): void {
  const button = app.querySelector<HTMLButtonElement>('[data-testid="log-out-everywhere"]')!;
  const errorLine = app.querySelector<HTMLElement>('[data-testid="sessions-error"]')!;
  button.addEventListener('click', () => {
    if (!confirmedTwice(button, 'Sign out every device? Click again')) return;
    state.ending = true;
    void busy(button, async () => {
      try {
        await state.client.mutate({ mutation: LOG_OUT_EVERYWHERE });
        state.signOut('You are signed out on every device.');
      } catch (error) {
        state.ending = false;
        errorLine.textContent = errorMessage(error);
      }
    });
  });
}
