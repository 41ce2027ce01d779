import { AppError, notFound } from '../../http/errors.js'
import type { ApiKeyRow } from '../../db/tables.js'
import type { Columns } from '../../shared/catalog.js'
import type { Ctx } from '../../shared/context.js'
import type { Deps } from '../../shared/deps.js'
import { derive, ID, plain, stored, TIME } from '../../shared/fields.js'
import { newId, now } from '../../shared/ids.js'
import { runMutation } from '../../shared/mutation.js'
import { keyset, type Page, toPage } from '../../shared/pagination.js'
import * as repo from './api-keys.repo.js'
import type { ApiKey, ApiKeyCreate, ApiKeyCreated, ApiKeyListQuery } from './api-keys.schemas.js'
import { announceRevocation } from './revocations.js'
import { generateSecret, hashSecret, secretPrefix } from './secrets.js'
// What other families read of this one's records, inside their own transactions: through here, not the repository.
export { findKeyByHash } from './api-keys.repo.js'

export type ApiKeysService = ReturnType<typeof createApiKeysService>

/** Each field of an API key, once (see shared/fields.ts); its secret is never stored and its hash never rendered. */
const fields = derive<ApiKeyRow, ApiKey, ApiKeyCreate, Record<string, never>>({
  id: ID,
  name: plain(),
  role: plain(),
  // From the secret, which create makes.
  key_prefix: stored(),
  created_at: TIME,
  updated_at: TIME,
  // Stored as an instant in UTC, whatever offset the body wrote it with.
  expires_at: (key) => ({
    read: (row) => row[key],
    create: (value) => ({ [key]: value ? new Date(value as string).toISOString() : null }),
    audited: true,
    listed: false,
  }),
  revoked_at: stored(),
})

export function createApiKeysService(deps: Pick<Deps, 'database' | 'keyStatus' | 'redis'>) {
  const { database, keyStatus, redis } = deps
  const { db } = database

  return {
    async list(ctx: Ctx, query: ApiKeyListQuery): Promise<Page<ApiKey>> {
      const ks = keyset(query)
      return toPage(await repo.listKeys(db, ctx.tenantId, ks, query.include_revoked ?? false), ks, toApiKey)
    },

    async get(ctx: Ctx, id: string): Promise<ApiKey> {
      const row = await repo.findKey(db, ctx.tenantId, id)
      if (!row) throw notFound('API key', id)
      return toApiKey(row)
    },

    /** Creates a key; the secret is in the result and nowhere else, ever. */
    async create(ctx: Ctx, input: ApiKeyCreate, secret = generateSecret()): Promise<ApiKeyCreated & { key: string }> {
      const at = now()
      if (input.expires_at && new Date(input.expires_at).toISOString() <= at) {
        throw new AppError('validation_failed', 'expires_at must be in the future', [
          { field: 'expires_at', message: 'must be in the future' },
        ])
      }
      const row: ApiKeyRow = {
        id: newId('key'),
        tenant_id: ctx.tenantId,
        ...(fields.createColumns(input, ctx) as Columns<ApiKeyRow>),
        key_hash: hashSecret(secret),
        key_prefix: secretPrefix(secret),
        created_at: at,
        updated_at: at,
        revoked_at: null,
      }
      await runMutation(database, ctx, async (tx) => {
        await repo.insertKey(tx, row)
        return {
          result: undefined,
          audit: {
            action: 'api_key.created',
            resourceType: 'api_key',
            resourceId: row.id,
            resourceName: row.name,
            metadata: { role: row.role, expires_at: row.expires_at },
          },
        }
      })
      return { ...toApiKey(row), key: secret, secret_shown: true }
    },

    async revoke(ctx: Ctx, id: string): Promise<void> {
      const revoked = await runMutation(database, ctx, async (tx) => {
        const row = await repo.findKey(tx, ctx.tenantId, id)
        if (!row) throw notFound('API key', id)
        if (row.revoked_at !== null) throw new AppError('conflict', `API key ${id} is already revoked`)
        const at = now()
        const admins = await repo.activeAdminKeyIds(tx, ctx.tenantId, at)
        if (admins.length === 1 && admins[0] === id) {
          throw new AppError(
            'conflict',
            `API key ${id} is the tenant's last admin key; create another admin key before revoking it`,
          )
        }
        await repo.revokeKey(tx, ctx.tenantId, id, at)
        return {
          result: row,
          audit: {
            action: 'api_key.revoked',
            resourceType: 'api_key',
            resourceId: id,
            resourceName: row.name,
            changes: { revoked_at: [null, at] },
          },
        }
      })
      keyStatus.markRevoked(revoked.tenant_id, revoked.id)
      await announceRevocation(redis, revoked.tenant_id, revoked.id)
    },
  }
}

export const toApiKey = (row: ApiKeyRow): ApiKey => fields.toItem(row)
