import type { AuditLogRow } from '../../db/tables.js'
import { notFound } from '../../http/errors.js'
import type { Ctx } from '../../shared/context.js'
import type { Deps } from '../../shared/deps.js'
import { keyset, type Page, toPage } from '../../shared/pagination.js'
import * as repo from './audit-logs.repo.js'
import type { AuditLog, AuditLogListQuery } from './audit-logs.schemas.js'

export type AuditLogsService = ReturnType<typeof createAuditLogsService>

export function createAuditLogsService(deps: Pick<Deps, 'database'>) {
  const { db } = deps.database
  return {
    async list(ctx: Ctx, query: AuditLogListQuery): Promise<Page<AuditLog>> {
      const { page_limit, page_after, sort, ...filter } = query
      const ks = keyset({ page_limit, page_after, sort }, repo.AUDIT_SORT_COLUMNS)
      return toPage(await repo.listAuditLogs(db, ctx.tenantId, filter, ks), ks, toAuditLog)
    },

    async get(ctx: Ctx, id: string): Promise<AuditLog> {
      const row = await repo.findAuditLog(db, ctx.tenantId, id)
      if (!row) throw notFound('audit log', id)
      return toAuditLog(row)
    },
  }
}

export function toAuditLog(row: AuditLogRow): AuditLog {
  return {
    id: row.id,
    created_at: row.created_at,
    action: row.action,
    resource_type: row.resource_type,
    resource_id: row.resource_id,
    resource_name: row.resource_name,
    sub_object_type: row.sub_object_type,
    sub_object_id: row.sub_object_id,
    sub_object_name: row.sub_object_name,
    use_case_id: row.use_case_id,
    actor: { type: row.actor_type as AuditLog['actor']['type'], id: row.actor_id, name: row.actor_name },
    source: row.source as AuditLog['source'],
    request_id: row.request_id,
    changes: row.changes === null ? null : (JSON.parse(row.changes) as AuditLog['changes']),
    metadata: row.metadata === null ? null : (JSON.parse(row.metadata) as AuditLog['metadata']),
  }
}
