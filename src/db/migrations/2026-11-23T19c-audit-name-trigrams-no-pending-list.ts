import { type Kysely, sql, SqliteAdapter } from 'kysely'

/**
 * PostgreSQL: the trigram index behind audit `q` (2026-11-23T13b) without GIN's pending list. New entries waited
 * there, for all tenants together, and every search read the whole list: a search's time grew with what other
 * tenants had written lately. Entries now go straight into the tenant's keys, at a small cost to each append
 * (design-measurements.md, "Migrations").
 * The entries already pending are moved into the index here, since turning the option off leaves them.
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof SqliteAdapter) return
  await sql`alter index audit_logs_name_trigrams set (fastupdate = off)`.execute(db)
  await sql`select gin_clean_pending_list('audit_logs_name_trigrams'::regclass)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof SqliteAdapter) return
  await sql`alter index audit_logs_name_trigrams reset (fastupdate)`.execute(db)
}
