import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { KeyStatusCache } from '../../modules/api-keys/key-status.js'
import type { TokenService } from '../../modules/auth/tokens.js'
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
  }
  interface FastifyRequest {
    ctx: Ctx
  }
}

/** Verifies the bearer token on every non-public route of the scope and puts the caller's context on the request. */
export function installAuth(app: FastifyInstance, deps: { tokens: TokenService; keyStatus: KeyStatusCache }): void {
  app.decorateRequest('ctx', null as unknown as Ctx)
  app.addHook('onRequest', async (req) => {
    const config = req.routeOptions.config
    if (config.public) return
    req.ctx = await authenticateBearer(req, deps)
    const needed: Role = config.role ?? (req.method === 'GET' || req.method === 'HEAD' ? 'read' : 'write')
    if (!roleAllows(req.ctx.role, needed)) {
      throw new AppError(
        'forbidden',
        `this API key has role "${req.ctx.role}"; ${req.method} ${req.routeOptions.url} needs "${needed}"`,
        undefined,
        { role: req.ctx.role, required_role: needed },
      )
    }
  })
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
    expiresAt: key.expiresAt === null ? claims.expiresAt : Math.min(claims.expiresAt, key.expiresAt),
  }
}
