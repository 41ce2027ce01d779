import { type Kysely, sql, SqliteAdapter } from 'kysely'

/**
 * A trigram index over audit records' resource names, so `q` (a case-insensitive substring) finds the few
 * matching records among millions without reading them all.
 *
 * SQLite: an FTS5 table with the trigram tokenizer, filled by a trigger. Audit records are append-only
 * (nothing updates or deletes them), so an insert trigger keeps it complete.
 * PostgreSQL: a GIN index with pg_trgm on lower(resource_name), when the extension is available; without it
 * `q` still works, by scanning.
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof SqliteAdapter) {
    // columnsize=0: no per-record sizes (they serve ranking, which this never does); a quarter less work per write.
    await sql`create virtual table audit_logs_name_search using fts5(resource_name, audit_id unindexed, tokenize = 'trigram', columnsize = 0)`.execute(
      db,
    )
    await sql`insert into audit_logs_name_search (resource_name, audit_id) select resource_name, id from audit_logs where resource_name is not null`.execute(
      db,
    )
    await sql`
      create trigger audit_logs_name_search_insert after insert on audit_logs when new.resource_name is not null
      begin insert into audit_logs_name_search (resource_name, audit_id) values (new.resource_name, new.id); end
    `.execute(db)
    return
  }
  const schema = await trigramSchema(db)
  if (schema === null) return
  await sql`create index audit_logs_name_trgm on audit_logs using gin (lower(resource_name) ${sql.id(schema)}.gin_trgm_ops)`.execute(
    db,
  )
}

export async function down(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof SqliteAdapter) {
    await sql`drop trigger if exists audit_logs_name_search_insert`.execute(db)
    await sql`drop table if exists audit_logs_name_search`.execute(db)
    return
  }
  await sql`drop index if exists audit_logs_name_trgm`.execute(db)
}

/**
 * The schema pg_trgm lives in, installing it in `public` when it is available but not yet installed (it is a
 * trusted extension: a database owner may). Not in the current schema: dropping that schema would take the
 * extension, and every other schema's index on it, along. null when it cannot be had.
 */
async function trigramSchema(db: Kysely<any>): Promise<string | null> {
  const installed = async () =>
    (
      await sql<{
        schema: string
      }>`select extnamespace::regnamespace::text as schema from pg_extension where extname = 'pg_trgm'`.execute(db)
    ).rows[0]?.schema ?? null
  const existing = await installed()
  if (existing !== null) return existing
  const available = await sql`select 1 from pg_available_extensions where name = 'pg_trgm'`.execute(db)
  if (available.rows.length === 0) return null
  // A savepoint: a refusal (no privilege) or a concurrent install must not abort the migration's transaction.
  await sql`savepoint install_pg_trgm`.execute(db)
  try {
    await sql`create extension if not exists pg_trgm schema public`.execute(db)
    await sql`release savepoint install_pg_trgm`.execute(db)
  } catch {
    await sql`rollback to savepoint install_pg_trgm`.execute(db)
  }
  return installed()
}
