import { createHmac, timingSafeEqual } from 'node:crypto';
import { ObjectId } from 'mongodb';
import { mediaVariants, type MediaVariant } from '../records/media.js';

/** The path every media URL starts with; uploads are POSTed to it. */
export const mediaPath = '/media';

/**
 * Signed, expiring media URLs: `/media/<id>/<variant>?e=<expiry, epoch seconds>&s=<signature>`,
 * the signature an HMAC-SHA256 of the id, the variant and the expiry under a key derived from the
 * deployment's token secret. Unguessable (128 bits of signature), unforgeable without the secret,
 * and useless after the expiry; a URL of another deployment fails like a tampered one.
 *
 * Expiries are rounded to half the lifetime, so the URLs of one image stay the same for that long
 * and browsers reuse what they fetched, while none lives longer than `ttlSeconds`.
 */
export class MediaUrls {
  private readonly key: Buffer;

  constructor(
    secret: Uint8Array,
    private readonly ttlSeconds: number,
  ) {
    // A key of its own: a media signature can never be mistaken for, or help forge, a token.
    this.key = createHmac('sha256', secret).update('media urls v1').digest();
  }

  /** The path and query of a URL valid from now on for at most `ttlSeconds`, and its expiry. */
  sign(id: ObjectId, variant: MediaVariant, nowMs = Date.now()): { path: string; expiresAt: number } {
    const step = Math.max(1, Math.floor(this.ttlSeconds / 2));
    const expiresAt = Math.floor((nowMs / 1000 + this.ttlSeconds) / step) * step;
    const hex = id.toHexString();
    return { path: `${mediaPath}/${hex}/${variant}?e=${expiresAt}&s=${this.signature(hex, variant, expiresAt)}`, expiresAt };
  }

  /** The image a URL names, when it is untampered and unexpired; null otherwise, whatever the reason. */
  verify(id: string, variant: string, expiry: unknown, signature: unknown, nowMs = Date.now()): { id: ObjectId; variant: MediaVariant; expiresAt: number } | null {
    if (!/^[0-9a-f]{24}$/.test(id) || !(mediaVariants as readonly string[]).includes(variant)) return null;
    if (typeof expiry !== 'string' || !/^\d{1,12}$/.test(expiry) || typeof signature !== 'string') return null;
    const expiresAt = Number(expiry);
    if (expiresAt * 1000 <= nowMs) return null;
    const expected = Buffer.from(this.signature(id, variant, expiresAt));
    const given = Buffer.from(signature);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    return { id: new ObjectId(id), variant: variant as MediaVariant, expiresAt };
  }

  private signature(hexId: string, variant: string, expiresAt: number): string {
    return createHmac('sha256', this.key).update(`${hexId}/${variant}/${expiresAt}`).digest('base64url').slice(0, 22);
  }
}
