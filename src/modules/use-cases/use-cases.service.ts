import type { UseCaseRow } from '../../db/tables.js'
import { createCatalogService, createJsonReads, type JsonCatalogSpec, NAMED } from '../../shared/catalog.js'
import type { Deps } from '../../shared/deps.js'
import { ownerOf } from '../../shared/governed.js'
import { column, customFields, owner, questionnaireIds, storedJson } from '../../shared/item-json.js'
import { removeAssociations } from '../../shared/links.repo.js'
import { nameColumns, presentFields } from '../../shared/records.js'
import { useCaseQuestionnaireIds } from '../questionnaires/questionnaires.repo.js'
import { answerOnCreate, replaceAttachedQuestionnaires } from '../questionnaires/questionnaires.service.js'
import { workflowStart } from '../workflow-stages/workflow-stages.service.js'
import type { UseCase, UseCaseCreate, UseCaseListQuery, UseCaseUpdate } from './use-cases.schemas.js'

export type UseCasesService = ReturnType<typeof createUseCasesService>

const PLAIN_FIELDS = ['description', 'ai_type', 'system_type', 'risk_category_level', 'source', 'creator_id'] as const
const LIST_FIELDS = ['regions', 'industries'] as const

export const useCaseCatalog: JsonCatalogSpec<UseCaseRow, UseCase, UseCaseCreate, UseCaseUpdate, UseCaseListQuery> = {
  table: 'use_cases',
  label: 'use case',
  resourceType: 'use_case',
  idPrefix: 'uc',
  governed: 'use_case',
  isUseCase: true,
  ...NAMED,
  audited: ['name', ...PLAIN_FIELDS, ...LIST_FIELDS, 'owner', 'workflow_stage_id', 'workflow_stage_step'],
  // Lists filter on risk_category_level, owner, custom field values and creation time, search and sort the name.
  unlisted: [
    'description',
    'ai_type',
    'system_type',
    'source',
    'creator_id',
    ...LIST_FIELDS,
    'workflow_stage_id',
    'workflow_stage_step',
  ],
  // A new use case starts in the tenant's start stage, at its first step.
  create: async (input, ctx, tx) => ({
    ...nameColumns(input.name),
    description: input.description ?? null,
    ai_type: input.ai_type ?? null,
    system_type: input.system_type ?? null,
    risk_category_level: input.risk_category_level ?? null,
    regions: JSON.stringify(input.regions ?? []),
    industries: JSON.stringify(input.industries ?? []),
    source: input.source ?? null,
    owner_id: null,
    owner_type: null,
    workflow_rejection_reason: null,
    creator_id: input.creator_id ?? ctx.actor.id,
    ...(await workflowStart(tx, ctx.tenantId)),
  }),
  update: (input) => {
    const changes: Partial<UseCaseRow> = {
      ...presentFields(input, PLAIN_FIELDS),
      ...(input.name !== undefined && nameColumns(input.name)),
    }
    for (const field of LIST_FIELDS) {
      if (input[field] !== undefined) changes[field] = JSON.stringify(input[field] ?? [])
    }
    return changes
  },
  filter: (q, query) => {
    let out = q
    if (query.risk_category_level !== undefined) out = out.where('risk_category_level', '=', query.risk_category_level)
    if (query.created_after !== undefined)
      out = out.where('created_at', '>', new Date(query.created_after).toISOString())
    if (query.created_before !== undefined)
      out = out.where('created_at', '<', new Date(query.created_before).toISOString())
    return out
  },
  /**
   * questionnaire_ids attaches in the same transaction (on update the list replaces the attached set), and on
   * create `questions` answers them there too.
   */
  afterWrite: async (tx, ctx, row, input) => [
    ...(input.questionnaire_ids
      ? await replaceAttachedQuestionnaires(tx, ctx, 'use_case', row, input.questionnaire_ids)
      : []),
    ...('questions' in input && input.questions ? await answerOnCreate(tx, ctx, row, input.questions) : []),
  ],
  /** Fills questionnaire_ids for a page of use cases with one query. */
  decorate: async (db, tenantId, items) => {
    const ids = await useCaseQuestionnaireIds(
      db,
      tenantId,
      items.map((item) => item.id),
    )
    return items.map((item) => ({ ...item, questionnaire_ids: ids.get(item.id) ?? [] }))
  },
  beforeDelete: (tx, ctx, row, dialect) => removeAssociations(tx, dialect, ctx.tenantId, 'use_case', row),
  toItem: (row) => ({
    id: row.id,
    name: row.name,
    description: row.description,
    ai_type: row.ai_type,
    system_type: row.system_type,
    risk_category_level: row.risk_category_level as UseCase['risk_category_level'],
    regions: JSON.parse(row.regions) as string[],
    industries: JSON.parse(row.industries) as string[],
    source: row.source,
    owner: ownerOf(row.owner_id, row.owner_type),
    custom_fields: [],
    workflow_stage_id: row.workflow_stage_id,
    workflow_stage_step: row.workflow_stage_step as UseCase['workflow_stage_step'],
    questionnaire_ids: [],
    creator_id: row.creator_id,
    created_at: row.created_at,
    updated_at: row.updated_at,
  }),
  json: {
    id: column('id'),
    name: column('name'),
    description: column('description'),
    ai_type: column('ai_type'),
    system_type: column('system_type'),
    risk_category_level: column('risk_category_level'),
    regions: storedJson('regions'),
    industries: storedJson('industries'),
    source: column('source'),
    owner,
    custom_fields: customFields,
    workflow_stage_id: column('workflow_stage_id'),
    workflow_stage_step: column('workflow_stage_step'),
    questionnaire_ids: questionnaireIds,
    creator_id: column('creator_id'),
    created_at: column('created_at'),
    updated_at: column('updated_at'),
  },
}

export function createUseCasesService(deps: Pick<Deps, 'database' | 'itemCache'>) {
  return {
    ...createCatalogService(deps.database, useCaseCatalog, deps.itemCache),
    ...createJsonReads(deps.database, useCaseCatalog, deps.itemCache),
  }
}
