import { AppError } from '../../http/errors.js'
import type { Ctx, Role } from '../../shared/context.js'
import type { Deps } from '../../shared/deps.js'
import { now } from '../../shared/ids.js'
import { runMutation } from '../../shared/mutation.js'
import { findKeyByHash } from '../api-keys/api-keys.service.js'
import { hashSecret } from '../api-keys/secrets.js'
import type { TokenResponse } from './auth.schemas.js'

export interface Credentials {
  apiKey: string | undefined
  tenant: string | undefined
}

export type AuthService = ReturnType<typeof createAuthService>

export function createAuthService(deps: Pick<Deps, 'database' | 'tokens'>) {
  const { database, tokens } = deps

  /** Checks an API key against its tenant and returns who it is; every failure is the same 401. Also used by /mcp. */
  async function checkApiKey(credentials: Credentials, request: Pick<Ctx, 'requestId' | 'source'>): Promise<Ctx> {
    const invalid = new AppError('unauthorized', 'invalid API key or tenant')
    const { apiKey, tenant } = credentials
    if (!apiKey || !tenant) throw invalid
    const key = await findKeyByHash(database.db, hashSecret(apiKey))
    if (
      !key ||
      key.tenant_id !== tenant ||
      key.revoked_at !== null ||
      (key.expires_at !== null && key.expires_at <= now())
    ) {
      throw invalid
    }
    return {
      ...request,
      tenantId: key.tenant_id,
      role: key.role as Role,
      actor: { type: 'api_key', id: key.id, name: key.name },
    }
  }

  return {
    checkApiKey,

    /** Exchanges an API key for an access token. Every failure is the same 401: nothing tells a guesser which part was wrong. */
    async issueToken(credentials: Credentials, request: Pick<Ctx, 'requestId' | 'source'>): Promise<TokenResponse> {
      const ctx = await checkApiKey(credentials, request)
      const keyId = ctx.actor.id as string
      const accessToken = await tokens.sign({ keyId, tenantId: ctx.tenantId, role: ctx.role })
      await runMutation(database, ctx, async () => ({
        result: undefined,
        audit: {
          action: 'auth.token_issued',
          resourceType: 'api_key',
          resourceId: keyId,
          resourceName: ctx.actor.name,
          metadata: { expires_in: tokens.ttlSeconds },
        },
      }))
      return { access_token: accessToken, token_type: 'Bearer', expires_in: tokens.ttlSeconds }
    },
  }
}
