import { createHash } from 'node:crypto'
import { type Kysely, sql } from 'kysely'
import type { Database } from '../db/create-db.js'
import type { AuditLogRow, Tables } from '../db/tables.js'
import type { Ctx } from './context.js'
import { newId, now } from './ids.js'

export type Tx = Kysely<Tables>

/** What one mutation tells the audit log. `changes` maps a field to [before, after]. */
export interface AuditEntry {
  action: string
  resourceType: string
  resourceId: string | null
  resourceName?: string | null
  subObjectType?: string | null
  subObjectId?: string | null
  subObjectName?: string | null
  useCaseId?: string | null
  changes?: Record<string, [unknown, unknown]> | null
  metadata?: Record<string, unknown> | null
}

export interface MutationOutcome<T> {
  result: T
  audit: AuditEntry | AuditEntry[]
}

export const GENESIS_HASH = '0'.repeat(64)

/**
 * Runs `work` in one transaction and writes its audit records in that same transaction,
 * so a change and its audit trail commit or vanish together. Work that finds nothing to change
 * returns an empty audit list and writes nothing.
 */
export async function runMutation<T>(database: Database, ctx: Ctx, work: (tx: Tx) => Promise<MutationOutcome<T>>): Promise<T> {
  // SQLite: take the write lock up front so concurrent processes queue on busy_timeout instead of failing mid-transaction.
  const begin = database.dialect === 'sqlite' ? sql`begin immediate` : sql`begin`
  return database.db.connection().execute(async (tx) => {
    await begin.execute(tx)
    try {
      const { result, audit } = await work(tx)
      const entries = Array.isArray(audit) ? audit : [audit]
      if (entries.length > 0) await appendAudit(tx, database.dialect, ctx, entries)
      await sql`commit`.execute(tx)
      if (entries.length > 0) database.commits.emit('audit', ctx.tenantId)
      return result
    } catch (err) {
      await sql`rollback`.execute(tx).catch(() => undefined)
      throw err
    }
  })
}

/**
 * Appends to the tenant's hash chain; the tenant row lock keeps concurrent writers from forking it.
 * FOR NO KEY UPDATE, not FOR UPDATE: rows inserted in this transaction hold KEY SHARE locks on the
 * tenant row through their foreign keys, and FOR UPDATE would deadlock two such writers.
 */
async function appendAudit(tx: Tx, dialect: Database['dialect'], ctx: Ctx, entries: AuditEntry[]): Promise<void> {
  let head = tx.selectFrom('tenants').select(['audit_seq', 'audit_head']).where('id', '=', ctx.tenantId)
  if (dialect === 'postgres') head = head.forNoKeyUpdate()
  const tenant = await head.executeTakeFirstOrThrow()
  let seq = tenant.audit_seq
  let prevHash = tenant.audit_head
  const rows: AuditLogRow[] = []
  for (const entry of entries) {
    seq += 1
    const row = auditRow(ctx, entry, seq, prevHash)
    rows.push(row)
    prevHash = row.hash
  }
  await tx.insertInto('audit_logs').values(rows).execute()
  await tx.updateTable('tenants').set({ audit_seq: seq, audit_head: prevHash }).where('id', '=', ctx.tenantId).execute()
}

function auditRow(ctx: Ctx, entry: AuditEntry, seq: number, prevHash: string): AuditLogRow {
  const at = Date.now()
  const row: Omit<AuditLogRow, 'hash'> = {
    // id and created_at from one clock reading: the id's time is then never earlier (see idFloor).
    id: newId('al', at),
    tenant_id: ctx.tenantId,
    seq,
    created_at: new Date(at).toISOString(),
    action: entry.action,
    resource_type: entry.resourceType,
    resource_id: entry.resourceId,
    resource_name: entry.resourceName ?? null,
    sub_object_type: entry.subObjectType ?? null,
    sub_object_id: entry.subObjectId ?? null,
    sub_object_name: entry.subObjectName ?? null,
    use_case_id: entry.useCaseId ?? null,
    actor_type: ctx.actor.type,
    actor_id: ctx.actor.id,
    actor_name: ctx.actor.name,
    source: ctx.source,
    request_id: ctx.requestId,
    changes: entry.changes ? JSON.stringify(entry.changes) : null,
    metadata: entry.metadata ? JSON.stringify(entry.metadata) : null,
    prev_hash: prevHash,
  }
  return { ...row, hash: auditHash(row) }
}

const HASHED_FIELDS = [
  'id', 'tenant_id', 'seq', 'created_at', 'action', 'resource_type', 'resource_id', 'resource_name',
  'sub_object_type', 'sub_object_id', 'sub_object_name', 'use_case_id', 'actor_type', 'actor_id',
  'actor_name', 'source', 'request_id', 'changes', 'metadata', 'prev_hash',
] as const

/** SHA-256 over the previous hash and the record's canonical content (fixed field order). */
export function auditHash(row: Omit<AuditLogRow, 'hash'>): string {
  const canonical = JSON.stringify(HASHED_FIELDS.map((field) => row[field]))
  return createHash('sha256').update(canonical).digest('hex')
}

/**
 * The PATCH step every family shares: compare `before` and `after` on the audited fields; when something
 * changed, `write` it with a fresh updated_at and return the audit entry describing it; when nothing did,
 * write and audit nothing.
 */
export async function auditedUpdate<T extends { updated_at: string }>(
  update: { before: T; after: T; fields: readonly (keyof T & string)[]; audit: Omit<AuditEntry, 'changes'> },
  write: (updatedAt: string, changes: Record<string, [unknown, unknown]>) => Promise<void>,
): Promise<MutationOutcome<T>> {
  const changes = diff(update.before, update.after, update.fields)
  if (!changes) return { result: update.before, audit: [] }
  const updatedAt = now()
  await write(updatedAt, changes)
  return { result: { ...update.after, updated_at: updatedAt }, audit: { ...update.audit, changes } }
}

/** Field-by-field [before, after] for the fields that changed; null when nothing did. */
export function diff<T extends object>(before: T, after: T, fields: readonly (keyof T & string)[]): Record<string, [unknown, unknown]> | null {
  const changes: Record<string, [unknown, unknown]> = {}
  for (const field of fields) {
    if (JSON.stringify(before[field]) !== JSON.stringify(after[field])) changes[field] = [before[field], after[field]]
  }
  return Object.keys(changes).length > 0 ? changes : null
}
