import { AsyncLocalStorage } from 'node:async_hooks'
import type { Kysely } from 'kysely'
import type { DialectName } from '../db/create-db.js'
import { LOCKING_READS } from '../db/locking-reads.js'
import type { AuditLogRow, Tables } from '../db/tables.js'
import type { AuditedDatabase, Audited, AuditEntry } from './audit-append.js'
import type { Ctx } from './context.js'
import { now } from './ids.js'

export type { AuditEntry, AuditedDatabase }
export type Tx = Kysely<Tables>

export interface MutationOutcome<T> {
  result: T
  audit: AuditEntry | AuditEntry[]
}

export const GENESIS_HASH = '0'.repeat(64)

/**
 * A row read to compute a change (PATCH's "before", a revocation, a workflow move) must not change before the
 * write. SQLite mutations hold the database's write lock from their start; in a PostgreSQL group transaction (marked
 * LOCKING_READS) the read locks its rows FOR NO KEY UPDATE (like an UPDATE does, so rows referencing them by foreign
 * key can still be inserted), and concurrent writers of one row queue instead of recording stale "before" values.
 * Elsewhere the query is unchanged.
 */
export function forChange<Q extends { forNoKeyUpdate(): Q }>(db: Kysely<Tables>, query: Q): Q {
  return db.getExecutor().plugins.includes(LOCKING_READS) ? query.forNoKeyUpdate() : query
}

/** A tenant's record by id, read to compute a change (locked as forChange says); any family's table. */
export function findForChange<T extends keyof Tables & string>(
  db: Kysely<Tables>,
  table: T,
  tenantId: string,
  id: string,
): Promise<Tables[T] | undefined> {
  // Written once for every family's table, so it addresses the table by name.
  const query = (db as unknown as Kysely<Record<string, { id: string; tenant_id: string }>>)
    .selectFrom(table as string)
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
  return forChange(db, query).executeTakeFirst() as Promise<Tables[T] | undefined>
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
 * (see Database.groupedTransaction): the tenant's chain head is locked from its read to the commit, and one read and one
 * append for the whole group is one wait for the tenant's other writers instead of one per mutation. `locks` names
 * the rows `work` locks to change them (see TransactionOptions.locks).
 */
export async function runMutation<T>(
  database: AuditedDatabase,
  ctx: Ctx,
  work: (tx: Tx) => Promise<MutationOutcome<T>>,
  locks?: readonly string[],
): Promise<T> {
  return (await runRecordedMutation(database, ctx, work, locks)).result
}

/** runMutation, answering its audit records too (in the order of its audit entries) once committed. */
export async function runRecordedMutation<T>(
  database: AuditedDatabase,
  ctx: Ctx,
  work: (tx: Tx) => Promise<MutationOutcome<T>>,
  locks?: readonly string[],
): Promise<{ result: T; appended: AuditLogRow[] }> {
  const outer = enclosing.getStore()
  if (outer && outer.database === database && outer.ctx.tenantId === ctx.tenantId) {
    // Part of the enclosing mutation: its transaction, its audit records (appended when it commits).
    const { result, audit } = await work(outer.tx)
    outer.entries.push(...(Array.isArray(audit) ? audit : [audit]))
    return { result, appended: [] }
  }
  const { result, entries, appended } = await database.groupedTransaction(
    async (tx): Promise<Audited<T>> => {
      const { result, audit } = await work(tx)
      return { result, ctx, entries: Array.isArray(audit) ? audit : [audit], appended: [] }
    },
    { group: ctx.tenantId, locks, finish: database.audit.finish },
  )
  if (entries.length > 0) database.commits.emit('audit', ctx.tenantId, appended)
  return { result, appended }
}

interface Enclosing {
  database: AuditedDatabase
  ctx: Ctx
  tx: Tx
  entries: AuditEntry[]
}
const enclosing = new AsyncLocalStorage<Enclosing>()

/**
 * Runs `work` as one mutation in which the families' own service calls join: every runMutation it makes (for the
 * same database and tenant) runs in this transaction and adds its audit records to it, so that many changes
 * commit together or not at all (a configuration apply). `summary` is appended after their records, if any.
 */
export async function runEnclosingMutation<T>(
  database: AuditedDatabase,
  ctx: Ctx,
  work: (tx: Tx) => Promise<{ result: T; summary: (entries: readonly AuditEntry[]) => AuditEntry }>,
): Promise<T> {
  return runMutation(database, ctx, async (tx) => {
    const entries: AuditEntry[] = []
    const { result, summary } = await enclosing.run({ database, ctx, tx, entries }, () => work(tx))
    // Nothing changed, nothing recorded (as a PATCH that changes nothing).
    return { result, audit: entries.length > 0 ? [...entries, summary(entries)] : [] }
  })
}

/**
 * The PATCH step every family shares, the catalog's included: compare `before` and `after` on the audited fields
 * (plus `alsoChanged`, changes kept outside the record such as custom field values); when something changed,
 * `write` it with a fresh updated_at and return the audit entry describing it and what `write` returned; when
 * nothing did, write and audit nothing.
 */
export async function auditedUpdate<T extends { updated_at: string }, W = void>(
  update: {
    before: T
    after: T
    fields: readonly (keyof T & string)[]
    audit: Omit<AuditEntry, 'changes'>
    alsoChanged?: Record<string, [unknown, unknown]>
    /** What a PATCH that changes nothing answers: `before` unless given (the catalog's other writes may show in it). */
    unchanged?: T
  },
  write: (updatedAt: string, changes: Record<string, [unknown, unknown]>) => Promise<W>,
): Promise<MutationOutcome<T> & { written?: W }> {
  const changes = { ...diff(update.before, update.after, update.fields), ...update.alsoChanged }
  if (Object.keys(changes).length === 0) return { result: update.unchanged ?? update.before, audit: [] }
  const updatedAt = now()
  const written = await write(updatedAt, changes)
  return { result: { ...update.after, updated_at: updatedAt }, audit: { ...update.audit, changes }, written }
}

/** The record a create is compared against: every field empty (null, or [] for a list). */
export function blank<T extends object>(item: T): T {
  return Object.fromEntries(Object.entries(item).map(([key, value]) => [key, Array.isArray(value) ? [] : null])) as T
}

/** What a create's audit record lists: each of `fields` from empty to what was created; null when all are empty. */
export function createdChanges<T extends object>(
  created: T,
  fields: readonly (keyof T & string)[],
): Record<string, [unknown, unknown]> | null {
  return diff(blank(created), created, fields)
}

/** Field-by-field [before, after] for the fields that changed; null when nothing did. */
export function diff<T extends object>(
  before: T,
  after: T,
  fields: readonly (keyof T & string)[],
): Record<string, [unknown, unknown]> | null {
  const changes: Record<string, [unknown, unknown]> = {}
  for (const field of fields) {
    if (JSON.stringify(before[field]) !== JSON.stringify(after[field])) changes[field] = [before[field], after[field]]
  }
  return Object.keys(changes).length > 0 ? changes : null
}
