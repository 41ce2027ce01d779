import { Readable } from 'node:stream'
import type { AuditLogRow } from '../../db/tables.js'
import { AppError, notFound } from '../../http/errors.js'
import type { Ctx } from '../../shared/context.js'
import type { Deps } from '../../shared/deps.js'
import { auditHash, GENESIS_HASH } from '../../shared/mutation.js'
import { keyset, type Page, toPage } from '../../shared/pagination.js'
import * as repo from './audit-logs.repo.js'
import { csvHeader, csvRow, ndjsonRow } from './audit-export.js'
import type { AuditLog, AuditLogExportQuery, AuditLogListQuery, AuditVerification } from './audit-logs.schemas.js'

export type AuditLogsService = ReturnType<typeof createAuditLogsService>

/**
 * Rows per read while exporting or verifying. SQLite reads block the event loop, so a batch must be short
 * enough (a few ms) that other tenants' requests served between batches keep their latency.
 */
const EXPORT_BATCH = 500
const EXPORT_CHUNK = 50
/** Exports one tenant may run at once on an instance; more answer 429. */
export const EXPORTS_PER_TENANT = 3
/** Exports running in this process, by tenant. */
const runningExports = new Map<string, number>()

export function createAuditLogsService(deps: Pick<Deps, 'database'>) {
  const { db, dialect } = deps.database

  /** Every matching record as export lines, read in keyset batches so memory stays flat however many there are. */
  async function* exportLines(ctx: Ctx, query: AuditLogExportQuery): AsyncGenerator<string> {
    const { format, sort, ...filter } = query
    const toLine = format === 'csv' ? csvRow : ndjsonRow
    if (format === 'csv') yield csvHeader
    let ks = keyset({ sort, page_limit: EXPORT_BATCH }, repo.AUDIT_SORT_COLUMNS)
    for (;;) {
      const page = toPage(await repo.listAuditLogs(db, dialect, ctx.tenantId, filter, ks), ks, (row) => toLine(toAuditLog(row)))
      // Lines go out in small chunks while the rows they came from are already garbage: what waits in the
      // stream's buffer stays small and dies young instead of filling the old generation.
      for (let i = 0; i < page.items.length; i += EXPORT_CHUNK) yield page.items.slice(i, i + EXPORT_CHUNK).join('')
      if (!page.pagination.next_cursor) return
      ks = keyset({ sort, page_limit: EXPORT_BATCH, page_after: page.pagination.next_cursor }, repo.AUDIT_SORT_COLUMNS)
      await yieldToOthers()
    }
  }

  return {
    async list(ctx: Ctx, query: AuditLogListQuery): Promise<Page<AuditLog>> {
      const { page_limit, page_after, sort, ...filter } = query
      const ks = keyset({ page_limit, page_after, sort }, repo.AUDIT_SORT_COLUMNS)
      return toPage(await repo.listAuditLogs(db, dialect, ctx.tenantId, filter, ks), ks, toAuditLog)
    },

    /**
     * The export as a stream. Refused with 429 while the tenant already runs EXPORTS_PER_TENANT exports here;
     * the slot is freed when the stream closes, whether it ended, failed or its client went away.
     */
    export(ctx: Ctx, query: AuditLogExportQuery): Readable {
      const running = runningExports.get(ctx.tenantId) ?? 0
      if (running >= EXPORTS_PER_TENANT) {
        throw new AppError('rate_limited', `this tenant already runs ${running} audit exports; retry when one has finished`, undefined, { retry_after: 5 })
      }
      runningExports.set(ctx.tenantId, running + 1)
      const stream = Readable.from(exportLines(ctx, query))
      stream.once('close', () => {
        const left = (runningExports.get(ctx.tenantId) ?? 1) - 1
        if (left > 0) runningExports.set(ctx.tenantId, left)
        else runningExports.delete(ctx.tenantId)
      })
      return stream
    },

    /** Recomputes the tenant's hash chain in sequence and names the first record that does not match. */
    async verify(ctx: Ctx): Promise<AuditVerification> {
      let checked = 0
      let prevHash = GENESIS_HASH
      let afterSeq = 0
      for (;;) {
        const rows = await repo.auditChainBatch(db, ctx.tenantId, afterSeq, EXPORT_BATCH)
        for (const row of rows) {
          const { hash, ...content } = row
          if (row.seq !== afterSeq + 1 || row.prev_hash !== prevHash || auditHash(content) !== hash) {
            return { ok: false, checked, first_bad_id: row.id }
          }
          checked += 1
          afterSeq = row.seq
          prevHash = hash
        }
        if (rows.length < EXPORT_BATCH) break
        await yieldToOthers()
      }
      // Records removed from the end would leave a shorter, still consistent chain: compare with the tenant's head.
      const head = await repo.auditChainHead(db, ctx.tenantId)
      if (head && (head.audit_seq !== afterSeq || head.audit_head !== prevHash)) return { ok: false, checked, first_bad_id: null }
      return { ok: true, checked, first_bad_id: null }
    },

    async get(ctx: Ctx, id: string): Promise<AuditLog> {
      const row = await repo.findAuditLog(db, ctx.tenantId, id)
      if (!row) throw notFound('audit log', id)
      return toAuditLog(row)
    },
  }
}

/** Lets the event loop serve other requests (timers, sockets) before the next synchronous SQLite read. */
const yieldToOthers = () => new Promise<void>((resolve) => setImmediate(resolve))

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
