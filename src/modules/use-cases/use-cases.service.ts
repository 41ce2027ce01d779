import { type ExpressionBuilder, sql } from 'kysely'
import type { Tables, UseCaseRow } from '../../db/tables.js'
import {
  type Columns,
  createCatalogService,
  createJsonReads,
  type JsonCatalogSpec,
  NAMED,
} from '../../shared/catalog.js'
import type { Deps } from '../../shared/deps.js'
import {
  customFieldValues,
  derive,
  ID,
  list,
  name,
  outside,
  ownerField,
  plain,
  stored,
  TIME,
} from '../../shared/fields.js'
import { questionnaireIds } from '../../shared/item-json.js'
import { removeAssociations } from '../../shared/links.repo.js'
import { useCaseQuestionnaireIds } from '../questionnaires/questionnaires.service.js'
import { answerOnCreate, replaceAttachedQuestionnaires } from '../questionnaires/questionnaires.service.js'
import { workflowStart } from '../workflow-stages/workflow-stages.service.js'
import { utcDay } from '../../shared/today.js'
import type { UseCase, UseCaseCreate, UseCaseListQuery, UseCaseUpdate } from './use-cases.schemas.js'

/** Controls still to do, as the governance summary counts them (its module reads use cases, so not imported). */
const OPEN_STATUSES = ['pending', 'in_progress']

/** The controls of the use case a list query is at (for the filters on them). */
const controlsOf = (eb: ExpressionBuilder<Tables, 'use_cases'>) =>
  eb
    .selectFrom('use_case_controls as c')
    .select(sql<number>`1`.as('one'))
    .whereRef('c.use_case_id', '=', 'use_cases.id')
    .whereRef('c.tenant_id', '=', 'use_cases.tenant_id')

/** The questionnaires attached to the use case a list query is at (for the completion filter). */
const questionnairesOf = (eb: ExpressionBuilder<Tables, 'use_cases'>) =>
  eb
    .selectFrom('use_case_questionnaires as a')
    .select(sql<number>`1`.as('one'))
    .whereRef('a.use_case_id', '=', 'use_cases.id')
    .whereRef('a.tenant_id', '=', 'use_cases.tenant_id')

/** A list filtered by overdue controls changes at midnight (UTC) without a write. */
export const overdueListed = (query: UseCaseListQuery): boolean => query.overdue_controls !== undefined

export type UseCasesService = ReturnType<typeof createUseCasesService>

/** Each field of a use case, once: its writes, its audit, whether lists read it, and its rendering derive from here. */
const fields = derive<UseCaseRow, UseCase, UseCaseCreate, UseCaseUpdate>({
  id: ID,
  name,
  description: plain(),
  ai_type: plain(),
  system_type: plain(),
  risk_category_level: plain({ listed: true }),
  regions: list(),
  industries: list(),
  source: plain(),
  owner: ownerField,
  custom_fields: customFieldValues,
  workflow_stage_id: stored({ audited: true, listed: true }),
  workflow_stage_step: stored({ audited: true, listed: true }),
  questionnaire_ids: outside(questionnaireIds),
  creator_id: plain({ createDefault: (ctx) => ctx.actor.id }),
  created_at: TIME,
  updated_at: TIME,
})

export const useCaseCatalog: JsonCatalogSpec<UseCaseRow, UseCase, UseCaseCreate, UseCaseUpdate, UseCaseListQuery> = {
  table: 'use_cases',
  label: 'use case',
  resourceType: 'use_case',
  idPrefix: 'uc',
  governed: 'use_case',
  auditRefs: (row) => ({ useCaseId: row.id }),
  daily: overdueListed,
  ...NAMED,
  ...fields,
  // A new use case starts in the tenant's start stage, at its first step.
  create: async (input, ctx, tx) =>
    ({
      ...fields.createColumns(input, ctx),
      workflow_rejection_reason: null,
      ...(await workflowStart(tx, ctx.tenantId)),
    }) as Columns<UseCaseRow>,
  filter: (q, query) => {
    let out = q
    if (query.risk_category_level !== undefined) out = out.where('risk_category_level', '=', query.risk_category_level)
    if (query.workflow_stage_id !== undefined) out = out.where('workflow_stage_id', '=', query.workflow_stage_id)
    if (query.workflow_stage_step !== undefined) out = out.where('workflow_stage_step', '=', query.workflow_stage_step)
    if (query.control_status !== undefined) {
      const status = query.control_status
      out = out.where((eb) => eb.exists(controlsOf(eb).where('c.status', '=', status)))
    }
    if (query.overdue_controls !== undefined) {
      // Overdue as the governance summary counts it: open, and due before today (UTC).
      const today = utcDay()
      const overdue = (eb: ExpressionBuilder<Tables, 'use_cases'>) =>
        eb.exists(
          controlsOf(eb)
            .where('c.status', 'in', OPEN_STATUSES)
            .where('c.due_date', 'is not', null)
            .where('c.due_date', '<', today),
        )
      out = out.where((eb) => (query.overdue_controls ? overdue(eb) : eb.not(overdue(eb))))
    }
    if (query.questionnaire_completion !== undefined) {
      // Complete as the governance summary counts it: no attached questionnaire misses a required answer.
      const incomplete = (eb: ExpressionBuilder<Tables, 'use_cases'>) =>
        eb.exists(questionnairesOf(eb).where('a.missing_required', '>', 0))
      const completion = query.questionnaire_completion
      out = out.where((eb) =>
        completion === 'none'
          ? eb.not(eb.exists(questionnairesOf(eb)))
          : completion === 'incomplete'
            ? incomplete(eb)
            : eb.and([eb.exists(questionnairesOf(eb)), eb.not(incomplete(eb))]),
      )
    }
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
}

export function createUseCasesService(deps: Pick<Deps, 'database' | 'readModel'>) {
  return {
    ...createCatalogService(deps.database, useCaseCatalog, deps.readModel.records),
    ...createJsonReads(deps.database, useCaseCatalog, deps.readModel.records),
  }
}
