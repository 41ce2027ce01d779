import { type Kysely, sql, SqliteAdapter } from 'kysely'

/**
 * PostgreSQL: a second GIN index beside the trigram one (2026-11-23T13b), over the 5-character pieces of each
 * name prefixed with its tenant, for `q` of five characters or more. Trigrams of names told apart by digits
 * ("... -0000017") are each in tens of thousands of records, so no few of them narrow a search; 5-character
 * pieces of the same names are in a few hundred at most, and GIN walks the rarest one it is given.
 * Without a pending list (fastupdate off, as 2026-11-23T19c makes the trigram index): that list is shared by all
 * tenants and read whole by every search, so another tenant's recent writes slowed one tenant's search; each
 * record's pieces go straight into the index instead.
 * SQLite's FTS5 index already answers 5-character phrases (see nameSearchCandidates).
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof SqliteAdapter) return
  await sql`
    create function audit_name_five_grams(tenant text, name text) returns text[] language sql immutable parallel safe as $$
      select coalesce(array_agg(distinct tenant || ':' || substr(folded, i, 5)), '{}')
      from (select lower(name) as folded) as f, generate_series(1, char_length(folded) - 4) as i
    $$
  `.execute(db)
  await sql`create index audit_logs_name_five_grams on audit_logs using gin (audit_name_five_grams(tenant_id, resource_name)) with (fastupdate = off)`.execute(
    db,
  )
}

export async function down(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof SqliteAdapter) return
  await sql`drop index audit_logs_name_five_grams`.execute(db)
  await sql`drop function audit_name_five_grams(text, text)`.execute(db)
}
