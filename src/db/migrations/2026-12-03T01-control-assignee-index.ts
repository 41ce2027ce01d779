import type { Kysely } from 'kysely'

/**
 * The tenant's controls by assignee (`GET /use_case_controls?assignee_id=`, the console's inbox) are read a page at a
 * time in id order: id joins the assignee index so a page is a seek, not a sort of everything assigned to them.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('use_case_controls_tenant_assignee').execute()
  await db.schema
    .createIndex('use_case_controls_tenant_assignee')
    .on('use_case_controls')
    .columns(['tenant_id', 'assignee_id', 'id'])
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('use_case_controls_tenant_assignee').execute()
  await db.schema
    .createIndex('use_case_controls_tenant_assignee')
    .on('use_case_controls')
    .columns(['tenant_id', 'assignee_id'])
    .execute()
}
