import { randomBytes } from 'node:crypto';
import type { Db } from 'mongodb';
import { isDuplicateKeyError } from '../errors.js';
import { plannedCollection } from '../db/shardPlan.js';

interface SecretDocument {
  _id: 'jwtSecret';
  secret: Buffer;
  createdAt: Date;
}

/**
 * Without JWT_SECRET (outside production), the token secret is made once and kept in the database,
 * so tokens survive a restart and every instance on the database accepts the others' tokens. The
 * first instance to start writes it; the others read what it wrote.
 */
export async function storedTokenSecret(db: Db): Promise<Uint8Array> {
  const meta = plannedCollection<SecretDocument>(db, 'feed_meta');
  const existing = await meta.findOne({ _id: 'jwtSecret' });
  if (existing) return new Uint8Array(existing.secret.buffer);
  const secret = randomBytes(32);
  try {
    await meta.insertOne({ _id: 'jwtSecret', secret, createdAt: new Date() });
    return new Uint8Array(secret);
  } catch (error) {
    if (!isDuplicateKeyError(error)) throw error;
    const winner = await meta.findOne({ _id: 'jwtSecret' });
    return new Uint8Array(winner!.secret.buffer);
  }
}
