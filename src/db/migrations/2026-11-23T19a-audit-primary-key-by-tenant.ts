import { type Kysely, sql, SqliteAdapter } from 'kysely'

/**
 * PostgreSQL: the audit primary key becomes (tenant_id, id), replacing the index on id alone and the now duplicate
 * (tenant_id, id) one. Every query names its tenant, but the index on id alone still offered the planner the
 * tenant's records in id order with any filter applied row by row; it took that for `action = use_case.updated`
 * (half the records, so a page looked 100 rows away) and skipped every create first. Indexes led by
 * the tenant leave it the (tenant_id, action, id) one. SQLite chose well already and keeps its table as it is.
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof SqliteAdapter) return
  await sql`alter table audit_logs drop constraint audit_logs_pkey, add constraint audit_logs_pkey primary key (tenant_id, id)`.execute(
    db,
  )
  await sql`drop index audit_logs_tenant_id`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof SqliteAdapter) return
  await sql`create index audit_logs_tenant_id on audit_logs (tenant_id, id)`.execute(db)
  await sql`alter table audit_logs drop constraint audit_logs_pkey, add constraint audit_logs_pkey primary key (id)`.execute(
    db,
  )
}
