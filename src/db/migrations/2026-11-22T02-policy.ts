import type { Kysely } from 'kysely'

/**
 * Policy library: control bases and their versions, policy packs, questionnaires, and what is applied
 * to or attached to use cases and models. Arrays and objects are JSON text, booleans 0/1.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const tenantIndexes = async (table: string, extra: string[] = []) => {
    await db.schema.createIndex(`${table}_tenant_id`).on(table).columns(['tenant_id', 'id']).execute()
    for (const column of extra)
      await db.schema.createIndex(`${table}_tenant_${column}`).on(table).columns(['tenant_id', column, 'id']).execute()
  }

  await db.schema
    .createTable('policy_control_bases')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('tenant_id', 'varchar(63)', (c) => c.notNull().references('tenants.id'))
    .addColumn('key', 'varchar(100)', (c) => c.notNull())
    .addColumn('name', 'varchar(200)', (c) => c.notNull())
    .addColumn('name_key', 'varchar(200)', (c) => c.notNull())
    .addColumn('archived', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('deprecated', 'integer', (c) => c.notNull().defaultTo(0))
    // Kept in step by publish: the highest published version number, so lists need no aggregate.
    .addColumn('latest_version', 'integer')
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(32)', (c) => c.notNull())
    .execute()
  await db.schema
    .createIndex('policy_control_bases_tenant_key')
    .on('policy_control_bases')
    .columns(['tenant_id', 'key'])
    .unique()
    .execute()
  await tenantIndexes('policy_control_bases', ['name_key'])

  await db.schema
    .createTable('policy_control_versions')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('tenant_id', 'varchar(63)', (c) => c.notNull().references('tenants.id'))
    .addColumn('base_id', 'varchar(40)', (c) => c.notNull().references('policy_control_bases.id'))
    .addColumn('key', 'varchar(100)', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('status', 'varchar(16)', (c) => c.notNull())
    .addColumn('name', 'varchar(200)', (c) => c.notNull())
    .addColumn('name_key', 'varchar(200)', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('evidence_requirements', 'text', (c) => c.notNull().defaultTo('[]'))
    // JSON list of rt_ ids; no foreign key, so deleting a risk type never fails on an immutable version.
    .addColumn('risk_type_ids', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('published_at', 'varchar(32)')
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(32)', (c) => c.notNull())
    .execute()
  await db.schema
    .createIndex('policy_control_versions_base_version')
    .on('policy_control_versions')
    .columns(['base_id', 'version'])
    .unique()
    .execute()
  await tenantIndexes('policy_control_versions', ['key', 'status', 'base_id'])

  await db.schema
    .createTable('policy_packs')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('tenant_id', 'varchar(63)', (c) => c.notNull().references('tenants.id'))
    .addColumn('key', 'varchar(100)', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('latest', 'integer', (c) => c.notNull())
    .addColumn('name', 'varchar(200)', (c) => c.notNull())
    .addColumn('name_key', 'varchar(200)', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(32)', (c) => c.notNull())
    .execute()
  await db.schema
    .createIndex('policy_packs_tenant_key_version')
    .on('policy_packs')
    .columns(['tenant_id', 'key', 'version'])
    .unique()
    .execute()
  await tenantIndexes('policy_packs', ['latest'])

  await db.schema
    .createTable('policy_pack_controls')
    .addColumn('tenant_id', 'varchar(63)', (c) => c.notNull().references('tenants.id'))
    .addColumn('policy_pack_id', 'varchar(40)', (c) => c.notNull().references('policy_packs.id').onDelete('cascade'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('control_key', 'varchar(100)', (c) => c.notNull())
    .addColumn('control_version', 'integer', (c) => c.notNull())
    .addColumn('control_version_id', 'varchar(40)', (c) => c.notNull().references('policy_control_versions.id'))
    .addPrimaryKeyConstraint('policy_pack_controls_pk', ['policy_pack_id', 'control_key'])
    .execute()

  await db.schema
    .createTable('use_case_policy_packs')
    .addColumn('tenant_id', 'varchar(63)', (c) => c.notNull().references('tenants.id'))
    .addColumn('use_case_id', 'varchar(40)', (c) => c.notNull().references('use_cases.id').onDelete('cascade'))
    .addColumn('policy_pack_key', 'varchar(100)', (c) => c.notNull())
    .addColumn('policy_pack_id', 'varchar(40)', (c) => c.notNull().references('policy_packs.id'))
    .addColumn('due_date', 'varchar(32)')
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .addPrimaryKeyConstraint('use_case_policy_packs_pk', ['use_case_id', 'policy_pack_key'])
    .execute()
  await db.schema
    .createIndex('use_case_policy_packs_pack')
    .on('use_case_policy_packs')
    .columns(['policy_pack_id', 'use_case_id'])
    .execute()

  await db.schema
    .createTable('use_case_controls')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('tenant_id', 'varchar(63)', (c) => c.notNull().references('tenants.id'))
    .addColumn('use_case_id', 'varchar(40)', (c) => c.notNull().references('use_cases.id').onDelete('cascade'))
    .addColumn('control_key', 'varchar(100)', (c) => c.notNull())
    .addColumn('control_version', 'integer', (c) => c.notNull())
    .addColumn('control_version_id', 'varchar(40)', (c) => c.notNull().references('policy_control_versions.id'))
    .addColumn('name', 'varchar(200)', (c) => c.notNull())
    .addColumn('policy_pack_key', 'varchar(100)', (c) => c.notNull())
    .addColumn('policy_pack_version', 'integer', (c) => c.notNull())
    .addColumn('status', 'varchar(20)', (c) => c.notNull())
    .addColumn('due_date', 'varchar(32)')
    .addColumn('notes', 'text')
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(32)', (c) => c.notNull())
    .execute()
  await db.schema
    .createIndex('use_case_controls_use_case_key')
    .on('use_case_controls')
    .columns(['use_case_id', 'control_key'])
    .unique()
    .execute()
  await db.schema
    .createIndex('use_case_controls_use_case_id')
    .on('use_case_controls')
    .columns(['tenant_id', 'use_case_id', 'id'])
    .execute()

  await db.schema
    .createTable('questionnaires')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('tenant_id', 'varchar(63)', (c) => c.notNull().references('tenants.id'))
    .addColumn('key', 'varchar(100)', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('latest', 'integer', (c) => c.notNull())
    .addColumn('name', 'varchar(200)', (c) => c.notNull())
    .addColumn('name_key', 'varchar(200)', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('target', 'varchar(20)', (c) => c.notNull())
    .addColumn('sections', 'text', (c) => c.notNull())
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(32)', (c) => c.notNull())
    .execute()
  await db.schema
    .createIndex('questionnaires_tenant_key_version')
    .on('questionnaires')
    .columns(['tenant_id', 'key', 'version'])
    .unique()
    .execute()
  await tenantIndexes('questionnaires', ['latest'])

  for (const [table, owner, ownerTable] of [
    ['use_case_questionnaires', 'use_case_id', 'use_cases'],
    ['model_questionnaires', 'model_id', 'models'],
  ] as const) {
    await db.schema
      .createTable(table)
      .addColumn('tenant_id', 'varchar(63)', (c) => c.notNull().references('tenants.id'))
      .addColumn(owner, 'varchar(40)', (c) => c.notNull().references(`${ownerTable}.id`).onDelete('cascade'))
      .addColumn('questionnaire_key', 'varchar(100)', (c) => c.notNull())
      .addColumn('questionnaire_id', 'varchar(40)', (c) => c.notNull().references('questionnaires.id'))
      .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
      .addPrimaryKeyConstraint(`${table}_pk`, [owner, 'questionnaire_key'])
      .execute()
    await db.schema.createIndex(`${table}_questionnaire`).on(table).columns(['questionnaire_id', owner]).execute()
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of [
    'model_questionnaires',
    'use_case_questionnaires',
    'questionnaires',
    'use_case_controls',
    'use_case_policy_packs',
    'policy_pack_controls',
    'policy_packs',
    'policy_control_versions',
    'policy_control_bases',
  ]) {
    await db.schema.dropTable(table).execute()
  }
}
