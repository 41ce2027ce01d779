import type { CompiledQuery, Kysely } from 'kysely'
import type { Database, DialectName } from '../db/create-db.js'
import type { AuditLogRow, Tables } from '../db/tables.js'
import { type AuditKeys, auditHash } from './audit-chain.js'
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

/** The transactions runMutation opened on PostgreSQL: reads in them take row locks (see forChange). */
const lockingTransactions = new WeakSet<object>()

/**
 * A row read to compute a change (PATCH's "before", a revocation, a workflow move) must not change before the
 * write. SQLite mutations hold the database's write lock from their start; on PostgreSQL a read inside a mutation
 * locks its rows FOR NO KEY UPDATE (like an UPDATE does, so rows referencing them by foreign key can still be
 * inserted), and concurrent writers of one row queue instead of recording stale "before" values.
 * Outside a mutation the query is unchanged.
 */
export function forChange<Q extends { forNoKeyUpdate(): Q }>(db: object, query: Q): Q {
  return lockingTransactions.has(db) ? query.forNoKeyUpdate() : query
}

/** A read compiled once, to run only inside mutations: it locks its rows where forChange would there. */
export function forChangeInMutation<Q extends { forNoKeyUpdate(): Q }>(dialect: DialectName, query: Q): Q {
  return dialect === 'postgres' ? query.forNoKeyUpdate() : query
}

/**
 * Runs `work` in one transaction and writes its audit records in that same transaction,
 * so a change and its audit trail commit or vanish together. Work that finds nothing to change
 * returns an empty audit list and writes nothing.
 *
 * The records are appended when the transaction is about to commit, for every mutation committing with it at once
 * (see Database.transaction): the tenant's chain head is locked from its read to the commit, and one read and one
 * append for the whole group is one wait for the tenant's other writers instead of one per mutation. `locks` names
 * the rows `work` locks to change them (see TransactionOptions.locks).
 */
export async function runMutation<T>(database: Database, ctx: Ctx, work: (tx: Tx) => Promise<MutationOutcome<T>>, locks?: readonly string[]): Promise<T> {
  return (await runRecordedMutation(database, ctx, work, locks)).result
}

/** runMutation, answering its audit records too (in the order of its audit entries) once committed. */
export async function runRecordedMutation<T>(
  database: Database,
  ctx: Ctx,
  work: (tx: Tx) => Promise<MutationOutcome<T>>,
  locks?: readonly string[],
): Promise<{ result: T; appended: AuditLogRow[] }> {
  const { result, entries, appended } = await database.transaction(
    async (tx): Promise<Audited<T>> => {
      if (database.dialect === 'postgres') lockingTransactions.add(tx)
      const { result, audit } = await work(tx)
      return { result, ctx, entries: Array.isArray(audit) ? audit : [audit], appended: [] }
    },
    { group: ctx.tenantId, locks, finish: auditAppender(database) },
  )
  if (entries.length > 0) database.commits.emit('audit', ctx.tenantId, appended)
  return { result, appended }
}

/** A mutation's outcome as its transaction's group appends it to the audit log. */
interface Audited<T> {
  result: T
  ctx: Ctx
  entries: AuditEntry[]
  /** The records appended for `entries`, in chain order: filled by the group's finishing step. */
  appended: AuditLogRow[]
}

const appenders = new WeakMap<Database, (tx: Tx, outcomes: Audited<unknown>[]) => Promise<void>>()

/** The database's one finishing step for mutations (one function, so that all mutations of a group share it). */
function auditAppender(database: Database): (tx: Tx, outcomes: Audited<unknown>[]) => Promise<void> {
  let append = appenders.get(database)
  if (!append) {
    append = async (tx, outcomes) => {
      const keys = chainKeys(database)
      // Tenants in one order, so that two groups never wait for each other's chain heads.
      const byTenant = new Map<string, { ctx: Ctx; entry: AuditEntry; outcome: Audited<unknown> }[]>()
      for (const outcome of outcomes) {
        for (const entry of outcome.entries) {
          const list = byTenant.get(outcome.ctx.tenantId)
          if (list) list.push({ ctx: outcome.ctx, entry, outcome })
          else byTenant.set(outcome.ctx.tenantId, [{ ctx: outcome.ctx, entry, outcome }])
        }
      }
      for (const tenantId of [...byTenant.keys()].sort()) {
        const appending = byTenant.get(tenantId)!
        const rows = await appendAudit(tx, database, keys, tenantId, appending)
        appending.forEach(({ outcome }, i) => outcome.appended.push(rows[i]))
      }
    }
    appenders.set(database, append)
  }
  return append
}

/**
 * Appends to the tenant's hash chain; the tenant row lock keeps concurrent writers from forking it.
 * FOR NO KEY UPDATE, not FOR UPDATE: rows inserted in this transaction hold KEY SHARE locks on the
 * tenant row through their foreign keys, and FOR UPDATE would deadlock two such writers.
 */
async function appendAudit(tx: Tx, database: Database, keys: AuditKeys, tenantId: string, entries: { ctx: Ctx; entry: AuditEntry }[]): Promise<AuditLogRow[]> {
  const statements = auditStatements(database)
  const [tenant] = (await tx.executeQuery<{ audit_seq: number; audit_head: string }>({ ...statements.head, parameters: [tenantId] })).rows
  if (!tenant) throw new Error(`tenant ${tenantId} not found`)
  let seq = tenant.audit_seq
  let prevHash = tenant.audit_head
  const rows: AuditLogRow[] = []
  for (const { ctx, entry } of entries) {
    seq += 1
    const row = auditRow(keys, ctx, entry, seq, prevHash)
    rows.push(row)
    prevHash = row.hash
  }
  const head = [seq, prevHash, tenantId]
  // The names' index takes the records once they have committed (AuditNameIndexer), not here.
  if (database.dialect === 'postgres') {
    // One round trip for the records and the new head: the tenant row is locked until commit, and every round trip
    // under that lock is a wait for every other writer of the tenant.
    await tx.executeQuery({ ...statements.appendWithHead(rows.length), parameters: [...rows.flatMap(auditValues), ...head] })
    return rows
  }
  for (const row of rows) await tx.executeQuery({ ...statements.append, parameters: auditValues(row) })
  await tx.executeQuery({ ...statements.moveHead, parameters: head })
  return rows
}

const AUDIT_COLUMNS = [
  'id', 'tenant_id', 'seq', 'created_at', 'action', 'resource_type', 'resource_id', 'resource_name', 'sub_object_type', 'sub_object_id',
  'sub_object_name', 'use_case_id', 'actor_type', 'actor_id', 'actor_name', 'source', 'request_id', 'changes', 'metadata', 'prev_hash',
  'hash', 'chain_key_id',
] as const satisfies readonly (keyof AuditLogRow)[]

/** A record's values in the order of AUDIT_COLUMNS, the order its insert was compiled with. */
const auditValues = (row: AuditLogRow) => AUDIT_COLUMNS.map((column) => row[column])

interface AuditStatements {
  head: CompiledQuery
  append: CompiledQuery
  moveHead: CompiledQuery
  /** PostgreSQL: `count` records and the new head in one statement. */
  appendWithHead(count: number): CompiledQuery
}

/** A group's record counts (per tenant) whose PostgreSQL statement is kept compiled; larger ones are compiled each time. */
const KEPT_COUNTS = 32
const compiledAudit = new WeakMap<Database, AuditStatements>()

/**
 * The audit append's statements, compiled once per database with placeholder values and run with each write's:
 * building them with the query builder cost about 10 µs of every write, an eighth of what a create's statements
 * cost SQLite to run.
 */
function auditStatements(database: Database): AuditStatements {
  const kept = compiledAudit.get(database)
  if (kept) return kept
  const { db } = database
  const placeholder = Object.fromEntries(AUDIT_COLUMNS.map((column) => [column, ''])) as unknown as AuditLogRow
  const records = (count: number) => Array.from({ length: count }, () => placeholder)
  const moveHead = db.updateTable('tenants').set({ audit_seq: 0, audit_head: '' }).where('id', '=', '')
  let head = db.selectFrom('tenants').select(['audit_seq', 'audit_head']).where('id', '=', '')
  if (database.dialect === 'postgres') head = head.forNoKeyUpdate()
  const withHead = (count: number) => db.with('appended', (w) => w.insertInto('audit_logs').values(records(count))).updateTable('tenants').set({ audit_seq: 0, audit_head: '' }).where('id', '=', '').compile()
  const counts = new Map<number, CompiledQuery>()
  const statements: AuditStatements = {
    head: head.compile(),
    append: db.insertInto('audit_logs').values(placeholder).compile(),
    moveHead: moveHead.compile(),
    appendWithHead(count) {
      if (count > KEPT_COUNTS) return withHead(count)
      let compiled = counts.get(count)
      if (!compiled) counts.set(count, (compiled = withHead(count)))
      return compiled
    },
  }
  compiledAudit.set(database, statements)
  return statements
}

/** The audit keys of a database; a path that opened one without createDeps would otherwise write an unkeyed chain. */
export function chainKeys(database: Database): AuditKeys {
  if (!database.audit) throw new Error('audit chain keys are not set on this database (createDeps sets them)')
  return database.audit
}

function auditRow(keys: AuditKeys, ctx: Ctx, entry: AuditEntry, seq: number, prevHash: string): AuditLogRow {
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
    chain_key_id: keys.chain.id,
  }
  const stored = asStored(row)
  return { ...stored, hash: auditHash(stored, keys)! }
}

/**
 * The record as the database will hand it back: a lone surrogate that reached here by a path that skipped input
 * checks (CLI, internal names) is stored as U+FFFD, so the hash is computed over that, never over the text as sent.
 */
function asStored<T extends object>(row: T): T {
  return Object.fromEntries(Object.entries(row).map(([k, v]) => [k, typeof v === 'string' ? v.toWellFormed() : v])) as T
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
