import type { Kysely } from 'kysely'

/** Audit queries by source (e.g. everything assistants did over MCP) scanned the whole log without it. */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('audit_logs_tenant_source')
    .on('audit_logs')
    .columns(['tenant_id', 'source', 'id'])
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('audit_logs_tenant_source').execute()
}
