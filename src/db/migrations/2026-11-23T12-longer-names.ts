import { type Kysely, sql, SqliteAdapter } from 'kysely'

/**
 * Names up to 512 characters (intake systems prefix ticket keys to 255-character summaries), and audit records
 * that carry them. SQLite does not enforce varchar lengths, so only PostgreSQL changes; a longer varchar needs no
 * table rewrite there. name_key becomes text: a normalised form may be longer than the name it comes from.
 */
const NAMED = [
  'use_cases',
  'models',
  'vendors',
  'risk_types',
  'risk_scenarios',
  'workflow_stages',
  'policy_control_bases',
  'policy_control_versions',
  'policy_packs',
  'questionnaires',
]

export async function up(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof SqliteAdapter) return
  for (const table of NAMED) {
    await sql`alter table ${sql.table(table)} alter column name type varchar(512), alter column name_key type text`.execute(
      db,
    )
  }
  await sql`alter table use_case_controls alter column name type varchar(512)`.execute(db)
  await sql`alter table audit_logs alter column resource_name type varchar(512), alter column sub_object_name type varchar(512)`.execute(
    db,
  )
}

export async function down(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof SqliteAdapter) return
  for (const table of NAMED) {
    await sql`alter table ${sql.table(table)} alter column name type varchar(200), alter column name_key type varchar(200)`.execute(
      db,
    )
  }
  await sql`alter table use_case_controls alter column name type varchar(200)`.execute(db)
  await sql`alter table audit_logs alter column resource_name type varchar(300), alter column sub_object_name type varchar(300)`.execute(
    db,
  )
}
