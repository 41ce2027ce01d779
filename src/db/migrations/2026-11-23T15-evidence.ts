import { type Kysely, sql, SqliteAdapter } from 'kysely'

/**
 * Evidence: files (content in bounded chunks, deduplicated per tenant by sha256) and links, their use on
 * use-case controls, questionnaire attachment to vendors, and questionnaire answers (JSON on each attachment,
 * so detaching or deleting the owner takes its answers with it).
 */
export async function up(db: Kysely<any>): Promise<void> {
  const bytes = db.getExecutor().adapter instanceof SqliteAdapter ? sql`blob` : sql`bytea`

  await db.schema
    .createTable('evidence_blobs')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('tenant_id', 'varchar(63)', (c) => c.notNull().references('tenants.id'))
    // Null while the content is still arriving; set once, when the upload completes.
    .addColumn('sha256', 'varchar(64)')
    .addColumn('size', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('chunk_size', 'integer', (c) => c.notNull())
    .addColumn('chunks', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .execute()
  await db.schema
    .createIndex('evidence_blobs_tenant_sha256')
    .on('evidence_blobs')
    .columns(['tenant_id', 'sha256'])
    .unique()
    .execute()

  await db.schema
    .createTable('evidence_chunks')
    .addColumn('tenant_id', 'varchar(63)', (c) => c.notNull().references('tenants.id'))
    .addColumn('blob_id', 'varchar(40)', (c) => c.notNull().references('evidence_blobs.id').onDelete('cascade'))
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('data', bytes, (c) => c.notNull())
    .addPrimaryKeyConstraint('evidence_chunks_pk', ['blob_id', 'seq'])
    .execute()

  await db.schema
    .createTable('evidence')
    .addColumn('id', 'varchar(40)', (c) => c.primaryKey())
    .addColumn('tenant_id', 'varchar(63)', (c) => c.notNull().references('tenants.id'))
    .addColumn('kind', 'varchar(10)', (c) => c.notNull())
    .addColumn('title', 'varchar(500)')
    .addColumn('search_key', 'varchar(1000)', (c) => c.notNull())
    .addColumn('url', 'varchar(2048)')
    .addColumn('file_name', 'varchar(255)')
    .addColumn('content_type', 'varchar(255)')
    .addColumn('size', 'bigint')
    .addColumn('sha256', 'varchar(64)')
    .addColumn('blob_id', 'varchar(40)', (c) => c.references('evidence_blobs.id'))
    .addColumn('created_by', 'varchar(200)')
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(32)', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('evidence_tenant_id').on('evidence').columns(['tenant_id', 'id']).execute()
  await db.schema.createIndex('evidence_tenant_kind').on('evidence').columns(['tenant_id', 'kind', 'id']).execute()
  await db.schema.createIndex('evidence_blob').on('evidence').columns(['blob_id']).execute()

  await db.schema
    .createTable('use_case_control_evidence')
    .addColumn('tenant_id', 'varchar(63)', (c) => c.notNull().references('tenants.id'))
    .addColumn('use_case_id', 'varchar(40)', (c) => c.notNull().references('use_cases.id').onDelete('cascade'))
    .addColumn('use_case_control_id', 'varchar(40)', (c) =>
      c.notNull().references('use_case_controls.id').onDelete('cascade'),
    )
    // No cascade: evidence in use cannot be deleted (409).
    .addColumn('evidence_id', 'varchar(40)', (c) => c.notNull().references('evidence.id'))
    // Position in the control version's evidence_requirements; null when the evidence is for the control as a whole.
    .addColumn('requirement', 'integer')
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .addPrimaryKeyConstraint('use_case_control_evidence_pk', ['use_case_control_id', 'evidence_id'])
    .execute()
  await db.schema
    .createIndex('use_case_control_evidence_evidence')
    .on('use_case_control_evidence')
    .columns(['evidence_id'])
    .execute()
  await db.schema
    .createIndex('use_case_control_evidence_use_case')
    .on('use_case_control_evidence')
    .columns(['tenant_id', 'use_case_id'])
    .execute()

  await db.schema
    .createTable('vendor_questionnaires')
    .addColumn('tenant_id', 'varchar(63)', (c) => c.notNull().references('tenants.id'))
    .addColumn('vendor_id', 'varchar(40)', (c) => c.notNull().references('vendors.id').onDelete('cascade'))
    .addColumn('questionnaire_key', 'varchar(100)', (c) => c.notNull())
    .addColumn('questionnaire_id', 'varchar(40)', (c) => c.notNull().references('questionnaires.id'))
    .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('answers', 'text', (c) => c.notNull().defaultTo('{}'))
    .addPrimaryKeyConstraint('vendor_questionnaires_pk', ['vendor_id', 'questionnaire_key'])
    .execute()
  await db.schema
    .createIndex('vendor_questionnaires_questionnaire')
    .on('vendor_questionnaires')
    .columns(['questionnaire_id', 'vendor_id'])
    .execute()

  for (const table of ['use_case_questionnaires', 'model_questionnaires']) {
    await db.schema
      .alterTable(table)
      .addColumn('answers', 'text', (c) => c.notNull().defaultTo('{}'))
      .execute()
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['use_case_questionnaires', 'model_questionnaires'])
    await db.schema.alterTable(table).dropColumn('answers').execute()
  for (const table of [
    'vendor_questionnaires',
    'use_case_control_evidence',
    'evidence',
    'evidence_chunks',
    'evidence_blobs',
  ]) {
    await db.schema.dropTable(table).execute()
  }
}
