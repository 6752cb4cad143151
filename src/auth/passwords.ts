import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import argon2 from 'argon2';

/**
 * Argon2id at OWASP's first recommended setting (Password Storage Cheat Sheet): 19 MiB of memory,
 * two passes, one lane. Argon2id is the cheat sheet's first choice; memory-hard, so a GPU farm buys
 * little, and these numbers keep a log-in near 20 ms of one core (docs/accounts.md, "Passwords").
 */
export const passwordParameters = { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

// Passwords are compared as NFKC, so the same password typed on another keyboard still matches.
const normalized = (password: string) => password.normalize('NFKC');

/** A PHC string (`$argon2id$v=19$m=19456,p=1,t=2$salt$hash`): the parameters travel with the hash. */
export function hashPassword(password: string): Promise<string> {
  return argon2.hash(normalized(password), passwordParameters);
}

/** Checks a password against a stored hash of either scheme: Argon2id, or the scrypt of accounts made before it. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  if (stored.startsWith('$argon2')) {
    try {
      return await argon2.verify(stored, normalized(password));
    } catch {
      return false; // a malformed stored hash matches nothing
    }
  }
  return verifyScrypt(password, stored);
}

/** Whether a stored hash is of an older scheme or cost: it is replaced at the account's next successful log-in. */
export function needsRehash(stored: string): boolean {
  if (!stored.startsWith('$argon2id$')) return true;
  try {
    return argon2.needsRehash(stored, passwordParameters);
  } catch {
    return true;
  }
}

/** A real hash to check against for unknown handles, at the same cost, so timing does not reveal which handles exist. */
export const decoyPasswordHash = await hashPassword(randomBytes(12).toString('hex'));

/** `scrypt$N$r$p$salt$key`: how accounts made before Argon2id stored theirs (N = 2^14, r = 8, p = 1). */
async function verifyScrypt(password: string, stored: string): Promise<boolean> {
  const [scheme, N, r, p, salt, key] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !key) return false;
  const expected = Buffer.from(key, 'base64url');
  const actual = await deriveScrypt(password, Buffer.from(salt, 'base64url'), expected.length, { N: Number(N), r: Number(r), p: Number(p) });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

function deriveScrypt(password: string, salt: Buffer, keyLength: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(normalized(password), salt, keyLength, options, (error, key) => (error ? reject(error) : resolve(key))),
  );
}
