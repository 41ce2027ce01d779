import type { Kysely } from 'kysely'
import type { ApiKeyRow, Tables } from '../../db/tables.js'
import { applyKeyset, type Keyset } from '../../shared/pagination.js'
import { forChange } from '../../shared/mutation.js'

export function findKeyByHash(db: Kysely<Tables>, keyHash: string): Promise<ApiKeyRow | undefined> {
  return db.selectFrom('api_keys').selectAll().where('key_hash', '=', keyHash).executeTakeFirst()
}

export function findKey(db: Kysely<Tables>, tenantId: string, id: string): Promise<ApiKeyRow | undefined> {
  return forChange(
    db,
    db.selectFrom('api_keys').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id),
  ).executeTakeFirst()
}

export function listKeys(
  db: Kysely<Tables>,
  tenantId: string,
  ks: Keyset,
  includeRevoked: boolean,
): Promise<ApiKeyRow[]> {
  let q = db.selectFrom('api_keys').selectAll().where('tenant_id', '=', tenantId)
  if (!includeRevoked) q = q.where('revoked_at', 'is', null)
  return applyKeyset(q, ks).execute()
}

export async function insertKey(db: Kysely<Tables>, row: ApiKeyRow): Promise<void> {
  await db.insertInto('api_keys').values(row).execute()
}

export async function revokeKey(db: Kysely<Tables>, tenantId: string, id: string, at: string): Promise<void> {
  await db
    .updateTable('api_keys')
    .set({ revoked_at: at, updated_at: at })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .execute()
}

export function hasActiveAdminKey(db: Kysely<Tables>, tenantId: string, at: string) {
  return db
    .selectFrom('api_keys')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('role', '=', 'admin')
    .where('revoked_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', at)]))
    .executeTakeFirst()
    .then((row) => row !== undefined)
}

/** The tenant's usable admin keys, locked for the revocation that reads them (two admins revoking each other queue). */
export async function activeAdminKeyIds(db: Kysely<Tables>, tenantId: string, at: string): Promise<string[]> {
  const rows = await forChange(
    db,
    db
      .selectFrom('api_keys')
      .select('id')
      .where('tenant_id', '=', tenantId)
      .where('role', '=', 'admin')
      .where('revoked_at', 'is', null)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', at)])),
  ).execute()
  return rows.map((r) => r.id)
}
