import type { Kysely } from 'kysely'

/**
 * Owners become references to a user or team (`owner_id`, `owner_type`) on use cases, models and vendors,
 * and use-case controls get an assignee of the same shape. The free-text `owner` of use cases names nobody
 * the service knows, so it goes.
 */
export async function up(db: Kysely<any>): Promise<void> {
  for (const table of ['use_cases', 'models', 'vendors']) {
    await db.schema.alterTable(table).addColumn('owner_id', 'varchar(40)').execute()
    await db.schema.alterTable(table).addColumn('owner_type', 'varchar(10)').execute()
    await db.schema.createIndex(`${table}_tenant_owner`).on(table).columns(['tenant_id', 'owner_id', 'id']).execute()
  }
  await db.schema.alterTable('use_cases').dropColumn('owner').execute()
  await db.schema.alterTable('use_case_controls').addColumn('assignee_id', 'varchar(40)').execute()
  await db.schema.alterTable('use_case_controls').addColumn('assignee_type', 'varchar(10)').execute()
  await db.schema
    .createIndex('use_case_controls_tenant_assignee')
    .on('use_case_controls')
    .columns(['tenant_id', 'assignee_id'])
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('use_case_controls_tenant_assignee').execute()
  await db.schema.alterTable('use_case_controls').dropColumn('assignee_type').execute()
  await db.schema.alterTable('use_case_controls').dropColumn('assignee_id').execute()
  await db.schema.alterTable('use_cases').addColumn('owner', 'varchar(200)').execute()
  for (const table of ['use_cases', 'models', 'vendors']) {
    await db.schema.dropIndex(`${table}_tenant_owner`).execute()
    await db.schema.alterTable(table).dropColumn('owner_type').execute()
    await db.schema.alterTable(table).dropColumn('owner_id').execute()
  }
}
