import { type Kysely, sql } from 'kysely'

/**
 * How far each tenant's audit records are in its name index (SQLite's per-tenant FTS5 table): records are now
 * indexed in batches after they commit, not in the transaction that appends them (see audit-name-search.ts).
 * Every existing record was indexed when it was appended. PostgreSQL keeps the column but never reads it (its
 * GIN indexes follow the table by themselves).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('tenants')
    .addColumn('audit_names_seq', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute()
  await sql`update tenants set audit_names_seq = audit_seq`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('tenants').dropColumn('audit_names_seq').execute()
}
