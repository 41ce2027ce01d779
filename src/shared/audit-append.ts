import type { Kysely } from 'kysely'
import { type CompiledQuery, sql } from 'kysely'
import { LRUCache } from 'lru-cache'
import type { Database, DialectName } from '../db/create-db.js'
import type { AuditLogRow, Tables } from '../db/tables.js'
import { type AuditKeys, auditHash, HASHED_FIELDS } from './audit-chain.js'
import type { Ctx } from './context.js'
import { newId } from './ids.js'

type Tx = Kysely<Tables>

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

/** A mutation's outcome as its transaction's group appends it to the audit log. */
export interface Audited<T> {
  result: T
  ctx: Ctx
  entries: AuditEntry[]
  /** The records appended for `entries`, in chain order: filled by the group's finishing step. */
  appended: AuditLogRow[]
}

/** A database whose mutations append to the audit log: what runMutation and the audit family need. */
export interface AuditedDatabase extends Database {
  readonly audit: AuditAppender
}

/** The database with its audit appender (createDeps builds one, once the chain keys are known). */
export function withAudit(database: Database, audit: AuditAppender): AuditedDatabase {
  return { ...database, audit }
}

/**
 * Appends mutations' records to their tenants' hash chains, keyed with `keys`: the compiled statements and (on
 * PostgreSQL) the heads this instance last appended at. Built once per service in the dependency wiring.
 */
export class AuditAppender {
  private readonly statements: AuditStatements

  constructor(
    database: Database,
    readonly keys: AuditKeys,
  ) {
    this.statements = compileStatements(database)
    this.dialect = database.dialect
  }

  private readonly dialect: DialectName

  /**
   * The group commit's finishing step for mutations: one function per appender, so that all mutations of a group
   * share it and are appended at once.
   */
  readonly finish = async (tx: Tx, outcomes: Audited<unknown>[]): Promise<void> => {
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
      const rows = await appendAudit(tx, this.dialect, this.statements, this.keys, tenantId, appending)
      appending.forEach(({ outcome }, i) => {
        outcome.appended.push(rows[i])
      })
    }
  }
}

/**
 * Appends to the tenant's hash chain; the tenant row lock keeps concurrent writers from forking it.
 * FOR NO KEY UPDATE, not FOR UPDATE: rows inserted in this transaction hold KEY SHARE locks on the
 * tenant row through their foreign keys, and FOR UPDATE would deadlock two such writers.
 */
async function appendAudit(
  tx: Tx,
  dialect: DialectName,
  statements: AuditStatements,
  keys: AuditKeys,
  tenantId: string,
  entries: { ctx: Ctx; entry: AuditEntry }[],
): Promise<AuditLogRow[]> {
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
  if (dialect === 'postgres') {
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

/** The insert's columns: what the hash covers, in its order, then the hash and the key it was made with. */
const AUDIT_COLUMNS = [...HASHED_FIELDS, 'hash', 'chain_key_id'] as const satisfies readonly (keyof AuditLogRow)[]

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
/**
 * The audit append's statements, compiled once with placeholder values and run with each write's: building them
 * with the query builder on every write was a measurable share of a create's cost.
 */
function compileStatements(database: Database): AuditStatements {
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
  return {
    head: head.compile(),
    append: db.insertInto('audit_logs').values(placeholder).compile(),
    moveHead: moveHead.compile(),
    appendWithHead: keptByCount(withHead),
    appendIfHead: keptByCount((count) => sql.raw(appendIfHeadSql(count)).compile(db)),
    ...(database.dialect === 'postgres' && { heads: new LRUCache<string, Head>({ max: KNOWN_HEADS }) }),
  }
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
