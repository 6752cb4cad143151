import { AppError, badInput } from '../errors.js';
import { assertHandle, handlePattern, maxDisplayNameLength, type UserGraphService, type UserRecord } from '../graph/userGraphService.js';
import { decoyPasswordHash, hashPassword, verifyPassword } from './passwords.js';
import type { TokenService } from './tokens.js';

export const minPasswordLength = 8;
// scrypt's cost grows with input; an upper bound keeps a huge "password" from being a cheap DoS.
export const maxPasswordLength = 200;

export interface Session {
  token: string;
  user: UserRecord;
}

export class AccountService {
  constructor(
    private readonly graph: UserGraphService,
    private readonly tokens: TokenService,
  ) {}

  async signUp(input: { handle: string; password: string; displayName?: string | null }): Promise<Session> {
    assertHandle(input.handle);
    assertPassword(input.password);
    const displayName = input.displayName?.trim() || null;
    if (displayName && displayName.length > maxDisplayNameLength) {
      throw badInput(`Display name must be at most ${maxDisplayNameLength} characters`);
    }
    const user = await this.graph.createUser({
      handle: input.handle,
      displayName,
      passwordHash: await hashPassword(input.password),
    });
    return { token: await this.tokens.issue(user.handle), user };
  }

  /** Unknown handle and wrong password fail alike, in message and in time. */
  async logIn(input: { handle: string; password: string }): Promise<Session> {
    const storedHash = handlePattern.test(input.handle) ? await this.graph.getPasswordHash(input.handle) : null;
    const matches = await verifyPassword(input.password.slice(0, maxPasswordLength + 1), storedHash ?? decoyPasswordHash);
    const user = matches && storedHash ? await this.graph.getUser(input.handle) : null;
    if (!user) throw new AppError('UNAUTHENTICATED', 'Wrong handle or password');
    return { token: await this.tokens.issue(user.handle), user };
  }
}

function assertPassword(password: string): void {
  if (password.length < minPasswordLength || password.length > maxPasswordLength) {
    throw badInput(`Password must be ${minPasswordLength} to ${maxPasswordLength} characters`);
  }
}
