import type { Ctx } from '../../shared/context.js'
import type { Deps } from '../../shared/deps.js'
import type { Page } from '../../shared/pagination.js'
import type { AuditLog } from '../audit-logs/audit-logs.schemas.js'
import { toAuditLog } from '../audit-logs/audit-logs.service.js'
import { findEvidenceMany } from '../evidence/evidence.repo.js'
import { toEvidence } from '../evidence/evidence.service.js'
import { missingAnswers, missingEvidence } from '../process/process.js'
import type { QuestionnairesService } from '../questionnaires/questionnaires.service.js'
import type { RelationshipsService } from '../relationships/relationships.service.js'
import { allControls, controlEvidenceLinks } from '../use-case-policies/use-case-policies.repo.js'
import { controlsWithEvidence, type UseCasePoliciesService } from '../use-case-policies/use-case-policies.service.js'
import type { UseCasesService } from '../use-cases/use-cases.service.js'
import type { UseCaseWorkflowService } from '../workflow-stages/use-case-workflow.service.js'
import type { Dossier } from './dossier.schemas.js'

export type DossierService = ReturnType<typeof createDossierService>

const HISTORY_ACTIONS = ['use_case.created', 'use_case.workflow_moved', 'use_case.workflow_advanced', 'use_case.workflow_rejected']
const HISTORY_LIMIT = 1000

interface Sources {
  useCases: UseCasesService
  relationships: RelationshipsService
  useCasePolicies: UseCasePoliciesService
  questionnaires: QuestionnairesService
  useCaseWorkflow: UseCaseWorkflowService
}

/** Everything an auditor asks about one use case, gathered from the services that own each part. */
export function createDossierService(deps: Pick<Deps, 'database'>, sources: Sources) {
  const { db } = deps.database

  return {
    async get(ctx: Ctx, id: string): Promise<Dossier> {
      // First: a missing or other-tenant use case is a 404 before anything else is read.
      const useCase = await sources.useCases.get(ctx, id)
      const [workflow, history, models, vendors, scenarios, packs, controls, questionnaires, missing] = await Promise.all([
        sources.useCaseWorkflow.get(ctx, id),
        db.selectFrom('audit_logs').selectAll().where('tenant_id', '=', ctx.tenantId).where('use_case_id', '=', id).where('resource_id', '=', id)
          .where('action', 'in', HISTORY_ACTIONS).orderBy('seq').limit(HISTORY_LIMIT).execute(),
        allPages((after) => sources.relationships.listUseCaseModels(ctx, id, { page_limit: 100, page_after: after })),
        allPages((after) => sources.relationships.listUseCaseVendors(ctx, id, { page_limit: 100, page_after: after })),
        allPages((after) => sources.relationships.listUseCaseRiskScenarios(ctx, id, { page_limit: 100, page_after: after })),
        allPages((after) => sources.useCasePolicies.listPacks(ctx, id, { page_limit: 100, page_after: after })),
        controlsOf(ctx, id),
        sources.questionnaires.listAnswered(ctx, 'use_case', id),
        Promise.all([missingAnswers(db, ctx.tenantId, id), missingEvidence(db, ctx.tenantId, id)]),
      ])
      const evidenceIds = new Set([
        ...controls.flatMap((c) => c.evidence.map((e) => e.evidence.id)),
        ...questionnaires.flatMap((q) => q.answers.flatMap((a) => a.evidence_ids)),
      ])
      const evidence = (await findEvidenceMany(db, ctx.tenantId, [...evidenceIds])).map(toEvidence).sort((a, b) => a.id.localeCompare(b.id))
      const workflowHistory = history.map(toAuditLog)
      return {
        generated_at: new Date().toISOString(),
        use_case: useCase, workflow, workflow_history: workflowHistory, workflow_stage_names: await stageNames(ctx, workflowHistory), models, vendors, risk_scenarios: scenarios, policy_packs: packs,
        controls, questionnaires, evidence, gaps: { missing_answers: missing[0], missing_evidence: missing[1] },
      }
    },
  }

  async function stageNames(ctx: Ctx, history: AuditLog[]): Promise<Record<string, string>> {
    const ids = new Set(history.flatMap((h) => [h.sub_object_type === 'workflow_stage' ? h.sub_object_id : null, ...(h.changes?.workflow_stage_id ?? [])]))
    const stageIds = [...ids].filter((id): id is string => typeof id === 'string')
    if (stageIds.length === 0) return {}
    const rows = await db.selectFrom('workflow_stages').select(['id', 'name']).where('tenant_id', '=', ctx.tenantId).where('id', 'in', stageIds).execute()
    return Object.fromEntries(rows.map((r) => [r.id, r.name]))
  }

  async function controlsOf(ctx: Ctx, useCaseId: string): Promise<Dossier['controls']> {
    const rows = (await allControls(db, ctx.tenantId, useCaseId)).sort((a, b) => a.control_key.localeCompare(b.control_key))
    const [controls, links] = await Promise.all([controlsWithEvidence(db, ctx.tenantId, rows), controlEvidenceLinks(db, ctx.tenantId, rows.map((r) => r.id))])
    const evidence = new Map((await findEvidenceMany(db, ctx.tenantId, [...new Set(links.map((l) => l.evidence_id))])).map((e) => [e.id, toEvidence(e)]))
    return controls.map((c) => ({
      ...c,
      evidence: links.filter((l) => l.use_case_control_id === c.id).map((l) => ({ requirement: l.requirement, linked_at: l.created_at, evidence: evidence.get(l.evidence_id)! })),
    }))
  }
}

async function allPages<T>(page: (after: string | undefined) => Promise<Page<T>>): Promise<T[]> {
  const items: T[] = []
  let after: string | undefined
  do {
    const next = await page(after)
    items.push(...next.items)
    after = next.pagination.next_cursor ?? undefined
  } while (after !== undefined)
  return items
}
