import { type Kysely, sql } from 'kysely'
import type { DialectName } from '../db/create-db.js'

/**
 * SQLite: the trigram index behind audit `q`, one FTS5 table per tenant. One table for all tenants made a search
 * read every tenant's posting lists, so its time told whether another tenant had a word; a tenant's own table
 * holds only its records, and nothing another tenant writes changes what a search reads. (A tenant column in a
 * shared table would not do: FTS5 intersects full posting lists, and rowid ranges per tenant still share
 * segments.) Contentless, keyed by the record's `seq`: nothing is stored twice, and seq never changes (VACUUM
 * may renumber rowids, not seq). Filled by the code that appends audit records, since a trigger cannot choose
 * a table by tenant. PostgreSQL has one index whose keys start with the tenant instead (see audit-logs.repo.ts).
 *
 * The name puts the tenant first: a tenant id holds no ':', so no tenant's table can be another's FTS5 shadow
 * table (`<name>_data`, `<name>_idx`, …), as `audit_name_search_a` and tenant `a_data` would be.
 */
export function auditNameSearchTable(tenantId: string) {
  return sql.table(`${tenantId}:audit_name_search`)
}

/** Creates a new tenant's index, in the transaction that creates the tenant. */
export async function createAuditNameSearch(db: Kysely<any>, dialect: DialectName, tenantId: string): Promise<void> {
  if (dialect !== 'sqlite') return
  // columnsize=0: no per-record sizes (they serve ranking, which this never does); a quarter less work per write.
  await sql`create virtual table ${auditNameSearchTable(tenantId)} using fts5(resource_name, tokenize = 'trigram', content = '', columnsize = 0)`.execute(db)
}

/** Adds newly appended audit records of one tenant to its index, in the transaction that appends them. */
export async function indexAuditNames(db: Kysely<any>, dialect: DialectName, tenantId: string, rows: { seq: number; resource_name: string | null }[]): Promise<void> {
  if (dialect !== 'sqlite') return
  const named = rows.filter((r) => r.resource_name !== null)
  if (named.length === 0) return
  const values = sql.join(named.map((r) => sql`(${r.seq}, ${r.resource_name})`))
  await sql`insert into ${auditNameSearchTable(tenantId)} (rowid, resource_name) values ${values}`.execute(db)
}
