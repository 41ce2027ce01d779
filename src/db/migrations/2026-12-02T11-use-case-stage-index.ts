import type { Kysely } from 'kysely'

/**
 * The use case list's stage (and step) filter, and the governance summary's counts by stage and step, read the
 * tenant's use cases by workflow position: tenant first, as every index of the table, then id for the keyset.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('use_cases_tenant_stage')
    .on('use_cases')
    .columns(['tenant_id', 'workflow_stage_id', 'workflow_stage_step', 'id'])
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('use_cases_tenant_stage').execute()
}
