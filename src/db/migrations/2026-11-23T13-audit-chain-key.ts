import type { Kysely } from 'kysely'

/**
 * Which key an audit record's hash is an HMAC under (an id, never the key); null for the records written before
 * the chain was keyed, whose hash stays plain SHA-256 and keeps verifying.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('audit_logs').addColumn('chain_key_id', 'varchar(16)').execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('audit_logs').dropColumn('chain_key_id').execute()
}
