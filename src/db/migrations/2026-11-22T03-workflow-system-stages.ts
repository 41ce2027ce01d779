import { type Kysely, sql } from 'kysely'

/** At most one start and one end stage per tenant, enforced by the database so concurrent provisioning cannot double them. */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create unique index workflow_stages_tenant_system on workflow_stages (tenant_id, type) where type in ('start', 'end')`.execute(
    db,
  )
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('workflow_stages_tenant_system').execute()
}
