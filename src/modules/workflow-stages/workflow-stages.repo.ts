import { type Kysely, sql } from 'kysely'
import type { DialectName } from '../../db/create-db.js'
import type { Tables, UseCaseRow, WorkflowStageRow } from '../../db/tables.js'
import { applyKeyset, type Keyset, pageTextOf, withinTextBudget } from '../../shared/pagination.js'
import { containsText } from '../../shared/search.js'
import type { WorkflowStageListQuery } from './workflow-stages.schemas.js'
import { forChange } from '../../shared/mutation.js'
import { keptRead } from '../../read-model/index.js'

type Db = Kysely<Tables>

export const WORKFLOW_STAGE_SORT_COLUMNS = { position: 'position', name: 'name_key', created_at: 'created_at' }

export function findStage(db: Db, tenantId: string, id: string): Promise<WorkflowStageRow | undefined> {
  return forChange(
    db,
    db.selectFrom('workflow_stages').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id),
  ).executeTakeFirst()
}

/** The tenant's start or end stage (kept for the rest of a group transaction: see kept-reads). */
export function findSystemStage(
  db: Db,
  tenantId: string,
  type: 'start' | 'end',
): Promise<WorkflowStageRow | undefined> {
  return keptRead(db, 'workflow_stages', `${tenantId}/${type}`, () =>
    db
      .selectFrom('workflow_stages')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('type', '=', type)
      .executeTakeFirst(),
  )
}

/** The stage after `stage` in workflow order (position, then id). */
export function findNextStage(
  db: Db,
  tenantId: string,
  stage: WorkflowStageRow,
): Promise<WorkflowStageRow | undefined> {
  return db
    .selectFrom('workflow_stages')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where((eb) =>
      eb.or([
        eb('position', '>', stage.position),
        eb.and([eb('position', '=', stage.position), eb('id', '>', stage.id)]),
      ]),
    )
    .orderBy('position')
    .orderBy('id')
    .limit(1)
    .executeTakeFirst()
}

/**
 * Serialises a tenant's stage changes and workflow moves: on PostgreSQL by locking the tenant's end stage row
 * (SQLite transactions already take the write lock up front). Returns the end stage. * Mutations that call it name STAGES_LOCK among their locks.
 */
/** The lock key (TransactionOptions.locks) of the tenant's stages, which lockStages locks. */
export const STAGES_LOCK = 'workflow_stages'

export async function lockStages(
  db: Db,
  tenantId: string,
  dialect: DialectName,
): Promise<WorkflowStageRow | undefined> {
  let q = db.selectFrom('workflow_stages').selectAll().where('tenant_id', '=', tenantId).where('type', '=', 'end')
  if (dialect === 'postgres') q = q.forUpdate()
  return q.executeTakeFirst()
}

export function listStages(
  db: Db,
  tenantId: string,
  query: WorkflowStageListQuery,
  ks: Keyset,
): Promise<WorkflowStageRow[]> {
  let q = db.selectFrom('workflow_stages').selectAll().where('tenant_id', '=', tenantId)
  if (query.q !== undefined) q = q.where(containsText('name_key', query.q))
  if (query.type !== undefined) q = q.where('type', '=', query.type)
  return withinTextBudget(db, applyKeyset(q, ks), ks, pageTextOf('workflow_stages')).execute()
}

export async function insertStage(db: Db, row: WorkflowStageRow): Promise<void> {
  await db.insertInto('workflow_stages').values(row).execute()
}

export async function updateStage(
  db: Db,
  tenantId: string,
  id: string,
  changes: Partial<WorkflowStageRow>,
): Promise<void> {
  await db.updateTable('workflow_stages').set(changes).where('tenant_id', '=', tenantId).where('id', '=', id).execute()
}

export async function deleteStage(db: Db, tenantId: string, id: string): Promise<void> {
  await db.deleteFrom('workflow_stages').where('tenant_id', '=', tenantId).where('id', '=', id).execute()
}

/** Frees `position` for `exceptId` when another stage holds it: every stage at or after it moves down by one. */
export async function makeRoomAt(
  db: Db,
  tenantId: string,
  position: number,
  exceptId: string,
  at: string,
): Promise<void> {
  const taken = await db
    .selectFrom('workflow_stages')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('position', '=', position)
    .where('id', '<>', exceptId)
    .executeTakeFirst()
  if (!taken) return
  await db
    .updateTable('workflow_stages')
    .set({ position: sql`position + 1`, updated_at: at })
    .where('tenant_id', '=', tenantId)
    .where('position', '>=', position)
    .where('id', '<>', exceptId)
    .execute()
}

export async function countUseCasesInStage(db: Db, tenantId: string, stageId: string): Promise<number> {
  const row = await db
    .selectFrom('use_cases')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('tenant_id', '=', tenantId)
    .where('workflow_stage_id', '=', stageId)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

export async function maxPosition(db: Db, tenantId: string): Promise<number | undefined> {
  const row = await db
    .selectFrom('workflow_stages')
    .select((eb) => eb.fn.max('position').as('max'))
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst()
  return row?.max ?? undefined
}

/** Moves a use case in the workflow: its stage, step and rejection reason are the workflow's columns. */
export async function moveUseCase(
  db: Db,
  tenantId: string,
  id: string,
  changes: Pick<
    Partial<UseCaseRow>,
    'workflow_stage_id' | 'workflow_stage_step' | 'workflow_rejection_reason' | 'updated_at'
  >,
): Promise<void> {
  await db.updateTable('use_cases').set(changes).where('tenant_id', '=', tenantId).where('id', '=', id).execute()
}

/** Use cases created before the tenant had workflow stages. */
export function findUseCasesWithoutStage(db: Db, tenantId: string): Promise<UseCaseRow[]> {
  return db
    .selectFrom('use_cases')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('workflow_stage_id', 'is', null)
    .orderBy('id')
    .execute()
}

/**
 * Tenants missing their start or end stage (created before stages came with the tenant). The one query that
 * spans tenants: it runs at start, for the maintenance that provisions them one tenant at a time.
 */
export async function tenantsWithoutSystemStages(db: Db): Promise<string[]> {
  const rows = await db
    .selectFrom('tenants')
    .select('id')
    .where((eb) =>
      eb.or(
        (['start', 'end'] as const).map((type) =>
          eb.not(
            eb.exists(
              eb
                .selectFrom('workflow_stages')
                .select('id')
                .whereRef('workflow_stages.tenant_id', '=', 'tenants.id')
                .where('workflow_stages.type', '=', type),
            ),
          ),
        ),
      ),
    )
    .orderBy('id')
    .execute()
  return rows.map((r) => r.id)
}
