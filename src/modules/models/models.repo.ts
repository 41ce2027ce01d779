import type { Kysely } from 'kysely'
import type { ModelRow, Tables } from '../../db/tables.js'
import { applyKeyset, type Keyset } from '../../shared/pagination.js'
import { containsText } from '../../shared/search.js'
import type { ModelListQuery } from './models.schemas.js'
import { forChange } from '../../shared/mutation.js'

type Db = Kysely<Tables>

export const MODEL_SORT_COLUMNS = { name: 'name_key', created_at: 'created_at', updated_at: 'updated_at' }

export function findModel(db: Db, tenantId: string, id: string): Promise<ModelRow | undefined> {
  return forChange(db, db.selectFrom('models').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id)).executeTakeFirst()
}

export function listModels(db: Db, tenantId: string, query: ModelListQuery, ks: Keyset): Promise<ModelRow[]> {
  let q = db.selectFrom('models').selectAll().where('tenant_id', '=', tenantId)
  if (query.q !== undefined) q = q.where(containsText('name_key', query.q))
  if (query.status !== undefined) q = q.where('status', '=', query.status)
  return applyKeyset(q, ks).execute()
}

export async function insertModel(db: Db, row: ModelRow): Promise<void> {
  await db.insertInto('models').values(row).execute()
}

export async function updateModel(db: Db, tenantId: string, id: string, changes: Partial<ModelRow>): Promise<void> {
  await db.updateTable('models').set(changes).where('tenant_id', '=', tenantId).where('id', '=', id).execute()
}

export async function deleteModel(db: Db, tenantId: string, id: string): Promise<void> {
  await db.deleteFrom('models').where('tenant_id', '=', tenantId).where('id', '=', id).execute()
}
