import type { Kysely } from 'kysely'

/** Tenants, settings, API keys, use cases and the audit log. */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('tenants')
    .addColumn('id', 'varchar(63)', (c) => c.primaryKey())
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('audit_seq', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('audit_head', 'varchar(64)', (c) => c.notNull())
    .execute()

  await db.schema
    .createTable('settings')
    .addColumn('key', 'varchar(100)', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute()

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('tenant_id', 'varchar(63)', (c) => c.notNull().references('tenants.id'))
    .addColumn('name', 'varchar(200)', (c) => c.notNull())
    .addColumn('role', 'varchar(10)', (c) => c.notNull())
    .addColumn('key_hash', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('key_prefix', 'varchar(16)', (c) => c.notNull())
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('expires_at', 'varchar(32)')
    .addColumn('revoked_at', 'varchar(32)')
    .execute()
  await db.schema.createIndex('api_keys_tenant_id').on('api_keys').columns(['tenant_id', 'id']).execute()

  await db.schema
    .createTable('use_cases')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('tenant_id', 'varchar(63)', (c) => c.notNull().references('tenants.id'))
    .addColumn('name', 'varchar(200)', (c) => c.notNull())
    .addColumn('name_key', 'varchar(200)', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('ai_type', 'varchar(100)')
    .addColumn('system_type', 'varchar(100)')
    .addColumn('risk_category_level', 'varchar(10)')
    .addColumn('regions', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('industries', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('source', 'varchar(200)')
    .addColumn('owner', 'varchar(200)')
    .addColumn('workflow_stage_id', 'varchar(40)')
    .addColumn('workflow_stage_step', 'varchar(32)')
    .addColumn('creator_id', 'varchar(200)')
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(32)', (c) => c.notNull())
    .execute()
  await db.schema
    .createIndex('use_cases_tenant_name')
    .on('use_cases')
    .columns(['tenant_id', 'name_key'])
    .unique()
    .execute()
  await db.schema.createIndex('use_cases_tenant_id').on('use_cases').columns(['tenant_id', 'id']).execute()
  await db.schema
    .createIndex('use_cases_tenant_created')
    .on('use_cases')
    .columns(['tenant_id', 'created_at', 'id'])
    .execute()
  await db.schema
    .createIndex('use_cases_tenant_updated')
    .on('use_cases')
    .columns(['tenant_id', 'updated_at', 'id'])
    .execute()
  await db.schema
    .createIndex('use_cases_tenant_risk')
    .on('use_cases')
    .columns(['tenant_id', 'risk_category_level', 'id'])
    .execute()

  await db.schema
    .createTable('audit_logs')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('tenant_id', 'varchar(63)', (c) => c.notNull().references('tenants.id'))
    .addColumn('seq', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('action', 'varchar(64)', (c) => c.notNull())
    .addColumn('resource_type', 'varchar(64)', (c) => c.notNull())
    .addColumn('resource_id', 'varchar(200)')
    .addColumn('resource_name', 'varchar(300)')
    .addColumn('sub_object_type', 'varchar(64)')
    .addColumn('sub_object_id', 'varchar(200)')
    .addColumn('sub_object_name', 'varchar(300)')
    .addColumn('use_case_id', 'varchar(40)')
    .addColumn('actor_type', 'varchar(16)', (c) => c.notNull())
    .addColumn('actor_id', 'varchar(200)')
    .addColumn('actor_name', 'varchar(300)')
    .addColumn('source', 'varchar(16)', (c) => c.notNull())
    .addColumn('request_id', 'varchar(128)')
    .addColumn('changes', 'text')
    .addColumn('metadata', 'text')
    .addColumn('prev_hash', 'varchar(64)', (c) => c.notNull())
    .addColumn('hash', 'varchar(64)', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('audit_logs_tenant_seq').on('audit_logs').columns(['tenant_id', 'seq']).unique().execute()
  await db.schema.createIndex('audit_logs_tenant_id').on('audit_logs').columns(['tenant_id', 'id']).execute()
  await db.schema
    .createIndex('audit_logs_tenant_created')
    .on('audit_logs')
    .columns(['tenant_id', 'created_at', 'id'])
    .execute()
  await db.schema
    .createIndex('audit_logs_tenant_resource')
    .on('audit_logs')
    .columns(['tenant_id', 'resource_id', 'id'])
    .execute()
  await db.schema
    .createIndex('audit_logs_tenant_type')
    .on('audit_logs')
    .columns(['tenant_id', 'resource_type', 'id'])
    .execute()
  await db.schema
    .createIndex('audit_logs_tenant_action')
    .on('audit_logs')
    .columns(['tenant_id', 'action', 'id'])
    .execute()
  await db.schema
    .createIndex('audit_logs_tenant_use_case')
    .on('audit_logs')
    .columns(['tenant_id', 'use_case_id', 'id'])
    .execute()
  await db.schema
    .createIndex('audit_logs_tenant_actor')
    .on('audit_logs')
    .columns(['tenant_id', 'actor_id', 'id'])
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['audit_logs', 'use_cases', 'api_keys', 'settings', 'tenants']) {
    await db.schema.dropTable(table).execute()
  }
}
