import type { Kysely } from 'kysely'

/**
 * Webhook endpoints and their deliveries. The audit log is the outbox: each endpoint keeps the audit
 * sequence number it has fanned out up to (`cursor_seq`), and a delivery row is made per matching record.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('tenant_id', 'varchar(63)', (c) => c.notNull().references('tenants.id'))
    .addColumn('url', 'varchar(2048)', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('previous_secret', 'text')
    .addColumn('previous_secret_expires_at', 'varchar(32)')
    .addColumn('cursor_seq', 'bigint', (c) => c.notNull())
    .addColumn('failing_since', 'varchar(32)')
    .addColumn('disabled_reason', 'text')
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(32)', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('webhook_endpoints_tenant').on('webhook_endpoints').columns(['tenant_id', 'id']).execute()

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('tenant_id', 'varchar(63)', (c) => c.notNull().references('tenants.id'))
    .addColumn('endpoint_id', 'varchar(40)', (c) => c.notNull().references('webhook_endpoints.id').onDelete('cascade'))
    .addColumn('audit_id', 'varchar(40)')
    .addColumn('event_type', 'varchar(200)', (c) => c.notNull())
    .addColumn('payload', 'text')
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('last_status_code', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('last_attempt_at', 'varchar(32)')
    .addColumn('next_attempt_at', 'varchar(32)')
    .addColumn('lease_until', 'varchar(32)')
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(32)', (c) => c.notNull())
    .execute()
  await db.schema
    .createIndex('webhook_deliveries_endpoint')
    .on('webhook_deliveries')
    .columns(['tenant_id', 'endpoint_id', 'id'])
    .execute()
  await db.schema
    .createIndex('webhook_deliveries_due')
    .on('webhook_deliveries')
    .columns(['status', 'next_attempt_at'])
    .execute()
  // Fanning out the same audit record twice to one endpoint is a no-op, never a second delivery.
  await db.schema
    .createIndex('webhook_deliveries_event')
    .on('webhook_deliveries')
    .columns(['endpoint_id', 'audit_id'])
    .unique()
    .execute()
  await db.schema.createIndex('webhook_deliveries_created').on('webhook_deliveries').column('created_at').execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('webhook_deliveries').execute()
  await db.schema.dropTable('webhook_endpoints').execute()
}
