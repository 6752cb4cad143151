import { randomBytes, scryptSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decoyPasswordHash } from '../../src/auth/passwords.js';
import { startTestApp, type TestApp } from '../support/testApp.js';

const logIn = 'mutation($h: String!, $p: String!) { logIn(handle: $h, password: $p) { token } }';
/** OWASP's first Argon2id setting: 19 MiB, two passes, one lane. */
const owaspArgon2id = /^\$argon2id\$v=19\$m=19456,p=1,t=2\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/;

/** A hash as accounts made before Argon2id have it: scrypt at N = 2^14. */
function oldScryptHash(password: string): string {
  const salt = randomBytes(16);
  const key = scryptSync(password.normalize('NFKC'), salt, 32, { N: 16384, r: 8, p: 1 });
  return ['scrypt', 16384, 8, 1, salt.toString('base64url'), key.toString('base64url')].join('$');
}

describe('stored passwords', () => {
  let app: TestApp;
  const storedHash = async (handle: string) => (await app.database.db.collection<{ _id: string; passwordHash: string }>('users').findOne({ _id: handle }))!.passwordHash;

  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app?.stop());

  it('hashes new passwords with Argon2id at OWASP parameters, and the decoy for unknown handles alike', async () => {
    await app.signUp('argon_ada', 'correct horse battery');
    expect(await storedHash('argon_ada')).toMatch(owaspArgon2id);
    expect(decoyPasswordHash).toMatch(owaspArgon2id);
    expect((await app.gql(logIn, { h: 'argon_ada', p: 'correct horse battery' })).data?.logIn.token).toBeTruthy();
  });

  it('upgrades an older scrypt hash at the next successful log-in, and not at a failed one', async () => {
    await app.signUp('scrypt_bob', 'placeholder password');
    const users = app.database.db.collection<{ _id: string; passwordHash: string }>('users');
    const old = oldScryptHash('an old password');
    await users.updateOne({ _id: 'scrypt_bob' }, { $set: { passwordHash: old } });

    const wrong = await app.gql(logIn, { h: 'scrypt_bob', p: 'not the password' });
    expect(wrong.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(await storedHash('scrypt_bob')).toBe(old);

    const first = await app.gql(logIn, { h: 'scrypt_bob', p: 'an old password' });
    expect(first.data?.logIn.token).toBeTruthy();
    const upgraded = await storedHash('scrypt_bob');
    expect(upgraded).toMatch(owaspArgon2id);

    // The same password still works, and the token issued before the upgrade too.
    expect((await app.gql(logIn, { h: 'scrypt_bob', p: 'an old password' })).data?.logIn.token).toBeTruthy();
    expect((await app.gql('{ viewer { handle } }', {}, first.data.logIn.token)).data).toEqual({ viewer: { handle: 'scrypt_bob' } });
    expect(await storedHash('scrypt_bob')).toBe(upgraded);
  });
});
