/** Signing in and signing up: one form, field errors that say what to type instead. */
import { anonymousClient, errorCode, errorMessage } from '../api.js';
import { LOG_IN, SIGN_UP, type Author } from '../operations.js';
import { account, apiUrl, app, busy, nav, showFieldError } from '../shell.js';
import { escape } from '../ui.js';

export const tokenKey = 'feed.token';
export const handleKey = 'feed.handle';
const handlePattern = /^[a-z0-9_]{3,30}$/;

type Mode = 'signIn' | 'signUp';

export interface SignInOptions {
  notice?: string;
  handle?: string;
  mode?: Mode;
}

export function showSignIn(options: SignInOptions, signedIn: (token: string, user: Author) => void): void {
  let mode: Mode = options.mode ?? 'signIn';
  nav.innerHTML = '';
  account.innerHTML = '';
  app.innerHTML = `
    <section class="card auth">
      <div class="tabs" role="tablist">
        <button role="tab" class="tab" data-mode="signIn" data-testid="tab-sign-in">Sign in</button>
        <button role="tab" class="tab" data-mode="signUp" data-testid="tab-sign-up">Create account</button>
      </div>
      ${options.notice ? `<p class="notice" role="status" data-testid="notice">${escape(options.notice)}</p>` : ''}
      <form id="auth" data-testid="sign-in" novalidate>
        <label for="handle">Handle</label>
        <input id="handle" name="handle" autocomplete="username" autocapitalize="none" spellcheck="false" aria-describedby="handle-hint handle-error" value="${escape(options.handle ?? '')}" />
        <p class="hint" id="handle-hint">3–30 characters: lowercase a–z, 0–9 and _</p>
        <p class="field-error" id="handle-error" data-testid="handle-error"></p>
        <div class="signup-only">
          <label for="displayName">Display name <span class="optional">(optional)</span></label>
          <input id="displayName" name="displayName" autocomplete="name" maxlength="50" aria-describedby="displayName-error" />
          <p class="field-error" id="displayName-error" data-testid="displayName-error"></p>
        </div>
        <label for="password">Password</label>
        <input id="password" name="password" type="password" aria-describedby="password-hint password-error" />
        <p class="hint signup-only" id="password-hint">At least 8 characters</p>
        <p class="field-error" id="password-error" data-testid="password-error"></p>
        <p class="form-error" role="alert" data-testid="form-error"></p>
        <button type="submit" id="submit" data-testid="submit"></button>
      </form>
    </section>`;
  const form = app.querySelector<HTMLFormElement>('#auth')!;
  const submit = form.querySelector<HTMLButtonElement>('#submit')!;
  const fields = ['handle', 'displayName', 'password'] as const;
  type Field = (typeof fields)[number];
  const input = (field: Field) => form.querySelector<HTMLInputElement>(`#${field}`)!;
  const setMode = (next: Mode) => {
    mode = next;
    form.classList.toggle('signing-up', mode === 'signUp');
    for (const tab of app.querySelectorAll<HTMLButtonElement>('.tab')) tab.setAttribute('aria-selected', String(tab.dataset.mode === mode));
    submit.textContent = mode === 'signUp' ? 'Create account' : 'Sign in';
    input('password').autocomplete = mode === 'signUp' ? 'new-password' : 'current-password';
    clearErrors();
  };
  const clearErrors = () => {
    for (const field of fields) showError(field, '');
    form.querySelector('.form-error')!.textContent = '';
  };
  const showError = (field: Field, message: string) => showFieldError(input(field), form.querySelector(`#${field}-error`)!, message);
  for (const tab of app.querySelectorAll<HTMLButtonElement>('.tab')) tab.addEventListener('click', () => setMode(tab.dataset.mode as Mode));
  for (const field of fields) input(field).addEventListener('input', () => showError(field, ''));
  setMode(mode);
  (options.handle ? input('password') : input('handle')).focus();

  /** What is wrong with the handle, said so that a person knows what to type instead. */
  const handleProblem = (handle: string): string => {
    if (!handle) return 'Enter a handle.';
    if (handlePattern.test(handle)) return '';
    const lower = handle.toLowerCase();
    if (/[A-Z]/.test(handle) && handlePattern.test(lower)) return `Handles are lowercase: use “${lower}”.`;
    if (/[A-Z]/.test(handle)) return 'Handles are lowercase. Use 3–30 characters of a–z, 0–9 and _.';
    if (/[^a-z0-9_]/.test(handle)) {
      const bad = [...new Set(handle.replace(/[a-z0-9_]/g, ''))].map((c) => (c === ' ' ? 'spaces' : `“${c}”`)).join(', ');
      return `Only a–z, 0–9 and _ are allowed, not ${bad}.`;
    }
    return handle.length < 3 ? `Too short: at least 3 characters (you have ${handle.length}).` : `Too long: at most 30 characters (you have ${handle.length}).`;
  };

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    clearErrors();
    const handle = input('handle').value.trim().replace(/^@/, '');
    const password = input('password').value;
    const displayName = input('displayName').value.trim();
    if (mode === 'signUp') {
      const problems: [Field, string][] = [
        ['handle', handleProblem(handle)],
        ['password', password.length < 8 ? `Too short: at least 8 characters (you have ${password.length}).` : ''],
      ];
      const first = problems.find(([, problem]) => problem);
      for (const [field, problem] of problems) showError(field, problem);
      if (first) return input(first[0]).focus();
    } else {
      if (!handle) return (showError('handle', 'Enter your handle.'), input('handle').focus());
      if (/[A-Z]/.test(handle)) return (showError('handle', handleProblem(handle)), input('handle').focus());
      if (!password) return (showError('password', 'Enter your password.'), input('password').focus());
    }
    void busy(submit, async () => {
      const anonymous = anonymousClient(apiUrl);
      try {
        const session =
          mode === 'signUp'
            ? (await anonymous.mutate({ mutation: SIGN_UP, variables: { handle, password, displayName: displayName || null } })).data?.signUp
            : (await anonymous.mutate({ mutation: LOG_IN, variables: { handle, password } })).data?.logIn;
        if (!session) throw new Error('The server answered without a session; try again.');
        localStorage.setItem(tokenKey, session.token);
        localStorage.setItem(handleKey, session.user.handle);
        signedIn(session.token, session.user);
      } catch (error) {
        // Say which field to fix; keep what was typed.
        const message = errorMessage(error);
        const code = errorCode(error);
        if (code === 'CONFLICT') showError('handle', `${message}. Try another handle.`);
        else if (/^Handle/i.test(message)) showError('handle', message);
        else if (/^Password/i.test(message)) showError('password', message);
        else if (/^Display name/i.test(message)) showError('displayName', message);
        else form.querySelector('.form-error')!.textContent = message;
        const invalid = form.querySelector<HTMLInputElement>('[aria-invalid="true"]');
        (invalid ?? (code === 'UNAUTHENTICATED' ? input('password') : null))?.focus();
      } finally {
        anonymous.stop();
      }
    }, mode === 'signUp' ? 'Creating account…' : 'Signing in…');
  });
}
