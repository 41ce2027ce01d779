import type { Kysely } from 'kysely'

/**
 * Audit queries by action, newest first, read the tenant's log by time and skipped every record of other actions:
 * a page took as long as the records of other actions newer than it (design-measurements.md, "Migrations"). By
 * action, then time, they seek.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('audit_logs_tenant_action_created')
    .on('audit_logs')
    .columns(['tenant_id', 'action', 'created_at', 'id'])
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('audit_logs_tenant_action_created').execute()
}
