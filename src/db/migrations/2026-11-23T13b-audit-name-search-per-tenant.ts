import { type Kysely, sql, SqliteAdapter } from 'kysely'

/**
 * The trigram index behind audit `q` is scoped per tenant (see shared/audit-name-search.ts): the shared one let
 * a search's time tell whether another tenant had a word.
 * SQLite: one FTS5 table per tenant, filled with the existing records; the shared table and its trigger go.
 * PostgreSQL: a GIN index over the trigrams of each name prefixed with its tenant, so a search looks up only its
 * own tenant's keys (and the planner's statistics for them), replacing the pg_trgm index over all tenants.
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof SqliteAdapter)) {
    await sql`
      create function audit_name_trigrams(tenant text, name text) returns text[] language sql immutable parallel safe as $$
        select coalesce(array_agg(distinct tenant || ':' || substr(folded, i, 3)), '{}')
        from (select lower(name) as folded) as f, generate_series(1, char_length(folded) - 2) as i
      $$
    `.execute(db)
    await sql`create index audit_logs_name_trigrams on audit_logs using gin (audit_name_trigrams(tenant_id, resource_name))`.execute(
      db,
    )
    await sql`drop index if exists audit_logs_name_trgm`.execute(db)
    return
  }
  await atomically(db, async () => {
    for (const { id } of (await sql<{ id: string }>`select id from tenants`.execute(db)).rows) {
      const table = sql.table(`${id}:audit_name_search`)
      await sql`create virtual table ${table} using fts5(resource_name, tokenize = 'trigram', content = '', columnsize = 0)`.execute(
        db,
      )
      await sql`insert into ${table} (rowid, resource_name) select seq, resource_name from audit_logs where tenant_id = ${id} and resource_name is not null`.execute(
        db,
      )
    }
    await sql`drop trigger audit_logs_name_search_insert`.execute(db)
    await sql`drop table audit_logs_name_search`.execute(db)
  })
}

export async function down(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof SqliteAdapter)) {
    await sql`drop index audit_logs_name_trigrams`.execute(db)
    await sql`drop function audit_name_trigrams(text, text)`.execute(db)
    // The earlier index, where pg_trgm is installed (the earlier migration made it only then).
    const trgm = (
      await sql<{
        schema: string
      }>`select extnamespace::regnamespace::text as schema from pg_extension where extname = 'pg_trgm'`.execute(db)
    ).rows[0]
    if (trgm)
      await sql`create index audit_logs_name_trgm on audit_logs using gin (lower(resource_name) ${sql.id(trgm.schema)}.gin_trgm_ops)`.execute(
        db,
      )
    return
  }
  await atomically(db, async () => {
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
    for (const { id } of (await sql<{ id: string }>`select id from tenants`.execute(db)).rows) {
      await sql`drop table if exists ${sql.table(`${id}:audit_name_search`)}`.execute(db)
    }
  })
}

/** Kysely runs SQLite migrations outside a transaction; a crash halfway must not leave some tenants without an index. */
async function atomically(db: Kysely<any>, work: () => Promise<void>): Promise<void> {
  await sql`begin immediate`.execute(db)
  try {
    await work()
    await sql`commit`.execute(db)
  } catch (err) {
    await sql`rollback`.execute(db)
    throw err
  }
}
