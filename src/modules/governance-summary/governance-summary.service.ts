import type { Ctx } from '../../shared/context.js'
import type { Deps } from '../../shared/deps.js'
import { ownerNames, ownerOf } from '../../shared/governed.js'
import type { UseCase } from '../use-cases/use-cases.schemas.js'
import type { EvidenceRequirement } from '../policy-controls/policy-controls.schemas.js'
import * as repo from './governance-summary.repo.js'
import { utcDay } from '../../shared/today.js'
import type { GovernanceSummary, GovernanceSummaryQuery } from './governance-summary.schemas.js'

export type GovernanceSummaryService = ReturnType<typeof createGovernanceSummaryService>

const RISK_LEVELS = ['high', 'medium', 'low', 'none'] as const
const CONTROL_STATUSES = ['pending', 'in_progress', 'implemented', 'not_applicable'] as const

/** Tenant-wide counts for dashboards and assistants: risk levels, workflow positions, control status, overdue work. */
export function createGovernanceSummaryService(deps: Pick<Deps, 'database'>) {
  const { db } = deps.database

  return {
    async get(ctx: Ctx, query: GovernanceSummaryQuery = {}): Promise<GovernanceSummary> {
      const asOf = query.as_of ?? utcDay()
      const [risk, stages, controls, overdue, overdueUseCases, byAssignee, completion, required, links] =
        await Promise.all([
          repo.countUseCasesByRiskLevel(db, ctx.tenantId),
          repo.countUseCasesByStage(db, ctx.tenantId),
          repo.countControlsByStatus(db, ctx.tenantId),
          repo.countOverdue(db, ctx.tenantId, asOf),
          repo.listOverdueUseCases(db, ctx.tenantId, asOf, query.overdue_limit ?? 50),
          repo.countOpenControlsByAssignee(db, ctx.tenantId, asOf),
          repo.countQuestionnaireCompletion(db, ctx.tenantId),
          repo.controlsWithRequirements(db, ctx.tenantId),
          repo.evidenceLinks(db, ctx.tenantId),
        ])
      const assignees = byAssignee.map((row) => ({
        assignee: ownerOf(row.assignee_id, row.assignee_type),
        open: Number(row.open),
        overdue: Number(row.overdue),
      }))
      const names = await ownerNames(
        db,
        ctx.tenantId,
        assignees.flatMap((a) => (a.assignee ? [a.assignee] : [])),
      )
      const openByAssignee = assignees
        .map((a) => ({ ...a, assignee: a.assignee && { ...a.assignee, name: names.get(a.assignee.owner_id) ?? '' } }))
        .sort(
          (a, b) =>
            b.open - a.open ||
            Number(a.assignee === null) - Number(b.assignee === null) ||
            (a.assignee?.owner_id ?? '').localeCompare(b.assignee?.owner_id ?? ''),
        )

      const evidenced = new Set(links.map((l) => `${l.use_case_control_id} ${l.requirement}`))
      const missingEvidence = required.filter((c) =>
        (JSON.parse(c.requirements) as EvidenceRequirement[]).some(
          (r, i) => r.required && !evidenced.has(`${c.id} ${i}`),
        ),
      ).length

      const byRisk = { high: 0, medium: 0, low: 0, none: 0, unset: 0 }
      for (const row of risk) {
        const level = (RISK_LEVELS as readonly string[]).includes(row.risk_category_level ?? '')
          ? (row.risk_category_level as keyof typeof byRisk)
          : 'unset'
        byRisk[level] += Number(row.count)
      }

      const byStage = new Map<string | null, GovernanceSummary['use_cases']['by_workflow_stage'][number]>()
      for (const row of stages) {
        const entry = byStage.get(row.stage_id) ?? {
          stage_id: row.stage_id,
          stage_name: row.stage_name ?? null,
          position: row.position ?? null,
          total: 0,
          by_step: {},
        }
        entry.total += Number(row.count)
        const step = row.step ?? 'none'
        entry.by_step[step] = (entry.by_step[step] ?? 0) + Number(row.count)
        byStage.set(row.stage_id, entry)
      }

      const byStatus = { pending: 0, in_progress: 0, implemented: 0, not_applicable: 0 }
      for (const row of controls) {
        if ((CONTROL_STATUSES as readonly string[]).includes(row.status))
          byStatus[row.status as keyof typeof byStatus] += Number(row.count)
      }

      const useCasesTotal = Object.values(byRisk).reduce((a, b) => a + b, 0)
      return {
        as_of: asOf,
        use_cases: {
          total: useCasesTotal,
          by_risk_level: byRisk,
          by_workflow_stage: [...byStage.values()].sort((a, b) => (a.position ?? Infinity) - (b.position ?? Infinity)),
        },
        controls: {
          total: Object.values(byStatus).reduce((a, b) => a + b, 0),
          by_status: byStatus,
          overdue: overdue.controls,
          missing_evidence: missingEvidence,
          open_by_assignee: openByAssignee,
        },
        questionnaires: {
          attached: completion.attached,
          complete: completion.attached - completion.incomplete,
          incomplete: completion.incomplete,
          use_cases: {
            complete: completion.useCases - completion.incompleteUseCases,
            incomplete: completion.incompleteUseCases,
            // Counted apart from the total read beside it, so never below 0 while writes land in between.
            none: Math.max(0, useCasesTotal - completion.useCases),
          },
        },
        overdue_use_cases: overdueUseCases.map((row) => ({
          id: row.id,
          name: row.name,
          risk_category_level: row.risk_category_level as UseCase['risk_category_level'],
          overdue_controls: Number(row.overdue_controls),
          earliest_due_date: row.earliest_due_date,
        })),
        overdue_use_cases_total: overdue.useCases,
      }
    },
  }
}
