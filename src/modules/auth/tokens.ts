import { randomUUID } from 'node:crypto'
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose'
import { AppError } from '../../http/errors.js'
import type { Role } from '../../shared/context.js'

export const TOKEN_ISSUER = 'aigov-integration-service'
export const TOKEN_AUDIENCE = 'aigov-integration-api'

export interface TokenClaims {
  keyId: string
  tenantId: string
  role: Role
}

/** A verified token's claims and its `exp`, in ms since the epoch. */
export type VerifiedClaims = TokenClaims & { expiresAt: number }

/** How many verified tokens are remembered; clients reuse one token for its whole lifetime. */
const VERIFIED_CACHE_SIZE = 10_000

/** Issues and verifies the service's HS256 access tokens. */
export class TokenService {
  /** Imported once: jose would otherwise import the raw secret into WebCrypto on every sign and verify. */
  private readonly key: Promise<CryptoKey>
  /**
   * Tokens whose signature and claims already checked out, until their `exp`. Verifying through WebCrypto
   * costs a thread-pool round trip per request; a token's claims cannot change, and revocation is checked
   * per request elsewhere (KeyStatusCache).
   */
  private readonly verified = new Map<string, { claims: VerifiedClaims; exp: number }>()

  constructor(
    secret: string,
    readonly ttlSeconds: number,
  ) {
    this.key = crypto.subtle.importKey(
      'raw',
      new TextEncoder().encode(secret),
      { name: 'HMAC', hash: 'SHA-256' },
      false,
      ['sign', 'verify'],
    )
  }

  async sign(claims: TokenClaims): Promise<string> {
    return new SignJWT({ tenant: claims.tenantId, role: claims.role })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer(TOKEN_ISSUER)
      .setAudience(TOKEN_AUDIENCE)
      .setSubject(claims.keyId)
      .setIssuedAt()
      .setExpirationTime(Math.floor(Date.now() / 1000) + this.ttlSeconds)
      .setJti(randomUUID())
      .sign(await this.key)
  }

  async verify(token: string): Promise<VerifiedClaims> {
    const known = this.verified.get(token)
    if (known) {
      if (known.exp > Math.floor(Date.now() / 1000)) return known.claims
      this.verified.delete(token) // expired: the full check below says so
    }
    try {
      const { payload } = await jwtVerify(token, await this.key, {
        algorithms: ['HS256'],
        issuer: TOKEN_ISSUER,
        audience: TOKEN_AUDIENCE,
        requiredClaims: ['sub', 'exp', 'iat', 'jti'],
      })
      const { sub, tenant, role } = payload as { sub: string; tenant?: unknown; role?: unknown }
      if (typeof tenant !== 'string' || (role !== 'read' && role !== 'write' && role !== 'admin')) {
        throw new AppError('unauthorized', 'the access token is malformed')
      }
      const claims: VerifiedClaims = { keyId: sub, tenantId: tenant, role, expiresAt: payload.exp! * 1000 }
      if (this.verified.size >= VERIFIED_CACHE_SIZE) this.verified.delete(this.verified.keys().next().value!)
      this.verified.set(token, { claims, exp: payload.exp! })
      return claims
    } catch (err) {
      if (err instanceof AppError) throw err
      const detail =
        err instanceof joseErrors.JWTExpired ? 'the access token has expired' : 'the access token is invalid'
      throw new AppError('unauthorized', detail)
    }
  }
}
