import { isUniqueViolation } from '../../db/create-db.js'
import type { WorkflowStageRow } from '../../db/tables.js'
import { type AppError, conflict, invalid, notFound } from '../../http/errors.js'
import { type Ctx, systemCtx } from '../../shared/context.js'
import type { Deps } from '../../shared/deps.js'
import { newId, now } from '../../shared/ids.js'
import { auditedUpdate, type AuditEntry, createdChanges, runMutation, type Tx } from '../../shared/mutation.js'
import { keyset, type Page, toPage } from '../../shared/pagination.js'
import type { Columns } from '../../shared/catalog.js'
import { derive, flag, ID, name, plain, stored, TIME } from '../../shared/fields.js'
import { uniqueName } from '../../shared/records.js'
import { nameKey } from '../../shared/search.js'
import * as repo from './workflow-stages.repo.js'
import type {
  WorkflowStage,
  WorkflowStageCreate,
  WorkflowStageListQuery,
  WorkflowStageUpdate,
} from './workflow-stages.schemas.js'
import { firstStep } from './workflow-steps.js'

export type WorkflowStagesService = ReturnType<typeof createWorkflowStagesService>

/** Each field of a workflow stage, once (see shared/fields.ts). */
const fields = derive<WorkflowStageRow, WorkflowStage, WorkflowStageCreate, WorkflowStageUpdate>({
  id: ID,
  name,
  description: plain(),
  // Set by create (a body makes intermediate stages only) and by provisioning for the system stages.
  type: stored({ audited: true }),
  // A create without one takes the end stage's place (the end stage moves down): written below, under the lock.
  position: plain(),
  assessment_required: flag({ default: true }),
  evidence_collection_required: flag({ default: true }),
  created_at: TIME,
  updated_at: TIME,
})

export function createWorkflowStagesService(deps: Pick<Deps, 'database'>) {
  const { database } = deps
  const { db } = database

  const unique = { table: 'workflow_stages', what: 'workflow stage' } as const

  /** Locks the tenant's stages for this transaction and returns its end stage (always there once provisioned). */
  async function lock(tx: Tx, tenantId: string): Promise<WorkflowStageRow> {
    const end = await repo.lockStages(tx, tenantId, database.dialect)
    if (!end) throw conflict('this tenant has no end workflow stage yet; restart the service to provision it')
    return end
  }

  const outOfRange = (end: WorkflowStageRow) =>
    invalid(
      'position',
      `must be between 1 and ${end.position}: strictly after the start stage (0) and at most the end stage's position (${end.position}), which then moves down`,
    )

  return {
    async list(ctx: Ctx, query: WorkflowStageListQuery): Promise<Page<WorkflowStage>> {
      const ks = keyset(query, repo.WORKFLOW_STAGE_SORT_COLUMNS, 'position')
      return toPage(await repo.listStages(db, ctx.tenantId, query, ks), ks, toWorkflowStage)
    },

    async get(ctx: Ctx, id: string): Promise<WorkflowStage> {
      const row = await repo.findStage(db, ctx.tenantId, id)
      if (!row) throw notFound('workflow stage', id)
      return toWorkflowStage(row)
    },

    async create(ctx: Ctx, input: WorkflowStageCreate): Promise<WorkflowStage> {
      const name = input.name.trim()
      return uniqueName(db, ctx, unique, name, () =>
        runMutation(
          database,
          ctx,
          async (tx) => {
            const end = await lock(tx, ctx.tenantId)
            const position = input.position ?? end.position
            if (position > end.position) throw outOfRange(end)
            const at = now()
            const row: WorkflowStageRow = {
              id: newId('ws'),
              tenant_id: ctx.tenantId,
              ...(fields.createColumns(input, ctx) as Columns<WorkflowStageRow>),
              type: 'intermediate',
              position,
              created_at: at,
              updated_at: at,
            }
            await repo.makeRoomAt(tx, ctx.tenantId, position, row.id, at)
            await repo.insertStage(tx, row)
            const created = toWorkflowStage(row)
            return {
              result: created,
              audit: stageAudit('workflow_stage.created', row, createdChanges(created, fields.audited)),
            }
          },
          [repo.STAGES_LOCK],
        ),
      )
    },

    async update(ctx: Ctx, id: string, input: WorkflowStageUpdate): Promise<WorkflowStage> {
      return uniqueName(db, ctx, unique, input.name, () =>
        runMutation(
          database,
          ctx,
          async (tx) => {
            const end = await lock(tx, ctx.tenantId)
            const current = await repo.findStage(tx, ctx.tenantId, id)
            if (!current) throw notFound('workflow stage', id)
            if (current.type !== 'intermediate') throw systemManaged(current, 'changed')
            if (input.position !== undefined && input.position > end.position) throw outOfRange(end)
            const changes: Partial<WorkflowStageRow> = fields.updateColumns(input, ctx)
            const before = toWorkflowStage(current)
            const after = toWorkflowStage({ ...current, ...changes })
            return auditedUpdate(
              {
                before,
                after,
                fields: fields.audited,
                audit: stageAudit('workflow_stage.updated', { ...current, ...changes }),
              },
              async (updatedAt, changed) => {
                if (changed.position) await repo.makeRoomAt(tx, ctx.tenantId, after.position, id, updatedAt)
                await repo.updateStage(tx, ctx.tenantId, id, { ...changes, updated_at: updatedAt })
              },
            )
          },
          [repo.STAGES_LOCK],
        ),
      )
    },

    async delete(ctx: Ctx, id: string): Promise<void> {
      await runMutation(
        database,
        ctx,
        async (tx) => {
          await lock(tx, ctx.tenantId)
          const current = await repo.findStage(tx, ctx.tenantId, id)
          if (!current) throw notFound('workflow stage', id)
          if (current.type !== 'intermediate') throw systemManaged(current, 'deleted')
          const inUse = await repo.countUseCasesInStage(tx, ctx.tenantId, id)
          if (inUse > 0) {
            throw conflict(
              `workflow stage ${id} ("${current.name}") holds ${inUse} use case${inUse === 1 ? '' : 's'}; move ${inUse === 1 ? 'it' : 'them'} to another stage first (PUT /use_cases/{id}/workflow)`,
            )
          }
          await repo.deleteStage(tx, ctx.tenantId, id)
          return { result: undefined, audit: stageAudit('workflow_stage.deleted', current) }
        },
        [repo.STAGES_LOCK],
      )
    },
  }
}

function systemManaged(stage: WorkflowStageRow, verb: string): AppError {
  return conflict(
    `workflow stage ${stage.id} is the tenant's ${stage.type} stage; it is system-managed and cannot be ${verb}`,
  )
}

function stageAudit(
  action: string,
  row: WorkflowStageRow,
  changes: Record<string, [unknown, unknown]> | null = null,
): AuditEntry {
  return { action, resourceType: 'workflow_stage', resourceId: row.id, resourceName: row.name, changes }
}

export const toWorkflowStage = (row: WorkflowStageRow): WorkflowStage => fields.toItem(row)

/** The system-managed stages every tenant has. The end stage requires no steps: arriving there is `clear`, and final. */
const SYSTEM_STAGES = [
  {
    type: 'start',
    name: 'Start',
    description: 'Where every new use case begins.',
    position: 0,
    assessment_required: 1,
    evidence_collection_required: 1,
  },
  {
    type: 'end',
    name: 'End',
    description: 'The end of the workflow: a use case here is cleared for good.',
    position: 1,
    assessment_required: 0,
    evidence_collection_required: 0,
  },
] as const

/**
 * Creates the tenant's start and end stages when missing (a TenantProvisioner, run in the tenant-creating
 * transaction), and puts use cases that were created before stages existed into the start stage.
 */
export async function provisionSystemStages(tx: Tx, ctx: Ctx): Promise<AuditEntry[]> {
  const audit: AuditEntry[] = []
  const at = now()
  for (const stage of SYSTEM_STAGES) {
    if (await repo.findSystemStage(tx, ctx.tenantId, stage.type)) continue
    const row: WorkflowStageRow = {
      id: newId('ws'),
      tenant_id: ctx.tenantId,
      ...stage,
      name_key: nameKey(stage.name),
      created_at: at,
      updated_at: at,
    }
    if (stage.type === 'start') await repo.makeRoomAt(tx, ctx.tenantId, 0, row.id, at)
    else row.position = ((await repo.maxPosition(tx, ctx.tenantId)) ?? 0) + 1
    await repo.insertStage(tx, row)
    audit.push(stageAudit('workflow_stage.created', row, createdChanges(toWorkflowStage(row), fields.audited)))
  }
  const start = (await repo.findSystemStage(tx, ctx.tenantId, 'start'))!
  const step = firstStep(start)
  for (const useCase of await repo.findUseCasesWithoutStage(tx, ctx.tenantId)) {
    await repo.moveUseCase(tx, ctx.tenantId, useCase.id, {
      workflow_stage_id: start.id,
      workflow_stage_step: step,
      updated_at: at,
    })
    audit.push({
      action: 'use_case.workflow_moved',
      resourceType: 'use_case',
      resourceId: useCase.id,
      resourceName: useCase.name,
      useCaseId: useCase.id,
      subObjectType: 'workflow_stage',
      subObjectId: start.id,
      subObjectName: start.name,
      changes: { workflow_stage_id: [null, start.id], workflow_stage_step: [useCase.workflow_stage_step, step] },
      metadata: { reason: 'placed in the start stage when workflow stages were provisioned' },
    })
  }
  return audit
}

/**
 * Provisions the system stages of tenants created before they came with the tenant. Idempotent and cheap
 * when nothing is missing (one query); run at every start.
 */
export async function ensureSystemStages(database: Deps['database']): Promise<string[]> {
  const provisioned: string[] = []
  for (const tenantId of await repo.tenantsWithoutSystemStages(database.db)) {
    try {
      await runMutation(database, systemCtx(tenantId), async (tx) => ({
        result: undefined,
        audit: await provisionSystemStages(tx, systemCtx(tenantId)),
      }))
      provisioned.push(tenantId)
    } catch (err) {
      // Another instance starting at the same time provisioned it first.
      if (!isUniqueViolation(err)) throw err
    }
  }
  return provisioned
}

/** Where a new use case begins: the tenant's start stage at its first step (nowhere, before the tenant has one). */
export async function workflowStart(
  tx: Tx,
  tenantId: string,
): Promise<{ workflow_stage_id: string | null; workflow_stage_step: string | null }> {
  const start = await repo.findSystemStage(tx, tenantId, 'start')
  return start
    ? { workflow_stage_id: start.id, workflow_stage_step: firstStep(start) }
    : { workflow_stage_id: null, workflow_stage_step: null }
}
