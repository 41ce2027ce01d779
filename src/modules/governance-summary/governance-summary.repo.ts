import { type Kysely, sql } from 'kysely'
import type { Tables } from '../../db/tables.js'

type Db = Kysely<Tables>

/** Statuses that still need work: a control in one of them past its due date is overdue. */
export const OPEN_STATUSES = ['pending', 'in_progress']

export function countUseCasesByRiskLevel(db: Db, tenantId: string) {
  return db
    .selectFrom('use_cases')
    .where('tenant_id', '=', tenantId)
    .select(['risk_category_level', (eb) => eb.fn.countAll<number>().as('count')])
    .groupBy('risk_category_level')
    .execute()
}

export function countUseCasesByStage(db: Db, tenantId: string) {
  return db
    .selectFrom('use_cases as u')
    .leftJoin('workflow_stages as s', (join) =>
      join.onRef('s.id', '=', 'u.workflow_stage_id').onRef('s.tenant_id', '=', 'u.tenant_id'),
    )
    .where('u.tenant_id', '=', tenantId)
    .select([
      'u.workflow_stage_id as stage_id',
      's.name as stage_name',
      's.position as position',
      'u.workflow_stage_step as step',
      (eb) => eb.fn.countAll<number>().as('count'),
    ])
    .groupBy(['u.workflow_stage_id', 's.name', 's.position', 'u.workflow_stage_step'])
    .execute()
}

export function countControlsByStatus(db: Db, tenantId: string) {
  return db
    .selectFrom('use_case_controls')
    .where('tenant_id', '=', tenantId)
    .select(['status', (eb) => eb.fn.countAll<number>().as('count')])
    .groupBy('status')
    .execute()
}

/** Open controls per assignee (null: unassigned), with how many of them are overdue at `asOf`. */
export function countOpenControlsByAssignee(db: Db, tenantId: string, asOf: string) {
  return db
    .selectFrom('use_case_controls')
    .where('tenant_id', '=', tenantId)
    .where('status', 'in', OPEN_STATUSES)
    .select([
      'assignee_id',
      'assignee_type',
      (eb) => eb.fn.countAll<number>().as('open'),
      (eb) =>
        eb.fn
          .sum<number>(
            eb
              .case()
              .when(eb.and([eb('due_date', 'is not', null), eb('due_date', '<', asOf)]))
              .then(1)
              .else(0)
              .end(),
          )
          .as('overdue'),
    ])
    .groupBy(['assignee_id', 'assignee_type'])
    .execute()
}

/** Per use case: how many open controls are due before `asOf`, and the earliest such due date. */
function overdueByUseCase(db: Db, tenantId: string, asOf: string) {
  return db
    .selectFrom('use_case_controls as c')
    .innerJoin('use_cases as u', (join) =>
      join.onRef('u.id', '=', 'c.use_case_id').onRef('u.tenant_id', '=', 'c.tenant_id'),
    )
    .where('c.tenant_id', '=', tenantId)
    .where('c.status', 'in', OPEN_STATUSES)
    .where('c.due_date', 'is not', null)
    .where('c.due_date', '<', asOf)
    .groupBy(['u.id', 'u.name', 'u.risk_category_level'])
}

export async function countOverdue(
  db: Db,
  tenantId: string,
  asOf: string,
): Promise<{ controls: number; useCases: number }> {
  const row = await db
    .selectFrom(
      overdueByUseCase(db, tenantId, asOf)
        .select(['u.id', (eb) => eb.fn.countAll<number>().as('n')])
        .as('o'),
    )
    .select([
      (eb) => eb.fn.coalesce(eb.fn.sum<number>('o.n'), sql<number>`0`).as('controls'),
      (eb) => eb.fn.countAll<number>().as('use_cases'),
    ])
    .executeTakeFirstOrThrow()
  return { controls: Number(row.controls), useCases: Number(row.use_cases) }
}

export function listOverdueUseCases(db: Db, tenantId: string, asOf: string, limit: number) {
  const riskRank = sql<number>`case u.risk_category_level when 'high' then 0 when 'medium' then 1 when 'low' then 2 when 'none' then 3 else 4 end`
  return overdueByUseCase(db, tenantId, asOf)
    .select([
      'u.id as id',
      'u.name as name',
      'u.risk_category_level as risk_category_level',
      (eb) => eb.fn.countAll<number>().as('overdue_controls'),
      (eb) => eb.fn.min<string>('c.due_date').as('earliest_due_date'),
    ])
    .orderBy(riskRank)
    .orderBy(sql`count(*)`, 'desc')
    .orderBy('u.id')
    .limit(limit)
    .execute()
}

/**
 * Questionnaire attachments to use cases, and the use cases carrying any, by completion (the stored count of
 * required questions unanswered, which the use case list's `questionnaire_completion` filter reads too).
 */
export async function countQuestionnaireCompletion(db: Db, tenantId: string) {
  const perUseCase = db
    .selectFrom('use_case_questionnaires')
    .where('tenant_id', '=', tenantId)
    .select([
      (eb) => eb.fn.countAll<number>().as('attached'),
      (eb) => eb.fn.sum<number>(eb.case().when('missing_required', '>', 0).then(1).else(0).end()).as('incomplete'),
    ])
    .groupBy('use_case_id')
  const row = await db
    .selectFrom(perUseCase.as('p'))
    .select([
      (eb) => eb.fn.countAll<number>().as('use_cases'),
      (eb) => eb.fn.coalesce(eb.fn.sum<number>('p.attached'), sql<number>`0`).as('attached'),
      (eb) => eb.fn.coalesce(eb.fn.sum<number>('p.incomplete'), sql<number>`0`).as('incomplete'),
      (eb) =>
        eb.fn
          .coalesce(eb.fn.sum<number>(eb.case().when('p.incomplete', '>', 0).then(1).else(0).end()), sql<number>`0`)
          .as('incomplete_use_cases'),
    ])
    .executeTakeFirstOrThrow()
  return {
    attached: Number(row.attached),
    incomplete: Number(row.incomplete),
    useCases: Number(row.use_cases),
    incompleteUseCases: Number(row.incomplete_use_cases),
  }
}

/** Applicable controls whose version asks for evidence, with the requirements (JSON). */
export function controlsWithRequirements(db: Db, tenantId: string) {
  return db
    .selectFrom('use_case_controls as c')
    .innerJoin('policy_control_versions as v', 'v.id', 'c.control_version_id')
    .where('c.tenant_id', '=', tenantId)
    .where('c.status', '!=', 'not_applicable')
    .where('v.evidence_requirements', '!=', '[]')
    .select(['c.id as id', 'v.evidence_requirements as requirements'])
    .execute()
}

export function evidenceLinks(db: Db, tenantId: string) {
  return db
    .selectFrom('use_case_control_evidence')
    .where('tenant_id', '=', tenantId)
    .select(['use_case_control_id', 'requirement'])
    .execute()
}
