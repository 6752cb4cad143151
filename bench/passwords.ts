/**
 * What a log-in costs in password hashing: the verification of one password against a stored
 * hash, for the scrypt setting accounts had before and for Argon2id at the current setting, with
 * the memory each takes. One core, sequential; about ten seconds. `npm run bench:passwords`.
 */
import { randomBytes, scrypt } from 'node:crypto';
import { hashPassword, passwordParameters, verifyPassword } from '../src/auth/passwords.js';

const rounds = Number(process.argv[2] ?? 40);
const password = 'correct horse battery staple';

const scryptHash = (salt: Buffer) =>
  new Promise<Buffer>((resolve, reject) => scrypt(password, salt, 32, { N: 16384, r: 8, p: 1 }, (error, key) => (error ? reject(error) : resolve(key))));

async function measure(name: string, memory: string, once: () => Promise<unknown>): Promise<string> {
  for (let i = 0; i < 3; i++) await once(); // warm-up
  const times: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const started = performance.now();
    await once();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!.toFixed(1);
  return `| ${name} | ${memory} | ${at(0.5)} | ${at(0.99)} | ${(1000 / Number(at(0.5))).toFixed(0)} |`;
}

const stored = await hashPassword(password);
const salt = randomBytes(16);
console.log(`${rounds} verifications each, sequential, on one core\n`);
console.log('| scheme | memory | p50 ms | p99 ms | log-ins per second per core |');
console.log('|---|--:|--:|--:|--:|');
console.log(await measure('scrypt N=2^14, r=8, p=1 (before)', '16 MiB', () => scryptHash(salt)));
const { memoryCost, timeCost, parallelism } = passwordParameters;
console.log(await measure(`Argon2id m=${memoryCost} KiB, t=${timeCost}, p=${parallelism} (now)`, `${(memoryCost / 1024).toFixed(0)} MiB`, () => verifyPassword(password, stored)));
