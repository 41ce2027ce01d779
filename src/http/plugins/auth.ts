import { timingSafeEqual } from 'node:crypto'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Config } from '../../config.js'
import type { KeyStatusCache } from '../../modules/api-keys/key-status.js'
import type { TokenService } from '../../modules/auth/tokens.js'
import type { OAuthServer } from '../../modules/oauth/oauth.server.js'
import { SESSION_COOKIE, type SessionsService } from '../../modules/sessions/sessions.service.js'
import { type Ctx, type Role, roleAllows, type Source } from '../../shared/context.js'
import { AppError } from '../errors.js'

/**
 * A caller may say it acts for an assistant (`mcp`, e.g. `aigov mcp --stdio`) or a command line (`cli`);
 * that is what audit records show as `source`. The actor stays the API key; `system` cannot be claimed.
 */
export const SOURCE_HEADER = 'X-Aigov-Source'
const CLAIMABLE_SOURCES: readonly Source[] = ['mcp', 'cli']

function declaredSource(req: FastifyRequest): Source {
  const value = req.headers['x-aigov-source']
  return typeof value === 'string' && (CLAIMABLE_SOURCES as readonly string[]).includes(value)
    ? (value as Source)
    : 'api'
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** No bearer token needed (the token exchange itself). */
    public?: boolean
    /** The least role allowed; by default GET needs read and anything else write. */
    role?: Role
    /** Also takes an OAuth access token of an assistant (issued for /mcp): who-is-calling only. */
    oauth?: boolean
  }
  interface FastifyRequest {
    ctx: Ctx
  }
}

export interface AuthDeps {
  tokens: TokenService
  keyStatus: KeyStatusCache
  sessions: SessionsService
  config: Config
  /** The authorization server of /mcp, when the MCP server is on. */
  oauth?: OAuthServer
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

/**
 * Verifies the caller on every non-public route of the scope (a bearer token, else a person's session cookie)
 * and puts the caller's context on the request.
 */
export function installAuth(app: FastifyInstance, deps: AuthDeps): void {
  app.decorateRequest('ctx', null as unknown as Ctx)
  app.addHook('onRequest', async (req) => {
    const config = req.routeOptions.config
    if (config.public) return
    const secret = req.headers.authorization === undefined ? req.cookies?.[SESSION_COOKIE] : undefined
    req.ctx =
      secret !== undefined
        ? await authenticateSession(req, secret, deps)
        : config.oauth && deps.oauth
          ? ((await authenticateOAuth(req, deps.oauth, deps.config, 'api')) ?? (await authenticateBearer(req, deps)))
          : await authenticateBearer(req, deps)
    const needed: Role = config.role ?? (req.method === 'GET' || req.method === 'HEAD' ? 'read' : 'write')
    if (!roleAllows(req.ctx.role, needed)) {
      const who = req.ctx.actor.type === 'user' ? 'this person' : 'this API key'
      throw new AppError(
        'forbidden',
        `${who} has role "${req.ctx.role}"; ${req.method} ${req.routeOptions.url} needs "${needed}"`,
        undefined,
        { role: req.ctx.role, required_role: needed },
      )
    }
  })
}

/**
 * An assistant's OAuth access token (opaque, so never mistaken for the service's JWTs): its caller, or null when the
 * request carries no such token. One that is not valid (expired, revoked, for another resource, its person
 * deactivated) is a 401.
 */
export async function authenticateOAuth(
  req: FastifyRequest,
  oauth: OAuthServer,
  config: Pick<Config, 'publicUrl'>,
  source: Source,
): Promise<Ctx | null> {
  const match = req.headers.authorization === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization)
  if (!match || !oauth.looksLikeOAuthToken(match[1])) return null
  const ctx = await oauth.authenticate(match[1], serviceOrigin(req, config), req.id, source)
  if (!ctx) {
    throw new AppError(
      'unauthorized',
      'the OAuth access token is not valid here: expired, revoked, issued for another resource, or its person is deactivated',
    )
  }
  const tenantHeader = req.headers['x-tenant']
  if (tenantHeader !== undefined && tenantHeader !== ctx.tenantId) {
    throw new AppError('forbidden', 'X-Tenant does not match the tenant of the access token')
  }
  return ctx
}

/** The origin this service is reached at, as browsers send it in `Origin`. */
export function serviceOrigin(req: FastifyRequest, config: Pick<Config, 'publicUrl'>): string {
  return config.publicUrl ?? `${req.protocol}://${req.host}`
}

/**
 * A person's session cookie; a write also needs the session's CSRF token and a same-origin `Origin`, so that a page
 * elsewhere, whose requests carry the cookie too, cannot act for the person.
 */
async function authenticateSession(req: FastifyRequest, secret: string, deps: AuthDeps): Promise<Ctx> {
  const ctx = await deps.sessions.authenticate(secret, req.id)
  if (ctx === null)
    throw new AppError('unauthorized', 'the session has ended (signed out, timed out or revoked); sign in again')
  const tenantHeader = req.headers['x-tenant']
  if (tenantHeader !== undefined && tenantHeader !== ctx.tenantId) {
    throw new AppError('forbidden', 'X-Tenant does not match the tenant of the session')
  }
  if (!SAFE_METHODS.has(req.method)) {
    if (req.headers.origin !== serviceOrigin(req, deps.config)) {
      throw new AppError('forbidden', "a write with a session cookie must come from this service's own pages (Origin)")
    }
    const given = req.headers['x-csrf-token']
    if (typeof given !== 'string' || !sameText(given, ctx.session!.csrfToken)) {
      throw new AppError('forbidden', 'a write with a session cookie needs X-CSRF-Token: the csrf_token of GET /me')
    }
  }
  return ctx
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

/** Checks `Authorization: Bearer` (signature, expiry, revocation, X-Tenant) and returns the caller's context. Also used by /mcp. */
export async function authenticateBearer(
  req: FastifyRequest,
  deps: { tokens: TokenService; keyStatus: KeyStatusCache },
): Promise<Ctx> {
  const header = req.headers.authorization
  const match = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header)
  if (!match)
    throw new AppError(
      'unauthorized',
      'send Authorization: Bearer <access token> (from POST /api/v1/integration/auth/token)',
    )
  const claims = await deps.tokens.verify(match[1])
  const key = await deps.keyStatus.activeKey(claims.tenantId, claims.keyId)
  if (key === null) {
    throw new AppError('unauthorized', 'the API key behind this token has been revoked or has expired')
  }
  const tenantHeader = req.headers['x-tenant']
  if (tenantHeader !== undefined && tenantHeader !== claims.tenantId) {
    throw new AppError('forbidden', 'X-Tenant does not match the tenant of the access token')
  }
  return {
    tenantId: claims.tenantId,
    // The key's role now: a token outlives a change of its key's role.
    role: key.role,
    actor: { type: 'api_key', id: claims.keyId, name: key.name },
    requestId: req.id,
    source: declaredSource(req),
    via: 'api_key',
    expiresAt: key.expiresAt === null ? claims.expiresAt : Math.min(claims.expiresAt, key.expiresAt),
  }
}
