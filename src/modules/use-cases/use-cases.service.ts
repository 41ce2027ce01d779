import type { UseCaseRow } from '../../db/tables.js'
import { notFound } from '../../http/errors.js'
import type { Ctx } from '../../shared/context.js'
import type { Deps } from '../../shared/deps.js'
import { newId, now } from '../../shared/ids.js'
import { removeAssociations } from '../../shared/links.repo.js'
import { auditedUpdate, diff, runMutation, type Tx } from '../../shared/mutation.js'
import { keyset, type Page, toPage } from '../../shared/pagination.js'
import { nameColumns, presentFields, uniqueName } from '../../shared/records.js'
import { useCaseQuestionnaireIds } from '../questionnaires/questionnaires.repo.js'
import { replaceAttachedQuestionnaires } from '../questionnaires/questionnaires.service.js'
import { workflowStart } from '../workflow-stages/workflow-stages.service.js'
import * as repo from './use-cases.repo.js'
import type { UseCase, UseCaseCreate, UseCaseListQuery, UseCaseUpdate } from './use-cases.schemas.js'

export type UseCasesService = ReturnType<typeof createUseCasesService>

const AUDITED_FIELDS = [
  'name', 'description', 'ai_type', 'system_type', 'risk_category_level', 'regions', 'industries',
  'source', 'owner', 'creator_id', 'workflow_stage_id', 'workflow_stage_step',
] as const

export function createUseCasesService(deps: Pick<Deps, 'database'>) {
  const { database } = deps
  const { db } = database

  /** Fills questionnaire_ids for a page of use cases with one query. */
  async function withQuestionnaireIds(conn: Tx, tenantId: string, items: UseCase[]): Promise<UseCase[]> {
    const ids = await useCaseQuestionnaireIds(conn, tenantId, items.map((item) => item.id))
    return items.map((item) => ({ ...item, questionnaire_ids: ids.get(item.id) ?? [] }))
  }

  return {
    async list(ctx: Ctx, query: UseCaseListQuery): Promise<Page<UseCase>> {
      const ks = keyset(query, repo.USE_CASE_SORT_COLUMNS)
      const page = toPage(await repo.listUseCases(db, ctx.tenantId, query, ks), ks, toUseCase)
      return { ...page, items: await withQuestionnaireIds(db, ctx.tenantId, page.items) }
    },

    async get(ctx: Ctx, id: string): Promise<UseCase> {
      const row = await repo.findUseCase(db, ctx.tenantId, id)
      if (!row) throw notFound('use case', id)
      return (await withQuestionnaireIds(db, ctx.tenantId, [toUseCase(row)]))[0]
    },

    async create(ctx: Ctx, input: UseCaseCreate): Promise<UseCase> {
      const at = now()
      const fields: Omit<UseCaseRow, 'workflow_stage_id' | 'workflow_stage_step'> = {
        id: newId('uc'),
        tenant_id: ctx.tenantId,
        ...nameColumns(input.name),
        description: input.description ?? null,
        ai_type: input.ai_type ?? null,
        system_type: input.system_type ?? null,
        risk_category_level: input.risk_category_level ?? null,
        regions: JSON.stringify(input.regions ?? []),
        industries: JSON.stringify(input.industries ?? []),
        source: input.source ?? null,
        owner: input.owner ?? null,
        workflow_rejection_reason: null,
        creator_id: input.creator_id ?? ctx.actor.id,
        created_at: at,
        updated_at: at,
      }
      return uniqueName(db, ctx, { table: 'use_cases', what: 'use case' }, input.name, () =>
        runMutation(database, ctx, async (tx) => {
          // A new use case starts in the tenant's start stage, at its first step.
          const row: UseCaseRow = { ...fields, ...(await workflowStart(tx, ctx.tenantId)) }
          await repo.insertUseCase(tx, row)
          const created = toUseCase(row)
          const attached = input.questionnaire_ids ? await replaceAttachedQuestionnaires(tx, ctx, 'use_case', row, input.questionnaire_ids) : []
          return {
            result: attached.length > 0 ? (await withQuestionnaireIds(tx, ctx.tenantId, [created]))[0] : created,
            audit: [
              {
                action: 'use_case.created',
                resourceType: 'use_case',
                resourceId: row.id,
                resourceName: row.name,
                useCaseId: row.id,
                changes: diff(blankUseCase, created, AUDITED_FIELDS),
              },
              ...attached,
            ],
          }
        }),
      )
    },

    async update(ctx: Ctx, id: string, input: UseCaseUpdate): Promise<UseCase> {
      return uniqueName(db, ctx, { table: 'use_cases', what: 'use case' }, input.name, () =>
        runMutation(database, ctx, async (tx) => {
          const current = await repo.findUseCase(tx, ctx.tenantId, id)
          if (!current) throw notFound('use case', id)
          const changes = rowChanges(input)
          const [before] = await withQuestionnaireIds(tx, ctx.tenantId, [toUseCase(current)])
          const after = { ...toUseCase({ ...current, ...changes }), questionnaire_ids: before.questionnaire_ids }
          const updated = await auditedUpdate(
            { before, after, fields: AUDITED_FIELDS, audit: { action: 'use_case.updated', resourceType: 'use_case', resourceId: id, resourceName: after.name, useCaseId: id } },
            async (updatedAt) => {
              await repo.updateUseCase(tx, ctx.tenantId, id, { ...changes, updated_at: updatedAt })
            },
          )
          if (input.questionnaire_ids === undefined) return updated
          const attached = await replaceAttachedQuestionnaires(tx, ctx, 'use_case', after, input.questionnaire_ids)
          return { result: (await withQuestionnaireIds(tx, ctx.tenantId, [updated.result]))[0], audit: [updated.audit, ...attached].flat() }
        }),
      )
    },

    async delete(ctx: Ctx, id: string): Promise<void> {
      await runMutation(database, ctx, async (tx) => {
        const current = await repo.findUseCase(tx, ctx.tenantId, id)
        if (!current) throw notFound('use case', id)
        const unlinked = await removeAssociations(tx, database.dialect, ctx.tenantId, 'use_case', current)
        await repo.deleteUseCase(tx, ctx.tenantId, id)
        return {
          result: undefined,
          audit: [...unlinked, { action: 'use_case.deleted', resourceType: 'use_case', resourceId: id, resourceName: current.name, useCaseId: id }],
        }
      })
    },
  }
}

/** The columns a PATCH body sets; `null` clears a field, an absent field stays as it is. */
function rowChanges(input: UseCaseUpdate): Partial<UseCaseRow> {
  const changes: Partial<UseCaseRow> = {
    ...presentFields(input, ['description', 'ai_type', 'system_type', 'risk_category_level', 'source', 'owner', 'creator_id']),
    ...(input.name !== undefined && nameColumns(input.name)),
  }
  for (const field of ['regions', 'industries'] as const) {
    if (input[field] !== undefined) changes[field] = JSON.stringify(input[field] ?? [])
  }
  return changes
}

export function toUseCase(row: UseCaseRow): UseCase {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    ai_type: row.ai_type,
    system_type: row.system_type,
    risk_category_level: row.risk_category_level as UseCase['risk_category_level'],
    regions: JSON.parse(row.regions) as string[],
    industries: JSON.parse(row.industries) as string[],
    source: row.source,
    owner: row.owner,
    workflow_stage_id: row.workflow_stage_id,
    workflow_stage_step: row.workflow_stage_step as UseCase['workflow_stage_step'],
    questionnaire_ids: [],
    creator_id: row.creator_id,
    created_at: row.created_at,
    updated_at: row.updated_at,
  }
}

const blankUseCase: UseCase = {
  id: '', name: null as unknown as string, description: null, ai_type: null, system_type: null, risk_category_level: null, regions: [], industries: [],
  source: null, owner: null, workflow_stage_id: null, workflow_stage_step: null, questionnaire_ids: [], creator_id: null, created_at: '', updated_at: '',
}
