import type { Kysely } from 'kysely'

/** Users, teams and their members, custom field definitions and the values records carry. */
export async function up(db: Kysely<any>): Promise<void> {
  const tenantIndexes = async (table: string) => {
    await db.schema.createIndex(`${table}_tenant_id`).on(table).columns(['tenant_id', 'id']).execute()
    await db.schema
      .createIndex(`${table}_tenant_created`)
      .on(table)
      .columns(['tenant_id', 'created_at', 'id'])
      .execute()
    await db.schema
      .createIndex(`${table}_tenant_updated`)
      .on(table)
      .columns(['tenant_id', 'updated_at', 'id'])
      .execute()
  }

  await db.schema
    .createTable('users')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('tenant_id', 'varchar(63)', (c) => c.notNull().references('tenants.id'))
    .addColumn('email', 'varchar(320)', (c) => c.notNull())
    .addColumn('email_key', 'varchar(320)', (c) => c.notNull())
    .addColumn('name', 'varchar(512)')
    .addColumn('name_key', 'text')
    .addColumn('title', 'varchar(200)')
    .addColumn('active', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(32)', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('users_tenant_email').on('users').columns(['tenant_id', 'email_key']).unique().execute()
  await tenantIndexes('users')

  await db.schema
    .createTable('teams')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('tenant_id', 'varchar(63)', (c) => c.notNull().references('tenants.id'))
    .addColumn('name', 'varchar(512)', (c) => c.notNull())
    .addColumn('name_key', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(32)', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('teams_tenant_name').on('teams').columns(['tenant_id', 'name_key']).unique().execute()
  await tenantIndexes('teams')

  await db.schema
    .createTable('team_members')
    .addColumn('tenant_id', 'varchar(63)', (c) => c.notNull().references('tenants.id'))
    .addColumn('team_id', 'varchar(40)', (c) => c.notNull().references('teams.id').onDelete('cascade'))
    .addColumn('user_id', 'varchar(40)', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .addPrimaryKeyConstraint('team_members_pk', ['team_id', 'user_id'])
    .execute()
  await db.schema.createIndex('team_members_user').on('team_members').columns(['tenant_id', 'user_id']).execute()

  await db.schema
    .createTable('custom_fields')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('tenant_id', 'varchar(63)', (c) => c.notNull().references('tenants.id'))
    .addColumn('name', 'varchar(512)', (c) => c.notNull())
    .addColumn('name_key', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('type', 'varchar(20)', (c) => c.notNull())
    .addColumn('element_type', 'varchar(20)', (c) => c.notNull())
    .addColumn('options', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('multiple', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('required', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('entity_types', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('archived', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(32)', (c) => c.notNull())
    .execute()
  await db.schema
    .createIndex('custom_fields_tenant_name')
    .on('custom_fields')
    .columns(['tenant_id', 'name_key'])
    .unique()
    .execute()
  await tenantIndexes('custom_fields')

  // One row per value (a `multiple` field has one per element, in order); value_key is the canonical text
  // find-by-value compares, so that index answers "which records carry X in field F" directly.
  await db.schema
    .createTable('custom_field_values')
    .addColumn('tenant_id', 'varchar(63)', (c) => c.notNull().references('tenants.id'))
    .addColumn('custom_field_id', 'varchar(40)', (c) => c.notNull().references('custom_fields.id'))
    .addColumn('entity_type', 'varchar(20)', (c) => c.notNull())
    .addColumn('entity_id', 'varchar(40)', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('value_key', 'varchar(512)', (c) => c.notNull())
    .addPrimaryKeyConstraint('custom_field_values_pk', ['tenant_id', 'entity_id', 'custom_field_id', 'position'])
    .execute()
  await db.schema
    .createIndex('custom_field_values_lookup')
    .on('custom_field_values')
    .columns(['tenant_id', 'custom_field_id', 'value_key', 'entity_id'])
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['custom_field_values', 'custom_fields', 'team_members', 'teams', 'users'])
    await db.schema.dropTable(table).execute()
}
