import { errors, jwtVerify, SignJWT } from 'jose';
import { LRUCache } from 'lru-cache';

const algorithm = 'HS256';
/** Verified tokens held at once; the oldest are verified again when more are in use. */
const maxVerifiedTokens = 50_000;

/** Who a valid token speaks for. */
export interface TokenSubject {
  handle: string;
  accountId: string;
  /** The account's token generation when issued (claim `gen`; 0 when absent): see UserDocument.tokenGeneration. */
  generation: number;
}

/**
 * HS256 tokens naming a handle (`sub`), the account behind it (`aid`) and its token generation (`gen`), for one deployment
 * (issuer and audience). Tokens without an expiry are refused.
 */
export class TokenService {
  /**
   * Tokens already verified, with the moment they expire (bounded): verifying one costs 0.1–0.2 ms
   * of CPU per request. Only the signature and claims are cached, and a held token is refused from
   * its expiry on like any other; whether the account still exists, at the token's generation, is
   * checked on every request (AccountService.authenticate).
   */
  private readonly verified = new LRUCache<string, { subject: TokenSubject; expiresAtMs: number }>({ max: maxVerifiedTokens });

  /** `now`: the clock that issues tokens and decides when they expire, epoch ms. */
  constructor(
    private readonly secret: Uint8Array,
    private readonly ttlSeconds: number,
    private readonly issuer: string,
    private readonly now: () => number = Date.now,
  ) {}

  issue(subject: TokenSubject): Promise<string> {
    const issuedAt = Math.floor(this.now() / 1000);
    return new SignJWT({ aid: subject.accountId, gen: subject.generation })
      .setProtectedHeader({ alg: algorithm })
      .setSubject(subject.handle)
      .setIssuer(this.issuer)
      .setAudience(this.issuer)
      .setIssuedAt(issuedAt)
      .setExpirationTime(issuedAt + this.ttlSeconds)
      .sign(this.secret);
  }

  /** The subject of a well-formed, correctly signed, unexpired token for this deployment; null otherwise. */
  async verify(token: string): Promise<TokenSubject | null> {
    const now = this.now();
    const known = this.verified.get(token);
    if (known) {
      if (now < known.expiresAtMs) return known.subject;
      this.verified.delete(token);
      return null;
    }
    try {
      const { payload } = await jwtVerify(token, this.secret, {
        algorithms: [algorithm],
        issuer: this.issuer,
        audience: this.issuer,
        requiredClaims: ['exp', 'sub'],
        currentDate: new Date(now),
      });
      if (typeof payload.sub !== 'string' || typeof payload.aid !== 'string') return null;
      const generation = payload.gen ?? 0;
      if (!Number.isSafeInteger(generation)) return null;
      const subject = { handle: payload.sub, accountId: payload.aid, generation: generation as number };
      const expiresAtMs = payload.exp! * 1000;
      if (now < expiresAtMs) this.verified.set(token, { subject, expiresAtMs });
      return subject;
    } catch (error) {
      if (error instanceof errors.JOSEError) return null;
      throw error;
    }
  }

  /**
   * Reads `Bearer <token>`: `missing` when there is no such header or parameter at all,
   * `not-bearer` when it is not of that form (a bare token, another scheme), `invalid` when the
   * token itself is refused.
   */
  async fromAuthorization(authorization: unknown): Promise<TokenSubject | 'missing' | 'not-bearer' | 'invalid'> {
    if (authorization === undefined || authorization === null || authorization === '') return 'missing';
    const match = typeof authorization === 'string' ? /^Bearer\s+(\S+)$/i.exec(authorization.trim()) : null;
    if (!match) return 'not-bearer';
    return (await this.verify(match[1]!)) ?? 'invalid';
  }
}
