import type { Kysely } from 'kysely'
import type { VendorRow, Tables } from '../../db/tables.js'
import { applyKeyset, type Keyset } from '../../shared/pagination.js'
import { containsText } from '../../shared/search.js'
import type { VendorListQuery } from './vendors.schemas.js'
import { forChange } from '../../shared/mutation.js'

type Db = Kysely<Tables>

export const VENDOR_SORT_COLUMNS = { name: 'name_key', created_at: 'created_at', updated_at: 'updated_at' }

export function findVendor(db: Db, tenantId: string, id: string): Promise<VendorRow | undefined> {
  return forChange(db, db.selectFrom('vendors').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id)).executeTakeFirst()
}

export function listVendors(db: Db, tenantId: string, query: VendorListQuery, ks: Keyset): Promise<VendorRow[]> {
  let q = db.selectFrom('vendors').selectAll().where('tenant_id', '=', tenantId)
  if (query.q !== undefined) q = q.where(containsText('name_key', query.q))
  if (query.status !== undefined) q = q.where('status', '=', query.status)
  return applyKeyset(q, ks).execute()
}

export async function insertVendor(db: Db, row: VendorRow): Promise<void> {
  await db.insertInto('vendors').values(row).execute()
}

export async function updateVendor(db: Db, tenantId: string, id: string, changes: Partial<VendorRow>): Promise<void> {
  await db.updateTable('vendors').set(changes).where('tenant_id', '=', tenantId).where('id', '=', id).execute()
}

export async function deleteVendor(db: Db, tenantId: string, id: string): Promise<void> {
  await db.deleteFrom('vendors').where('tenant_id', '=', tenantId).where('id', '=', id).execute()
}
