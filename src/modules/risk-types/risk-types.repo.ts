import type { Kysely } from 'kysely'
import type { RiskTypeRow, Tables } from '../../db/tables.js'
import { applyKeyset, type Keyset } from '../../shared/pagination.js'
import { containsText } from '../../shared/search.js'
import type { RiskTypeListQuery } from './risk-types.schemas.js'
import { forChange } from '../../shared/mutation.js'

type Db = Kysely<Tables>

export const RISK_TYPE_SORT_COLUMNS = { name: 'name_key', created_at: 'created_at', updated_at: 'updated_at' }

export function findRiskType(db: Db, tenantId: string, id: string): Promise<RiskTypeRow | undefined> {
  return forChange(db, db.selectFrom('risk_types').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id)).executeTakeFirst()
}

export function listRiskTypes(db: Db, tenantId: string, query: RiskTypeListQuery, ks: Keyset): Promise<RiskTypeRow[]> {
  let q = db.selectFrom('risk_types').selectAll().where('tenant_id', '=', tenantId)
  if (query.q !== undefined) q = q.where(containsText('name_key', query.q))
  return applyKeyset(q, ks).execute()
}

export async function insertRiskType(db: Db, row: RiskTypeRow): Promise<void> {
  await db.insertInto('risk_types').values(row).execute()
}

export async function updateRiskType(db: Db, tenantId: string, id: string, changes: Partial<RiskTypeRow>): Promise<void> {
  await db.updateTable('risk_types').set(changes).where('tenant_id', '=', tenantId).where('id', '=', id).execute()
}

export async function deleteRiskType(db: Db, tenantId: string, id: string): Promise<void> {
  await db.deleteFrom('risk_types').where('tenant_id', '=', tenantId).where('id', '=', id).execute()
}
