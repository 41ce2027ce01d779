import type { Kysely } from 'kysely'

/** Models, vendors, risk types and scenarios, workflow stages, and the links between them. */
export async function up(db: Kysely<any>): Promise<void> {
  const named = (table: string) =>
    db.schema
      .createTable(table)
      .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
      .addColumn('tenant_id', 'varchar(63)', (c) => c.notNull().references('tenants.id'))
      .addColumn('name', 'varchar(200)', (c) => c.notNull())
      .addColumn('name_key', 'varchar(200)', (c) => c.notNull())
  const indexNamed = async (table: string, extra: string[] = []) => {
    await db.schema.createIndex(`${table}_tenant_name`).on(table).columns(['tenant_id', 'name_key']).unique().execute()
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
    for (const column of extra)
      await db.schema.createIndex(`${table}_tenant_${column}`).on(table).columns(['tenant_id', column, 'id']).execute()
  }

  await named('models')
    .addColumn('summary', 'text')
    .addColumn('source', 'varchar(200)')
    .addColumn('status', 'varchar(20)', (c) => c.notNull().defaultTo('none'))
    .addColumn('provider', 'varchar(200)')
    .addColumn('model_type', 'varchar(100)')
    .addColumn('version', 'varchar(100)')
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(32)', (c) => c.notNull())
    .execute()
  await indexNamed('models', ['status'])

  await named('vendors')
    .addColumn('description', 'text')
    .addColumn('website', 'varchar(500)')
    .addColumn('status', 'varchar(20)', (c) => c.notNull().defaultTo('active'))
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(32)', (c) => c.notNull())
    .execute()
  await indexNamed('vendors', ['status'])

  await named('risk_types')
    .addColumn('description', 'text')
    .addColumn('custom', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('hidden', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(32)', (c) => c.notNull())
    .execute()
  await indexNamed('risk_types')

  await named('risk_scenarios')
    .addColumn('description', 'text')
    .addColumn('domains', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('industries', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('regions', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('archived', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(32)', (c) => c.notNull())
    .execute()
  await indexNamed('risk_scenarios', ['archived'])

  await named('workflow_stages')
    .addColumn('description', 'text')
    .addColumn('type', 'varchar(20)', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('assessment_required', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('evidence_collection_required', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(32)', (c) => c.notNull())
    .execute()
  await indexNamed('workflow_stages', ['position'])

  // Links: plain associations, removed with either end (ON DELETE CASCADE); the services audit the removal.
  const link = async (
    table: string,
    left: [string, string],
    right: [string, string],
    extra: (t: any) => any = (t) => t,
  ) => {
    await extra(
      db.schema
        .createTable(table)
        .addColumn('tenant_id', 'varchar(63)', (c) => c.notNull().references('tenants.id'))
        .addColumn(left[0], 'varchar(40)', (c) => c.notNull().references(`${left[1]}.id`).onDelete('cascade'))
        .addColumn(right[0], 'varchar(40)', (c) => c.notNull().references(`${right[1]}.id`).onDelete('cascade'))
        .addColumn('created_at', 'varchar(32)', (c) => c.notNull()),
    )
      .addPrimaryKeyConstraint(`${table}_pk`, [left[0], right[0]])
      .execute()
    await db.schema.createIndex(`${table}_reverse`).on(table).columns([right[0], left[0]]).execute()
  }
  await link('use_case_models', ['use_case_id', 'use_cases'], ['model_id', 'models'])
  await link('use_case_vendors', ['use_case_id', 'use_cases'], ['vendor_id', 'vendors'])
  await link('model_vendors', ['model_id', 'models'], ['vendor_id', 'vendors'])
  await link('risk_scenario_risk_types', ['risk_scenario_id', 'risk_scenarios'], ['risk_type_id', 'risk_types'])
  await link('use_case_risk_scenarios', ['use_case_id', 'use_cases'], ['risk_scenario_id', 'risk_scenarios'], (t) =>
    t.addColumn('likelihood', 'integer').addColumn('impact', 'integer'),
  )
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of [
    'use_case_risk_scenarios',
    'risk_scenario_risk_types',
    'model_vendors',
    'use_case_vendors',
    'use_case_models',
    'workflow_stages',
    'risk_scenarios',
    'risk_types',
    'vendors',
    'models',
  ]) {
    await db.schema.dropTable(table).execute()
  }
}
