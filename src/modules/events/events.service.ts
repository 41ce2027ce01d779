import { sql } from 'kysely'
import type { AuditLogRow } from '../../db/tables.js'
import { AppError } from '../../http/errors.js'
import type { Ctx } from '../../shared/context.js'
import type { Deps } from '../../shared/deps.js'
import { toAuditLog } from '../audit-logs/audit-logs.service.js'
import type { EventStreamQuery } from './events.schemas.js'

/** Records one batch reads at most. */
export const BATCH_RECORDS = 200
/** Bytes of records one batch reads at most (a record larger than this is read alone). */
export const BATCH_BYTES = 512 * 1024
/** What a record's other fields (names, ids, actor) add to its `changes` and `metadata`, at most. */
const RECORD_OVERHEAD_BYTES = 2048
const AUDIT_ID = /^al_[0-9a-z]{26}$/

export type EventsService = ReturnType<typeof createEventsService>

/** A batch of an event stream: its `count` matching records after `after` up to `upTo`, holding about `bytes`. */
export interface Batch {
  after: number
  upTo: number
  count: number
  bytes: number
}

export function createEventsService(deps: Pick<Deps, 'database'>) {
  const { db } = deps.database
  const list = (v: string | string[] | undefined) => (v === undefined ? [] : Array.isArray(v) ? v : [v])

  return {
    /** The audit sequence number to stream after: that of `after` (or Last-Event-ID), else the log's end now. */
    async startSeq(ctx: Ctx, after: string | undefined): Promise<number> {
      if (after === undefined) {
        const head = await db
          .selectFrom('tenants')
          .select('audit_seq')
          .where('id', '=', ctx.tenantId)
          .executeTakeFirstOrThrow()
        return head.audit_seq
      }
      const row = AUDIT_ID.test(after)
        ? await db
            .selectFrom('audit_logs')
            .select('seq')
            .where('tenant_id', '=', ctx.tenantId)
            .where('id', '=', after)
            .executeTakeFirst()
        : undefined
      if (!row)
        throw new AppError('bad_request', `after: no audit record ${after} to resume from`, [
          { field: 'after', message: 'unknown audit record' },
        ])
      return row.seq
    },

    /**
     * The next batches of matching records after `seq` (up to BATCH_RECORDS of them in all, each batch at most
     * BATCH_BYTES or one record), and the position after them: the log's head when they reach it. The records'
     * sizes are read first, so that no batch grows with the records. A tenant's sequence numbers are given under
     * its row lock and so commit in order: everything up to the head read here is final.
     */
    async plan(
      ctx: Ctx,
      seq: number,
      filter: Omit<EventStreamQuery, 'after'>,
    ): Promise<{ batches: Batch[]; upTo: number }> {
      const head = await db
        .selectFrom('tenants')
        .select('audit_seq')
        .where('id', '=', ctx.tenantId)
        .executeTakeFirstOrThrow()
      if (head.audit_seq <= seq) return { batches: [], upTo: seq }
      const sizes = await matching(ctx, seq, head.audit_seq, filter)
        // octet_length reads the stored length (SQLite's record header, PostgreSQL's TOAST header), not the text.
        .select([
          'seq',
          sql<number>`coalesce(octet_length(changes), 0) + coalesce(octet_length(metadata), 0)`.as('size'),
        ])
        .orderBy('seq')
        .limit(BATCH_RECORDS)
        .execute()
      const batches: Batch[] = []
      let batch: Batch | undefined
      for (const row of sizes) {
        const size = Number(row.size) + RECORD_OVERHEAD_BYTES
        if (!batch || batch.bytes + size > BATCH_BYTES)
          batches.push((batch = { after: batch?.upTo ?? seq, upTo: row.seq, count: 0, bytes: 0 }))
        batch.upTo = row.seq
        batch.count++
        batch.bytes += size
      }
      return { batches, upTo: sizes.length === BATCH_RECORDS ? sizes[sizes.length - 1].seq : head.audit_seq }
    },

    /** A batch `plan` made, as server-sent events. */
    async read(ctx: Ctx, batch: Batch, filter: Omit<EventStreamQuery, 'after'>): Promise<string[]> {
      const rows = await matching(ctx, batch.after, batch.upTo, filter)
        .selectAll()
        .orderBy('seq')
        .limit(batch.count)
        .execute()
      return rows.map(toEvent)
    },
  }

  function matching(ctx: Ctx, after: number, upTo: number, filter: Omit<EventStreamQuery, 'after'>) {
    let q = db
      .selectFrom('audit_logs')
      .where('tenant_id', '=', ctx.tenantId)
      .where('seq', '>', after)
      .where('seq', '<=', upTo)
    const actions = list(filter.action)
    const types = list(filter.resource_type)
    if (actions.length > 0) q = q.where('action', 'in', actions)
    if (types.length > 0) q = q.where('resource_type', 'in', types)
    if (filter.use_case_id !== undefined) q = q.where('use_case_id', '=', filter.use_case_id)
    return q
  }
}

/** One server-sent event: the record's id (to resume from), its action as the event name, the record as data. */
function toEvent(row: AuditLogRow): string {
  return `id: ${row.id}\nevent: ${row.action}\ndata: ${JSON.stringify(toAuditLog(row))}\n\n`
}
