import { changed, type ChangePublisher } from '../changes/events.js';
import { AppError } from '../errors.js';
import type { UserAccounts } from '../graph/userAccounts.js';
import type { ProfileChange, UserProfiles } from '../graph/userProfiles.js';
import type { Session, UserRecord } from '../records/users.js';
import { assertPassword, maxPasswordLength } from './accountService.js';
import { hashPassword, verifyPassword } from './passwords.js';
import { bioOrNull, displayNameOrNull } from './profileRules.js';
import type { RateLimits } from './rateLimits.js';
import type { TokenService } from './tokens.js';
import type { Scope } from '../observability/requestScope.js';

const accountGone = () => new AppError('UNAUTHENTICATED', 'This account no longer exists');

/**
 * What the signed-in account changes about itself: its profile, its password, and which tokens
 * speak for it. Every change is one conditional update of the user document, announced on the
 * change bus so that every instance forgets the user it holds (and closes revoked live connections).
 */
export class AccountSettings {
  constructor(
    private readonly accounts: UserAccounts,
    private readonly profiles: UserProfiles,
    private readonly tokens: TokenService,
    private readonly rateLimits: RateLimits,
    private readonly changes: ChangePublisher,
  ) {}

  /** `undefined` or null leaves a field as it is; a blank string clears it. Everything is checked before anything is stored. */
  async updateProfile(handle: string, input: { displayName?: string | null; bio?: string | null; locked?: boolean | null }): Promise<UserRecord> {
    const change: ProfileChange = {};
    if (input.displayName != null) change.displayName = displayNameOrNull(input.displayName);
    if (input.bio != null) change.bio = bioOrNull(input.bio);
    if (input.locked != null) change.locked = input.locked;
    const user = await this.profiles.update(handle, change);
    if (!user) throw accountGone();
    if (Object.keys(change).length > 0) await this.changes.publish(changed({ users: [handle] }));
    return user;
  }

  /**
   * A wrong current password is FORBIDDEN and counts against the same limits as a failed log-in.
   * Earlier tokens end with the same update that stores the new password.
   */
  async changePassword(handle: string, current: string, next: string, clientAddress: string, scope: Scope): Promise<Session> {
    assertPassword(next);
    await this.rateLimits.assertLoginAllowed(handle, clientAddress, scope);
    const credentials = await this.accounts.getCredentials(handle);
    if (!credentials?.accountId) throw accountGone();
    if (!(await verifyPassword(current.slice(0, maxPasswordLength + 1), credentials.passwordHash))) {
      await this.rateLimits.loginFailed(handle, clientAddress, scope);
      throw new AppError('FORBIDDEN', 'Wrong current password: the password is not changed');
    }
    const generation = await this.accounts.revokeTokens(handle, credentials.accountId, {
      expectedHash: credentials.passwordHash,
      passwordHash: await hashPassword(next),
    });
    if (generation === null) throw new AppError('FORBIDDEN', 'The password was changed meanwhile: the password is not changed');
    await this.announce(handle);
    await this.rateLimits.loginSucceeded(handle);
    const user = await this.profiles.update(handle, {});
    if (!user) throw accountGone();
    return { token: await this.tokens.issue({ handle, accountId: credentials.accountId, generation }), user };
  }

  /** Every token of the account so far stops working, this request's own included. */
  async logOutEverywhere(handle: string): Promise<boolean> {
    const credentials = await this.accounts.getCredentials(handle);
    if (!credentials?.accountId || (await this.accounts.revokeTokens(handle, credentials.accountId)) === null) throw accountGone();
    await this.announce(handle);
    return true;
  }

  /** Other instances hold the user, and with it the generation their token checks compare with. */
  private announce(handle: string): Promise<void> {
    return this.changes.publish(changed({ users: [handle] }));
  }
}
