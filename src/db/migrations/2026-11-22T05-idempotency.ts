import type { Kysely } from 'kysely'

/** Stored first responses of POSTs sent with an Idempotency-Key (used when Redis is not configured or away). */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('idempotency_records')
    .addColumn('id', 'varchar(400)', (c) => c.primaryKey())
    .addColumn('fingerprint', 'varchar(64)', (c) => c.notNull())
    .addColumn('state', 'varchar(10)', (c) => c.notNull())
    .addColumn('response', 'text')
    .addColumn('expires_at', 'varchar(32)', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('idempotency_records_expires').on('idempotency_records').column('expires_at').execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('idempotency_records').execute()
}
