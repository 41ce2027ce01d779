import type { Kysely } from 'kysely'
import type { Tables, UseCaseRow } from '../../db/tables.js'
import { forChange } from '../../shared/mutation.js'

type Db = Kysely<Tables>

export function findUseCase(db: Db, tenantId: string, id: string): Promise<UseCaseRow | undefined> {
  return forChange(
    db,
    db.selectFrom('use_cases').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id),
  ).executeTakeFirst()
}

export async function updateUseCase(db: Db, tenantId: string, id: string, changes: Partial<UseCaseRow>): Promise<void> {
  await db.updateTable('use_cases').set(changes).where('tenant_id', '=', tenantId).where('id', '=', id).execute()
}
