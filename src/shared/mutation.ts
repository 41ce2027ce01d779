import { AsyncLocalStorage } from 'node:async_hooks'
import { type CompiledQuery, type Kysely, sql } from 'kysely'
import { LRUCache } from 'lru-cache'
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
 * (see Database.transaction): the tenant's chain head is locked from its read to the commit, and one read and one
 * append for the whole group is one wait for the tenant's other writers instead of one per mutation. `locks` names
 * the rows `work` locks to change them (see TransactionOptions.locks).
 */
export async function runMutation<T>(
  database: Database,
  ctx: Ctx,
  work: (tx: Tx) => Promise<MutationOutcome<T>>,
  locks?: readonly string[],
): Promise<T> {
  return (await runRecordedMutation(database, ctx, work, locks)).result
}

/** runMutation, answering its audit records too (in the order of its audit entries) once committed. */
export async function runRecordedMutation<T>(
  database: Database,
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
      if (database.dialect === 'postgres') lockingTransactions.add(tx)
      const { result, audit } = await work(tx)
      return { result, ctx, entries: Array.isArray(audit) ? audit : [audit], appended: [] }
    },
    { group: ctx.tenantId, locks, finish: auditAppender(database) },
  )
  if (entries.length > 0) database.commits.emit('audit', ctx.tenantId, appended)
  return { result, appended }
}

interface Enclosing {
  database: Database
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
  database: Database,
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
        appending.forEach(({ outcome }, i) => {
          outcome.appended.push(rows[i])
        })
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
async function appendAudit(
  tx: Tx,
  database: Database,
  keys: AuditKeys,
  tenantId: string,
  entries: { ctx: Ctx; entry: AuditEntry }[],
): Promise<AuditLogRow[]> {
  const statements = auditStatements(database)
  const known = statements.heads?.get(tenantId)
  let tenant: Head | undefined
  if (known) {
    // PostgreSQL, the head this instance last appended at: the records and the new head in one round trip if it
    // still is the head, else the head as it is (locked), to append at as below.
    const rows = chainOn(keys, entries, known)
    const next = headAfter(rows)
    const [first, ...rest] = statementChunks(rows)
    const parameters = [
      ...first.flatMap(auditValues),
      tenantId,
      known.audit_seq,
      known.audit_head,
      next.audit_seq,
      next.audit_head,
    ]
    const [found] = (
      await tx.executeQuery<Head & { moved: boolean }>({ ...statements.appendIfHead(first.length), parameters })
    ).rows
    if (found?.moved) {
      // The head is locked and already moved to the last record: the rest only need their inserts.
      await appendChunks(tx, statements, rest, [next.audit_seq, next.audit_head, tenantId])
      statements.heads!.set(tenantId, next)
      return rows
    }
    tenant = found
  } else {
    tenant = (await tx.executeQuery<Head>({ ...statements.head, parameters: [tenantId] })).rows[0]
  }
  if (!tenant) throw new Error(`tenant ${tenantId} not found`)
  const rows = chainOn(keys, entries, tenant)
  const next = headAfter(rows)
  const head = [next.audit_seq, next.audit_head, tenantId]
  // The names' index takes the records once they have committed (AuditNameIndexer), not here.
  if (database.dialect === 'postgres') {
    // One round trip for the records and the new head (one per APPEND_ROWS records): the tenant row is locked until
    // commit, and every round trip under that lock is a wait for every other writer of the tenant.
    await appendChunks(tx, statements, statementChunks(rows), head)
    statements.heads!.set(tenantId, next)
    return rows
  }
  for (const row of rows) await tx.executeQuery({ ...statements.append, parameters: auditValues(row) })
  await tx.executeQuery({ ...statements.moveHead, parameters: head })
  return rows
}

interface Head {
  audit_seq: number
  audit_head: string
}

/**
 * Records one PostgreSQL statement appends at most: the protocol counts a statement's parameters in 16 bits, and an
 * apply that joins many changes in one mutation (a configuration bundle) appends thousands.
 */
const APPEND_ROWS = 1000

const statementChunks = (rows: AuditLogRow[]): AuditLogRow[][] => {
  const chunks: AuditLogRow[][] = []
  for (let at = 0; at < rows.length; at += APPEND_ROWS) chunks.push(rows.slice(at, at + APPEND_ROWS))
  return chunks
}

/** PostgreSQL: appends each chunk with the head set to `head` (seq, hash, tenant), one statement a chunk. */
async function appendChunks(tx: Tx, statements: AuditStatements, chunks: AuditLogRow[][], head: unknown[]) {
  for (const chunk of chunks)
    await tx.executeQuery({
      ...statements.appendWithHead(chunk.length),
      parameters: [...chunk.flatMap(auditValues), ...head],
    })
}

/** The entries' records, chained on from `head`. */
function chainOn(keys: AuditKeys, entries: { ctx: Ctx; entry: AuditEntry }[], head: Head): AuditLogRow[] {
  let prevHash = head.audit_head
  return entries.map(({ ctx, entry }, i) => {
    const row = auditRow(keys, ctx, entry, head.audit_seq + i + 1, prevHash)
    prevHash = row.hash
    return row
  })
}

/** The head once `rows` are appended. */
const headAfter = (rows: AuditLogRow[]): Head => ({
  audit_seq: rows[rows.length - 1].seq,
  audit_head: rows[rows.length - 1].hash,
})

const AUDIT_COLUMNS = [
  'id',
  'tenant_id',
  'seq',
  'created_at',
  'action',
  'resource_type',
  'resource_id',
  'resource_name',
  'sub_object_type',
  'sub_object_id',
  'sub_object_name',
  'use_case_id',
  'actor_type',
  'actor_id',
  'actor_name',
  'source',
  'request_id',
  'changes',
  'metadata',
  'prev_hash',
  'hash',
  'chain_key_id',
] as const satisfies readonly (keyof AuditLogRow)[]

/** A record's values in the order of AUDIT_COLUMNS, the order its insert was compiled with. */
const auditValues = (row: AuditLogRow) => AUDIT_COLUMNS.map((column) => row[column])

interface AuditStatements {
  head: CompiledQuery
  append: CompiledQuery
  moveHead: CompiledQuery
  /** PostgreSQL: `count` records and the new head in one statement. */
  appendWithHead(count: number): CompiledQuery
  /**
   * PostgreSQL: `count` records and the new head in one statement if the head is still the one given, and the head
   * as it was, locked, with `moved` telling which. Parameters: the records', then tenant, head seq and hash, new
   * seq and hash.
   */
  appendIfHead(count: number): CompiledQuery
  /**
   * PostgreSQL: each tenant's head as this instance last appended at it, for appendIfHead. A tenant's writes mostly
   * come to one instance, and its head is then known: the read of the head, a round trip under the tenant's lock of
   * every group commit, is saved. Written elsewhere since, it costs nothing more than that read.
   */
  heads?: LRUCache<string, Head>
}

/** Tenants whose head is remembered (see AuditStatements.heads). */
const KNOWN_HEADS = 10_000

/** A group's record counts (per tenant) whose PostgreSQL statement is kept compiled; larger ones are compiled each time. */
const KEPT_COUNTS = 32
const compiledAudit = new WeakMap<Database, AuditStatements>()

/**
 * The audit append's statements, compiled once per database with placeholder values and run with each write's:
 * building them with the query builder on every write was a measurable share of a create's cost.
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
  const withHead = (count: number) =>
    db
      .with('appended', (w) => w.insertInto('audit_logs').values(records(count)))
      .updateTable('tenants')
      .set({ audit_seq: 0, audit_head: '' })
      .where('id', '=', '')
      .compile()
  const keptByCount = (build: (count: number) => CompiledQuery) => {
    const counts = new Map<number, CompiledQuery>()
    return (count: number) => {
      if (count > KEPT_COUNTS) return build(count)
      let compiled = counts.get(count)
      if (!compiled) counts.set(count, (compiled = build(count)))
      return compiled
    }
  }
  const statements: AuditStatements = {
    head: head.compile(),
    append: db.insertInto('audit_logs').values(placeholder).compile(),
    moveHead: moveHead.compile(),
    appendWithHead: keptByCount(withHead),
    appendIfHead: keptByCount((count) => sql.raw(appendIfHeadSql(count)).compile(db)),
    ...(database.dialect === 'postgres' && { heads: new LRUCache<string, Head>({ max: KNOWN_HEADS }) }),
  }
  compiledAudit.set(database, statements)
  return statements
}

/**
 * The text of appendIfHead, by hand: the query builder has no VALUES list to select from. The head is locked first
 * and the update joins it, so that the update sees the head as locked (the latest committed), never an older one.
 * A VALUES list's types are its own (text), but for seq, which is cast; text goes into varchar columns as it is.
 */
function appendIfHeadSql(count: number): string {
  const width = AUDIT_COLUMNS.length
  const rows = Array.from(
    { length: count },
    (_, r) =>
      `(${AUDIT_COLUMNS.map((column, c) => `$${r * width + c + 1}${column === 'seq' ? '::bigint' : ''}`).join(', ')})`,
  )
  const [tenant, seq, hash, newSeq, newHash] = [1, 2, 3, 4, 5].map((i) => `$${count * width + i}`)
  return [
    `with head as (select audit_seq, audit_head from tenants where id = ${tenant} for no key update),`,
    ` moved as (update tenants set audit_seq = ${newSeq}, audit_head = ${newHash} from head where tenants.id = ${tenant} and head.audit_seq = ${seq} and head.audit_head = ${hash} returning 1),`,
    ` appended as (insert into audit_logs (${AUDIT_COLUMNS.join(', ')}) select * from (values ${rows.join(', ')}) as records where exists (select 1 from moved))`,
    ` select audit_seq, audit_head, exists (select 1 from moved) as moved from head`,
  ].join('')
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
    metadata: metadataOf(ctx, entry),
    prev_hash: prevHash,
    chain_key_id: keys.chain.id,
  }
  const stored = asStored(row)
  return { ...stored, hash: auditHash(stored, keys)! }
}

/** The entry's metadata, with the OAuth client an assistant acted through when there was one. */
function metadataOf(ctx: Ctx, entry: AuditEntry): string | null {
  const metadata = ctx.client ? { ...entry.metadata, client: ctx.client } : entry.metadata
  return metadata ? JSON.stringify(metadata) : null
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
