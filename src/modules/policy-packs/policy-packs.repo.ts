import type { Kysely } from 'kysely'
import type { PolicyPackControlRow, PolicyPackRow, Tables } from '../../db/tables.js'
import { applyKeyset, type Keyset, pageTextOf, withinTextBudget } from '../../shared/pagination.js'
import { containsText } from '../../shared/search.js'
import type { PolicyPackListQuery } from './policy-packs.schemas.js'

type Db = Kysely<Tables>

export const PACK_SORT_COLUMNS = { key: 'key', name: 'name_key', created_at: 'created_at' }

export function findPack(db: Db, tenantId: string, id: string): Promise<PolicyPackRow | undefined> {
  return db
    .selectFrom('policy_packs')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst()
}

/** A given version of a key, or its latest when `version` is undefined. */
export function findPackByKey(
  db: Db,
  tenantId: string,
  key: string,
  version?: number,
): Promise<PolicyPackRow | undefined> {
  let q = db.selectFrom('policy_packs').selectAll().where('tenant_id', '=', tenantId).where('key', '=', key)
  q = version === undefined ? q.where('latest', '=', 1) : q.where('version', '=', version)
  return q.executeTakeFirst()
}

export function listPacks(db: Db, tenantId: string, query: PolicyPackListQuery, ks: Keyset): Promise<PolicyPackRow[]> {
  let q = db.selectFrom('policy_packs').selectAll().where('tenant_id', '=', tenantId)
  if (!query.all_versions) q = q.where('latest', '=', 1)
  if (query.key !== undefined) q = q.where('key', '=', query.key)
  if (query.q !== undefined) q = q.where(containsText('name_key', query.q))
  return withinTextBudget(db, applyKeyset(q, ks), ks, pageTextOf('policy_packs')).execute()
}

export async function insertPack(db: Db, row: PolicyPackRow, controls: PolicyPackControlRow[]): Promise<void> {
  await db
    .updateTable('policy_packs')
    .set({ latest: 0 })
    .where('tenant_id', '=', row.tenant_id)
    .where('key', '=', row.key)
    .where('latest', '=', 1)
    .execute()
  await db.insertInto('policy_packs').values(row).execute()
  await db.insertInto('policy_pack_controls').values(controls).execute()
}

export async function latestPackVersion(db: Db, tenantId: string, key: string): Promise<number> {
  const row = await db
    .selectFrom('policy_packs')
    .select('version')
    .where('tenant_id', '=', tenantId)
    .where('key', '=', key)
    .where('latest', '=', 1)
    .executeTakeFirst()
  return row?.version ?? 0
}

export interface PackControl {
  policy_pack_id: string
  control_key: string
  control_version: number
  control_version_id: string
  name: string
}

/** The controls of several packs in one query, in each pack's order. */
export function packControls(db: Db, tenantId: string, packIds: string[]): Promise<PackControl[]> {
  if (packIds.length === 0) return Promise.resolve([])
  return db
    .selectFrom('policy_pack_controls as pc')
    .innerJoin('policy_control_versions as v', 'v.id', 'pc.control_version_id')
    .select(['pc.policy_pack_id', 'pc.control_key', 'pc.control_version', 'pc.control_version_id', 'v.name'])
    .where('pc.tenant_id', '=', tenantId)
    .where('pc.policy_pack_id', 'in', packIds)
    .orderBy('pc.policy_pack_id')
    .orderBy('pc.position')
    .execute()
}
