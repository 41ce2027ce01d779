import { type Kysely, sql, SqliteAdapter } from 'kysely'
import { createNamesTrigger } from './2026-11-27T18-audit-names-table.js'

/**
 * PostgreSQL: audit records' names go into audit_names shortly after they commit, in batches (AuditNameIndexer, as
 * on SQLite since 2026-11-25T10), no longer by a trigger in the statement that appends them. Each new name put its
 * keys into the two gram indexes while its tenant's chain head stayed locked. The trigger kept every record's
 * name, so the position starts at the chain's end.
 *
 * The gram indexes take a batch through their pending lists again (fastupdate, off since 2026-11-23T19c), and
 * the indexer moves each batch into them at once (addNames): GIN then updates each key's postings once per
 * batch instead of once per name. The list never holds more than the batch under way, which is what 19c was for.
 * (What it saved a tenant's creates: design-measurements.md, "Migrations".)
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof SqliteAdapter) return
  await sql`drop trigger audit_logs_names on audit_logs`.execute(db)
  await sql`drop function audit_names_add()`.execute(db)
  await sql`update tenants set audit_names_seq = audit_seq where audit_names_seq <> audit_seq`.execute(db)
  await sql`alter index audit_names_trigrams set (fastupdate = on)`.execute(db)
  await sql`alter index audit_names_five_grams set (fastupdate = on)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof SqliteAdapter) return
  // What the indexer had not taken yet, which the trigger would have.
  await sql`
    insert into audit_names (tenant_id, resource_name)
    select distinct a.tenant_id, a.resource_name from audit_logs a join tenants t on t.id = a.tenant_id
    where a.seq > t.audit_names_seq and a.resource_name is not null
    on conflict do nothing
  `.execute(db)
  await createNamesTrigger(db)
  for (const index of ['audit_names_trigrams', 'audit_names_five_grams']) {
    await sql`alter index ${sql.id(index)} set (fastupdate = off)`.execute(db)
    await sql`select gin_clean_pending_list(${index}::regclass)`.execute(db)
  }
}
