import type { Kysely } from 'kysely'
import type { Tables, UseCaseRow } from '../../db/tables.js'
import { applyKeyset, type Keyset } from '../../shared/pagination.js'
import { containsText } from '../../shared/search.js'
import type { UseCaseListQuery } from './use-cases.schemas.js'
import { forChange } from '../../shared/mutation.js'

type Db = Kysely<Tables>

export const USE_CASE_SORT_COLUMNS = { name: 'name_key', created_at: 'created_at', updated_at: 'updated_at' }

export function findUseCase(db: Db, tenantId: string, id: string): Promise<UseCaseRow | undefined> {
  return forChange(db, db.selectFrom('use_cases').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id)).executeTakeFirst()
}

export function listUseCases(db: Db, tenantId: string, query: UseCaseListQuery, ks: Keyset): Promise<UseCaseRow[]> {
  let q = db.selectFrom('use_cases').selectAll().where('tenant_id', '=', tenantId)
  if (query.q !== undefined) q = q.where(containsText('name_key', query.q))
  if (query.risk_category_level !== undefined) q = q.where('risk_category_level', '=', query.risk_category_level)
  if (query.created_after !== undefined) q = q.where('created_at', '>', new Date(query.created_after).toISOString())
  if (query.created_before !== undefined) q = q.where('created_at', '<', new Date(query.created_before).toISOString())
  return applyKeyset(q, ks).execute()
}

export async function insertUseCase(db: Db, row: UseCaseRow): Promise<void> {
  await db.insertInto('use_cases').values(row).execute()
}

export async function updateUseCase(db: Db, tenantId: string, id: string, changes: Partial<UseCaseRow>): Promise<void> {
  await db.updateTable('use_cases').set(changes).where('tenant_id', '=', tenantId).where('id', '=', id).execute()
}

export async function deleteUseCase(db: Db, tenantId: string, id: string): Promise<void> {
  await db.deleteFrom('use_cases').where('tenant_id', '=', tenantId).where('id', '=', id).execute()
}
