import { type Kysely, type SelectQueryBuilder, sql } from 'kysely'
import type { DialectName } from '../../db/create-db.js'
import type { AuditLogRow, Tables } from '../../db/tables.js'
import { auditNameSearchTable, notIndexedSeqs } from '../../shared/audit-name-search.js'
import { column, itemJson, jsonObject, storedJson } from '../../shared/item-json.js'
import { idFloor } from '../../shared/ids.js'
import { applyKeyset, type Keyset, PAGE_TEXT_COLUMNS, pageTextOf, withinTextBudget } from '../../shared/pagination.js'
import { containsText, nameKey } from '../../shared/search.js'
import type { AuditLogListQuery } from './audit-logs.schemas.js'

type Db = Kysely<Tables>

export const AUDIT_SORT_COLUMNS = { created_at: 'created_at' }

export type AuditFilter = Omit<AuditLogListQuery, 'page_limit' | 'page_after' | 'sort'>

/**
 * A record as `toAuditLog` gives it, rendered by the database as JSON text: events send it as it is, without a row
 * object, two JSON parses and a serialisation per record (a test holds both renderings to the same output).
 */
export const auditLogJson = (dialect: DialectName, table = 'audit_logs') =>
  itemJson(
    {
      id: column('id'),
      created_at: column('created_at'),
      action: column('action'),
      resource_type: column('resource_type'),
      resource_id: column('resource_id'),
      resource_name: column('resource_name'),
      sub_object_type: column('sub_object_type'),
      sub_object_id: column('sub_object_id'),
      sub_object_name: column('sub_object_name'),
      use_case_id: column('use_case_id'),
      actor: (t, d) =>
        jsonObject(d, [
          ['type', column('actor_type')(t, d)],
          ['id', column('actor_id')(t, d)],
          ['name', column('actor_name')(t, d)],
        ]),
      source: column('source'),
      request_id: column('request_id'),
      changes: storedJson('changes'),
      metadata: storedJson('metadata'),
    },
    table,
    dialect,
  )

export function findAuditLog(db: Db, tenantId: string, id: string): Promise<AuditLogRow | undefined> {
  return db
    .selectFrom('audit_logs')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst()
}

function filteredAuditLogs(
  db: Db,
  dialect: DialectName,
  tenantId: string,
  filter: AuditFilter,
  candidateSeqs: number[] | null,
) {
  const list = (v: string | string[] | undefined) => (v === undefined ? undefined : Array.isArray(v) ? v : [v])
  const actions = list(filter.action)
  const types = list(filter.resource_type)
  let q = db.selectFrom('audit_logs').where('tenant_id', '=', tenantId)
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
  if (filter.q !== undefined)
    q = q.where(dialect === 'postgres' ? substringTest(filter.q) : containsText('resource_name', filter.q, false))
  if (candidateSeqs !== null) q = q.where('seq', 'in', candidateSeqs)
  return q
}

/**
 * PostgreSQL: `q` as strpos, not LIKE. Without statistics on the names (see gramCandidates) the planner takes a
 * LIKE to match almost nothing and reads the whole table to sort a handful; strpos it takes as matching a third,
 * and scans the tenant's records in order until a page is full, which is right when q is common (rare ones come
 * narrowed to their candidates).
 */
function substringTest(q: string) {
  return sql<boolean>`strpos(lower(resource_name), ${nameKey(q)}) > 0`
}

/** A page's record as the database renders it (auditLogJson), beside the columns its next cursor is made of. */
export interface AuditJsonRow {
  id: string
  created_at: string
  item: string
}

/**
 * What a page reads of each record: its row (for the objects MCP and the CSV export build), or its JSON text (for
 * what the HTTP routes and the NDJSON export send as it is). Rendered by the database, a page of 50 records cost
 * about half the service's CPU of rows read into objects, parsed, checked and serialised again (npm run bench).
 */
type Reading = 'row' | 'json'
type Read<R extends Reading> = R extends 'row' ? AuditLogRow : AuditJsonRow

/** A page's query: audit_logs rows, the keyset applied. */
// biome-ignore lint/suspicious/noExplicitAny: the page query is built over joins whose table set varies by filter
type PageQuery = SelectQueryBuilder<any, any, AuditLogRow>

/**
 * Runs a page's query, reading `reading`. PostgreSQL computes what a query selects before it sorts, so there the JSON
 * is rendered over the page's own rows, outside the query, or a sorted page would render every match; SQLite renders
 * only the rows it returns either way, and its pages are rendered in the query itself.
 */
async function readPage<R extends Reading>(
  db: Db,
  dialect: DialectName,
  page: PageQuery,
  ks: Keyset,
  reading: R,
): Promise<Read<R>[]> {
  // Records of long changes end the page early (PAGE_TEXT_BUDGET): the database measures them before any is sent.
  const budgeted = withinTextBudget(db, page, ks, pageTextOf('audit_logs'))
  if (reading === 'row') return (await budgeted.execute()) as Read<R>[]
  const rendered = (table: string) => [
    sql.ref(`${table}.id`).as('id'),
    sql.ref(`${table}.created_at`).as('created_at'),
    auditLogJson(dialect, table).as('item'),
    sql.ref(`${table}.${PAGE_TEXT_COLUMNS[0]}`).as(PAGE_TEXT_COLUMNS[0]),
  ]
  return (await applyKeyset(db.selectFrom(budgeted.as('p')).select(rendered('p')), {
    ...ks,
    after: null,
  }).execute()) as unknown as Read<R>[]
}

export async function listAuditLogs<R extends Reading>(
  db: Db,
  dialect: DialectName,
  tenantId: string,
  filter: AuditFilter,
  ks: Keyset,
  reading: R,
): Promise<Read<R>[]> {
  if (filter.q !== undefined && dialect === 'postgres')
    return searchAuditLogs(db, tenantId, filter, filter.q, ks, reading)
  const candidateSeqs = filter.q === undefined ? null : await nameSearchCandidates(db, tenantId, filter.q)
  if (candidateSeqs?.length === 0) return []
  return readPage(
    db,
    dialect,
    applyKeyset(filteredAuditLogs(db, dialect, tenantId, filter, candidateSeqs).selectAll(), ks),
    ks,
    reading,
  )
}

/** Pages' worth of records the first step of a PostgreSQL search reads in order before it asks the index. */
const SCAN_PAGES = 10

/**
 * PostgreSQL `q`, in up to three steps, each giving the exact page. First the next SCAN_PAGES pages' worth of the
 * tenant's records in page order, other filters applied: a common q fills the page there, and the index would
 * cost more, since GIN gathers every match before it returns any. Then the records whose name holds q, from the
 * tenant's keys of a gram index, when they are few. Else (q neither common nor rare) the records in order until
 * the page is full.
 */
async function searchAuditLogs<R extends Reading>(
  db: Db,
  tenantId: string,
  filter: AuditFilter,
  q: string,
  ks: Keyset,
  reading: R,
): Promise<Read<R>[]> {
  const window = applyKeyset(
    filteredAuditLogs(db, 'postgres', tenantId, { ...filter, q: undefined }, null).selectAll(),
    { ...ks, limit: SCAN_PAGES * (ks.limit + 1) - 1 },
  )
  const first = await readPage(
    db,
    'postgres',
    applyKeyset(db.selectFrom(window.as('w')).selectAll().where(substringTest(q)), { ...ks, after: null }),
    ks,
    reading,
  )
  if (first.length > ks.limit) return first
  const candidateSeqs = await gramCandidates(db, tenantId, q)
  if (candidateSeqs?.length === 0) return []
  return readPage(
    db,
    'postgres',
    applyKeyset(filteredAuditLogs(db, 'postgres', tenantId, filter, candidateSeqs).selectAll(), ks),
    ks,
    reading,
  )
}

const NAME_WINDOW = 5
const NAME_WINDOWS = 4
const FEW_CANDIDATES = 500

/**
 * SQLite: for `q`, the seqs of the few audit records of the tenant whose resource name may hold it, from the
 * tenant's own trigram index; null when that would not narrow the search, and the exact substring test scans instead.
 *
 * The index answers a short phrase quickly, but a long one slowly: it reads the whole posting list of every
 * trigram, and common ones ("use", "ase") list nearly every record. So it is asked for a few evenly spread
 * 5-character pieces of q, each cut off at FEW_CANDIDATES, and the piece with the fewest matches narrows
 * the search. When every piece is common, the matches are dense and the scan finds a page of them quickly.
 * The index folds case at least as widely as lower() does, so it never drops a record the test would keep.
 * Records not indexed yet (the last moments' writes, see AuditNameIndexer) are candidates too; they are read
 * first, so that a batch indexed meanwhile is found in the index.
 */
async function nameSearchCandidates(db: Db, tenantId: string, q: string): Promise<number[] | null> {
  const index = auditNameSearchTable(tenantId)
  const chars = [...nameKey(q)]
  if (chars.length < 3) return null
  const notIndexed = await notIndexedSeqs(db, tenantId, FEW_CANDIDATES)
  if (notIndexed === null) return null
  const last = Math.max(0, chars.length - NAME_WINDOW)
  const starts = [
    ...new Set(Array.from({ length: NAME_WINDOWS }, (_v, i) => Math.round((last * i) / (NAME_WINDOWS - 1)))),
  ]
  let fewest: number[] | null = null
  for (const start of starts) {
    const phrase = `"${chars
      .slice(start, start + NAME_WINDOW)
      .join('')
      .replaceAll('"', '""')}"`
    const { rows } = await sql<{
      seq: number
    }>`select rowid as seq from ${index} where ${index} match ${phrase} limit ${FEW_CANDIDATES + 1}`.execute(db)
    if (rows.length <= FEW_CANDIDATES && (fewest === null || rows.length < fewest.length))
      fewest = rows.map((r) => r.seq)
    if (fewest?.length === 0) break
  }
  return fewest === null ? null : [...fewest, ...notIndexed]
}

const GRAM_PIECES = 8

/**
 * PostgreSQL: the seqs of the tenant's audit records whose resource name holds q, or null when there are more than
 * FEW_CANDIDATES. The names that hold q come from the tenant's distinct names (audit_names, migration
 * 2026-11-27T18), asked of the tenant's keys of a GIN index (tenant-prefixed, so no other tenant's postings are
 * read): 5-character pieces of q (2026-11-23T19b), or 3-character ones for a shorter q (2026-11-23T13b). The pieces
 * cover q, up to GRAM_PIECES of them: GIN walks the rarest piece and skips through the others, so each one costs a
 * little even when common, and a piece rare enough is almost always among them. The keys reach the planner as a
 * sub-select, so it never looks them up in its statistics (gathered over all tenants' names) and always takes the
 * index; strpos keeps exactly the names that hold q. The records follow by their name's hash. Records whose names
 * are not in audit_names yet (the last moments' writes, see AuditNameIndexer) are candidates too, read first.
 */
async function gramCandidates(db: Db, tenantId: string, q: string): Promise<number[] | null> {
  const chars = [...nameKey(q)]
  if (chars.length < 3) return null
  const notIndexed = await notIndexedSeqs(db, tenantId, FEW_CANDIDATES)
  if (notIndexed === null) return null
  const size = chars.length >= 5 ? 5 : 3
  const last = chars.length - size
  const pieces = Math.min(GRAM_PIECES, Math.ceil(chars.length / size))
  const starts = Array.from({ length: pieces }, (_v, i) => (pieces === 1 ? 0 : Math.round((last * i) / (pieces - 1))))
  const keys = [...new Set(starts.map((start) => `${tenantId}:${chars.slice(start, start + size).join('')}`))]
  const grams =
    size === 5
      ? sql`audit_name_five_grams(tenant_id, resource_name)`
      : sql`audit_name_trigrams(tenant_id, resource_name)`
  // Each name's records looked up on their own, so that the planner takes the hash's index whatever it knows of it.
  const { rows } = await sql<{ seq: number }>`
    select records.seq from (
      select md5(resource_name) as hash from audit_names
      where tenant_id = ${tenantId} and ${grams} @> (select ${keys}::text[]) and ${substringTest(q)}
      limit ${FEW_CANDIDATES + 1}
    ) as names
    cross join lateral (
      select seq from audit_logs where md5(resource_name) = names.hash and tenant_id = ${tenantId} and ${substringTest(q)}
      limit ${FEW_CANDIDATES + 1}
    ) as records
    limit ${FEW_CANDIDATES + 1}`.execute(db)
  return rows.length <= FEW_CANDIDATES ? [...rows.map((r) => r.seq), ...notIndexed] : null
}

export function auditChainBatch(db: Db, tenantId: string, afterSeq: number, limit: number): Promise<AuditLogRow[]> {
  return db
    .selectFrom('audit_logs')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('seq', '>', afterSeq)
    .orderBy('seq')
    .limit(limit)
    .execute()
}

export function auditChainHead(db: Db, tenantId: string) {
  return db.selectFrom('tenants').select(['audit_seq', 'audit_head']).where('id', '=', tenantId).executeTakeFirst()
}

export function findLegacyProof(db: Db, tenantId: string) {
  return db
    .selectFrom('audit_legacy_proofs')
    .select(['legacy_seq', 'key_id', 'mac'])
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst()
}
