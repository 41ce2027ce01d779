import type { AuditLogRow } from '../../db/tables.js'
import { AppError } from '../../http/errors.js'
import type { Ctx } from '../../shared/context.js'
import type { Deps } from '../../shared/deps.js'
import { toAuditLog } from '../audit-logs/audit-logs.service.js'
import type { EventStreamQuery } from './events.schemas.js'

const BATCH = 200
const AUDIT_ID = /^al_[0-9a-z]{26}$/

export type EventsService = ReturnType<typeof createEventsService>

export function createEventsService(deps: Pick<Deps, 'database'>) {
  const { db } = deps.database
  const list = (v: string | string[] | undefined) => (v === undefined ? [] : Array.isArray(v) ? v : [v])

  return {
    /** The audit sequence number to stream after: that of `after` (or Last-Event-ID), else the log's end now. */
    async startSeq(ctx: Ctx, after: string | undefined): Promise<number> {
      if (after === undefined) {
        const head = await db.selectFrom('tenants').select('audit_seq').where('id', '=', ctx.tenantId).executeTakeFirstOrThrow()
        return head.audit_seq
      }
      const row = AUDIT_ID.test(after) ? await db.selectFrom('audit_logs').select('seq').where('tenant_id', '=', ctx.tenantId).where('id', '=', after).executeTakeFirst() : undefined
      if (!row) throw new AppError('bad_request', `after: no audit record ${after} to resume from`, [{ field: 'after', message: 'unknown audit record' }])
      return row.seq
    },

    /**
     * The matching records committed after `seq`, and the sequence number to continue from. A tenant's sequence
     * numbers are given under its row lock and so commit in order: everything up to the head read here is final.
     */
    async after(ctx: Ctx, seq: number, filter: Omit<EventStreamQuery, 'after'>): Promise<{ events: string[]; seq: number }> {
      const head = await db.selectFrom('tenants').select('audit_seq').where('id', '=', ctx.tenantId).executeTakeFirstOrThrow()
      if (head.audit_seq <= seq) return { events: [], seq }
      let q = db.selectFrom('audit_logs').selectAll().where('tenant_id', '=', ctx.tenantId).where('seq', '>', seq).where('seq', '<=', head.audit_seq)
      const actions = list(filter.action)
      const types = list(filter.resource_type)
      if (actions.length > 0) q = q.where('action', 'in', actions)
      if (types.length > 0) q = q.where('resource_type', 'in', types)
      if (filter.use_case_id !== undefined) q = q.where('use_case_id', '=', filter.use_case_id)
      const rows = await q.orderBy('seq').limit(BATCH).execute()
      return { events: rows.map(toEvent), seq: rows.length === BATCH ? rows[rows.length - 1].seq : head.audit_seq }
    },
  }
}

/** One server-sent event: the record's id (to resume from), its action as the event name, the record as data. */
function toEvent(row: AuditLogRow): string {
  return `id: ${row.id}\nevent: ${row.action}\ndata: ${JSON.stringify(toAuditLog(row))}\n\n`
}
