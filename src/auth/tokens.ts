import { jwtVerify, SignJWT } from 'jose';

const algorithm = 'HS256';
const issuer = 'feed-service';

export class TokenService {
  constructor(
    private readonly secret: Uint8Array,
    private readonly ttlSeconds: number,
  ) {}

  issue(handle: string): Promise<string> {
    return new SignJWT({})
      .setProtectedHeader({ alg: algorithm })
      .setSubject(handle)
      .setIssuer(issuer)
      .setIssuedAt()
      .setExpirationTime(`${this.ttlSeconds}s`)
      .sign(this.secret);
  }

  /** The handle the token was issued to, or null for a missing, forged or expired token. */
  async verify(token: string): Promise<string | null> {
    try {
      const { payload } = await jwtVerify(token, this.secret, { algorithms: [algorithm], issuer });
      return typeof payload.sub === 'string' ? payload.sub : null;
    } catch {
      return null;
    }
  }

  /** Reads `Bearer <token>` from an Authorization header or graphql-ws connection parameter. */
  async viewerFromAuthorization(authorization: unknown): Promise<string | null> {
    if (typeof authorization !== 'string') return null;
    const match = /^Bearer\s+(\S+)$/i.exec(authorization.trim());
    return match ? this.verify(match[1]!) : null;
  }
}
