import { type Kysely, sql, SqliteAdapter } from 'kysely'

/**
 * PostgreSQL: audit `q` asks the gram indexes (2026-11-23T13b, 19b) of a table holding each tenant's distinct
 * resource names, and reaches the records through a B-tree of their name's hash, instead of asking GIN indexes
 * over every record. Most records repeat a name already recorded (every change of a use case carries its name), and
 * each one put some 30 keys into the two GIN indexes. A name is now indexed once, when first recorded; a record
 * costs one B-tree entry and a lookup of its name (measured: bench/results/design-measurements.md).
 *
 * The names table is filled by a trigger, once per statement, so that every way of appending records (the service,
 * `aigov seed`) fills it. Names are keyed by their MD5, since a B-tree entry has a size limit that a name of
 * 512 characters can pass; a search tests the names themselves, so two names with one hash cost a record read.
 * The hash leads both B-trees: neither can serve a condition on the tenant alone, which would read all of a
 * tenant's names or records instead of asking the gram index.
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof SqliteAdapter) return
  await sql`create table audit_names (tenant_id text not null, resource_name text not null)`.execute(db)
  await sql`insert into audit_names select distinct tenant_id, resource_name from audit_logs where resource_name is not null`.execute(
    db,
  )
  await sql`create unique index audit_names_hash on audit_names (md5(resource_name), tenant_id)`.execute(db)
  await sql`create index audit_names_trigrams on audit_names using gin (audit_name_trigrams(tenant_id, resource_name)) with (fastupdate = off)`.execute(
    db,
  )
  await sql`create index audit_names_five_grams on audit_names using gin (audit_name_five_grams(tenant_id, resource_name)) with (fastupdate = off)`.execute(
    db,
  )
  await sql`create index audit_logs_name_hash on audit_logs (md5(resource_name), tenant_id)`.execute(db)
  await createNamesTrigger(db)
  await sql`drop index audit_logs_name_trigrams`.execute(db)
  await sql`drop index audit_logs_name_five_grams`.execute(db)
}

/** The trigger that filled audit_names as records were appended, until 2026-11-28T00 moved that after the commit. */
export async function createNamesTrigger(db: Kysely<any>): Promise<void> {
  await sql`
    create function audit_names_add() returns trigger language plpgsql as $$
      begin
        insert into audit_names (tenant_id, resource_name)
          select distinct tenant_id, resource_name from appended where resource_name is not null
          on conflict do nothing;
        return null;
      end
    $$
  `.execute(db)
  await sql`create trigger audit_logs_names after insert on audit_logs referencing new table as appended for each statement execute function audit_names_add()`.execute(
    db,
  )
}

export async function down(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof SqliteAdapter) return
  await sql`create index audit_logs_name_trigrams on audit_logs using gin (audit_name_trigrams(tenant_id, resource_name)) with (fastupdate = off)`.execute(
    db,
  )
  await sql`create index audit_logs_name_five_grams on audit_logs using gin (audit_name_five_grams(tenant_id, resource_name)) with (fastupdate = off)`.execute(
    db,
  )
  await sql`drop trigger audit_logs_names on audit_logs`.execute(db)
  await sql`drop function audit_names_add()`.execute(db)
  await sql`drop index audit_logs_name_hash`.execute(db)
  await sql`drop table audit_names`.execute(db)
}
