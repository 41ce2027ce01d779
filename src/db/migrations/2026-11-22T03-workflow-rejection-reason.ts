import type { Kysely } from 'kysely'

/** Why a use case's workflow was rejected: shown on GET …/workflow and in the 409 of a refused advance. */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('use_cases').addColumn('workflow_rejection_reason', 'text').execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('use_cases').dropColumn('workflow_rejection_reason').execute()
}
