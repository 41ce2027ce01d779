import type { Kysely } from 'kysely'

/** What the original interface's SDK sends with a custom field definition (`metadata`), kept as JSON text as sent. */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('custom_fields').addColumn('metadata', 'text').execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('custom_fields').dropColumn('metadata').execute()
}
