import { type Kysely, sql } from 'kysely'

/**
 * Which tenants' audit chains may hold unkeyed records (from before the chain was keyed), and up to which sequence:
 * recorded here for every existing tenant from its records as they are now (null: none). The service that ran this
 * migration seals each row at once with a MAC under the chain key, which this migration does not hold; without a
 * sealed row, or with an unkeyed record past it, /audit_logs/verify fails.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('audit_legacy_proofs')
    .addColumn('tenant_id', 'varchar(63)', (c) => c.primaryKey().references('tenants.id'))
    .addColumn('legacy_seq', 'bigint')
    .addColumn('key_id', 'varchar(16)')
    .addColumn('mac', 'varchar(64)')
    .execute()
  await sql`
    insert into audit_legacy_proofs (tenant_id, legacy_seq)
    select t.id, (select max(a.seq) from audit_logs a where a.tenant_id = t.id and a.chain_key_id is null) from tenants t`.execute(
    db,
  )
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('audit_legacy_proofs').execute()
}
