/**
 * auth/ owns who a request speaks for: sign-up, log-in and account deletion (AccountService),
 * passwords, signed tokens (TokenService), the deployment's stored token secret, and the rate
 * limits counted in MongoDB.
 */
import { AppError, badInput } from '../errors.js';
import type { UserAccounts } from '../graph/userAccounts.js';
import type { UserDirectory } from '../graph/userDirectory.js';
import type { UserGraphService } from '../graph/userGraphService.js';
import { assertHandle, handlePattern } from '../records/users.js';
import { displayNameOrNull } from './profileRules.js';
import type { Session } from '../records/users.js';
import { decoyPasswordHash, hashPassword, needsRehash, verifyPassword } from './passwords.js';
import type { RateLimits } from './rateLimits.js';
import type { TokenService } from './tokens.js';
import type { Scope } from '../observability/requestScope.js';

export const minPasswordLength = 8;
// Hashing costs grow with input; an upper bound keeps a huge "password" from being a cheap DoS.
export const maxPasswordLength = 200;

export class AccountService {
  constructor(
    private readonly graph: Pick<UserGraphService, 'createUser'>,
    private readonly users: Pick<UserDirectory, 'getUser'>,
    private readonly accounts: UserAccounts,
    private readonly tokens: TokenService,
    private readonly rateLimits: RateLimits,
    private readonly removal: { remove(handle: string, accountId: string, scope: Scope): Promise<void> },
  ) {}

  async signUp(input: { handle: string; password: string; displayName?: string | null }, clientAddress: string, scope: Scope): Promise<Session> {
    // Bad input is refused before it counts against the address's sign-ups.
    assertHandle(input.handle);
    assertPassword(input.password);
    const displayName = displayNameOrNull(input.displayName ?? '');
    await this.rateLimits.signUp(clientAddress, scope);
    const user = await this.graph.createUser({
      handle: input.handle,
      displayName,
      passwordHash: await hashPassword(input.password),
    });
    return { token: await this.tokenFor(user.handle), user };
  }

  /** Unknown handle and wrong password fail alike, in message and in time. */
  async logIn(input: { handle: string; password: string }, clientAddress: string, scope: Scope): Promise<Session> {
    await this.rateLimits.assertLoginAllowed(input.handle, clientAddress, scope);
    const credentials = handlePattern.test(input.handle) ? await this.accounts.getCredentials(input.handle) : null;
    const matches = await verifyPassword(input.password.slice(0, maxPasswordLength + 1), credentials?.passwordHash ?? decoyPasswordHash);
    const user = matches && credentials ? await this.users.getUser(input.handle) : null;
    // Told only to whoever knows the password: to anyone else a suspended account is a wrong log-in.
    if (matches && credentials?.suspended) throw new AppError('ACCOUNT_SUSPENDED', 'This account is suspended by the service\'s staff');
    if (!user) {
      await this.rateLimits.loginFailed(input.handle, clientAddress, scope);
      throw new AppError('UNAUTHENTICATED', 'Wrong handle or password');
    }
    await this.rateLimits.loginSucceeded(input.handle);
    // A hash of an older scheme or cost is replaced now: only a log-in has the password to hash again.
    if (credentials && needsRehash(credentials.passwordHash)) {
      await this.accounts.upgradePasswordHash(input.handle, credentials.passwordHash, await hashPassword(input.password.slice(0, maxPasswordLength + 1)));
    }
    return { token: await this.tokenFor(user.handle), user };
  }

  /**
   * Deletes the signed-in account once its password is confirmed (see AccountRemoval). Wrong
   * passwords count against the same limits as failed log-ins.
   */
  async deleteAccount(handle: string, password: string, clientAddress: string, scope: Scope): Promise<boolean> {
    await this.rateLimits.assertLoginAllowed(handle, clientAddress, scope);
    const credentials = await this.accounts.getCredentials(handle);
    const matches = credentials && (await verifyPassword(password.slice(0, maxPasswordLength + 1), credentials.passwordHash));
    if (!matches || !credentials.accountId) {
      await this.rateLimits.loginFailed(handle, clientAddress, scope);
      throw new AppError('FORBIDDEN', 'Wrong password: the account is not deleted');
    }
    await this.removal.remove(handle, credentials.accountId, scope);
    return true;
  }

  /** A token for an existing account (also for tools that create users directly, such as the benchmarks). */
  async tokenFor(handle: string): Promise<string> {
    const identity = await this.accounts.tokenIdentity(handle);
    if (!identity) throw new AppError('UNAUTHENTICATED', `No account "${handle}"`);
    return this.tokens.issue({ handle, ...identity });
  }

  /**
   * The handle a request's Authorization speaks for: null without one, `not-bearer` when it is not
   * `Bearer <token>` (a bare token, say), `invalid` for a forged, expired or foreign token, or one
   * whose account no longer exists (or was re-created under the same handle), or whose generation
   * was revoked (a password change, logging out everywhere). One held `users` lookup per signed-in
   * request.
   */
  async authenticate(authorization: unknown): Promise<string | null | 'not-bearer' | 'invalid'> {
    const account = await this.authenticateAccount(authorization);
    return typeof account === 'object' && account !== null ? account.handle : account;
  }

  /** As `authenticate`, with the account's id, which request log lines name instead of the handle. */
  async authenticateAccount(authorization: unknown): Promise<{ handle: string; accountId: string } | null | 'not-bearer' | 'invalid'> {
    const subject = await this.tokens.fromAuthorization(authorization);
    if (subject === 'missing') return null;
    if (subject === 'invalid' || subject === 'not-bearer') return subject;
    return (await this.accounts.accountExists(subject.handle, subject.accountId, subject.generation))
      ? { handle: subject.handle, accountId: subject.accountId }
      : 'invalid';
  }
}

export function assertPassword(password: string): void {
  if (password.length < minPasswordLength || password.length > maxPasswordLength) {
    throw badInput(`Password must be ${minPasswordLength} to ${maxPasswordLength} characters`);
  }
  // Hashed as UTF-8, where every lone half becomes U+FFFD: any other half would match it.
  if (/\p{Cs}/u.test(password)) throw badInput('Password must be valid Unicode: it holds half of a surrogate pair');
}
