import type { Kysely } from 'kysely'
import type { AuditLogRow, Tables } from '../../db/tables.js'
import { idFloor } from '../../shared/ids.js'
import { applyKeyset, type Keyset } from '../../shared/pagination.js'
import { containsText } from '../../shared/search.js'
import type { AuditLogListQuery } from './audit-logs.schemas.js'

type Db = Kysely<Tables>

export const AUDIT_SORT_COLUMNS = { created_at: 'created_at' }

export type AuditFilter = Omit<AuditLogListQuery, 'page_limit' | 'page_after' | 'sort'>

export function findAuditLog(db: Db, tenantId: string, id: string): Promise<AuditLogRow | undefined> {
  return db.selectFrom('audit_logs').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst()
}

export function filteredAuditLogs(db: Db, tenantId: string, filter: AuditFilter) {
  const list = (v: string | string[] | undefined) => (v === undefined ? undefined : Array.isArray(v) ? v : [v])
  const actions = list(filter.action)
  const types = list(filter.resource_type)
  let q = db.selectFrom('audit_logs').selectAll().where('tenant_id', '=', tenantId)
  if (actions?.length) q = q.where('action', 'in', actions)
  if (types?.length) q = q.where('resource_type', 'in', types)
  if (filter.resource_id !== undefined) q = q.where('resource_id', '=', filter.resource_id)
  if (filter.use_case_id !== undefined) q = q.where('use_case_id', '=', filter.use_case_id)
  if (filter.actor_id !== undefined) q = q.where('actor_id', '=', filter.actor_id)
  if (filter.source !== undefined) q = q.where('source', '=', filter.source)
  if (filter.start_time !== undefined) {
    const start = new Date(filter.start_time)
    // The id bound is implied by the time bound; it lets every (tenant_id, <filter>, id) index skip older records.
    q = q.where('created_at', '>=', start.toISOString()).where('id', '>=', idFloor('al', start.getTime()))
  }
  if (filter.end_time !== undefined) q = q.where('created_at', '<', new Date(filter.end_time).toISOString())
  if (filter.q !== undefined) q = q.where(containsText('resource_name', filter.q, false))
  return q
}

export function listAuditLogs(db: Db, tenantId: string, filter: AuditFilter, ks: Keyset): Promise<AuditLogRow[]> {
  return applyKeyset(filteredAuditLogs(db, tenantId, filter), ks).execute()
}

export function auditChainBatch(db: Db, tenantId: string, afterSeq: number, limit: number): Promise<AuditLogRow[]> {
  return db.selectFrom('audit_logs').selectAll().where('tenant_id', '=', tenantId).where('seq', '>', afterSeq).orderBy('seq').limit(limit).execute()
}

export function auditChainHead(db: Db, tenantId: string) {
  return db.selectFrom('tenants').select(['audit_seq', 'audit_head']).where('id', '=', tenantId).executeTakeFirst()
}
