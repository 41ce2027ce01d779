import { AppError } from '../../http/errors.js'
import type { Ctx } from '../../shared/context.js'
import type { Deps } from '../../shared/deps.js'
import { applyKeyset, keyset, type Page, toPage } from '../../shared/pagination.js'
import type { AuditLog } from '../audit-logs/audit-logs.schemas.js'
import { toAuditLog } from '../audit-logs/audit-logs.service.js'
import type { Evidence } from '../evidence/evidence.schemas.js'
import { findEvidenceMany } from '../evidence/evidence.service.js'
import { toEvidence } from '../evidence/evidence.service.js'
import type { Model } from '../models/models.schemas.js'
import { missingAnswers, missingEvidence } from '../process/process.js'
import type { QuestionnairesService } from '../questionnaires/questionnaires.service.js'
import type { UseCaseRiskScenario } from '../relationships/relationships.schemas.js'
import type { RelationshipsService } from '../relationships/relationships.service.js'
import type { AppliedPolicyPack } from '../use-case-policies/use-case-policies.schemas.js'
import { controlEvidenceLinks } from '../use-case-policies/use-case-policies.service.js'
import { controlsWithEvidence, type UseCasePoliciesService } from '../use-case-policies/use-case-policies.service.js'
import type { UseCasesService } from '../use-cases/use-cases.service.js'
import type { Vendor } from '../vendors/vendors.schemas.js'
import type { UseCaseWorkflowService } from '../workflow-stages/use-case-workflow.service.js'
import type { Dossier, DossierControl } from './dossier.schemas.js'

export type DossierService = ReturnType<typeof createDossierService>

const HISTORY_ACTIONS = [
  'use_case.created',
  'use_case.workflow_moved',
  'use_case.workflow_advanced',
  'use_case.workflow_rejected',
]
const HISTORY_LIMIT = 1000
/**
 * Records read and written at a time while a dossier streams: a use case may link thousands of records of up to
 * 100 000 characters each, so one page of them is all a dossier holds in memory, whatever the use case has.
 */
export const DOSSIER_PAGE = 10
const EVIDENCE_PAGE = 100
/** The most a dossier given whole (an MCP tool result, held in memory and sent as one message) may be, in JSON characters. */
export const WHOLE_DOSSIER_CHARS = 8_000_000

interface Sources {
  useCases: UseCasesService
  relationships: RelationshipsService
  useCasePolicies: UseCasePoliciesService
  questionnaires: QuestionnairesService
  useCaseWorkflow: UseCaseWorkflowService
}

/** The dossier's parts in the order it is written: the small ones read, the lists as pages read when written. */
export interface DossierParts {
  head: Pick<Dossier, 'generated_at' | 'use_case' | 'workflow' | 'workflow_history' | 'workflow_stage_names'>
  models: () => AsyncGenerator<Model[]>
  vendors: () => AsyncGenerator<Vendor[]>
  risk_scenarios: () => AsyncGenerator<UseCaseRiskScenario[]>
  policy_packs: () => AsyncGenerator<AppliedPolicyPack[]>
  controls: () => AsyncGenerator<DossierControl[]>
  questionnaires: Dossier['questionnaires']
  /** The evidence of the questionnaires' answers, by id (what their rendering names). */
  answerEvidence: Map<string, Evidence>
  /** Every piece of evidence used, by id: complete once `controls` has been read to its end. */
  evidence: () => AsyncGenerator<Evidence[]>
  gaps: Dossier['gaps']
}

/** Everything an auditor asks about one use case, gathered from the services that own each part. */
export function createDossierService(deps: Pick<Deps, 'database'>, sources: Sources) {
  const { db } = deps.database

  async function open(ctx: Ctx, id: string): Promise<DossierParts> {
    // First: a missing or other-tenant use case is a 404 before anything else is read.
    const useCase = await sources.useCases.get(ctx, id)
    const [workflow, history, questionnaires, missing] = await Promise.all([
      sources.useCaseWorkflow.get(ctx, id),
      db
        .selectFrom('audit_logs')
        .selectAll()
        .where('tenant_id', '=', ctx.tenantId)
        .where('use_case_id', '=', id)
        .where('resource_id', '=', id)
        .where('action', 'in', HISTORY_ACTIONS)
        .orderBy('seq')
        .limit(HISTORY_LIMIT)
        .execute(),
      sources.questionnaires.listAnswered(ctx, 'use_case', id),
      Promise.all([missingAnswers(db, ctx.tenantId, id), missingEvidence(db, ctx.tenantId, id)]),
    ])
    const workflowHistory = history.map(toAuditLog)
    const answerIds = [...new Set(questionnaires.flatMap((q) => q.answers.flatMap((a) => a.evidence_ids)))]
    const answerEvidence = new Map<string, Evidence>()
    for (let i = 0; i < answerIds.length; i += EVIDENCE_PAGE) {
      for (const row of await findEvidenceMany(db, ctx.tenantId, answerIds.slice(i, i + EVIDENCE_PAGE)))
        answerEvidence.set(row.id, toEvidence(row))
    }
    // Ids only (a few dozen bytes each): the evidence records are read again, a page at a time, for the index.
    const evidenceIds = new Set(answerIds)
    const pageOf =
      <T>(list: (query: { page_limit: number; page_after?: string }) => Promise<Page<T>>) =>
      () =>
        pages((after) => list({ page_limit: DOSSIER_PAGE, page_after: after }))
    return {
      head: {
        generated_at: new Date().toISOString(),
        use_case: useCase,
        workflow,
        workflow_history: workflowHistory,
        workflow_stage_names: await stageNames(ctx, workflowHistory),
      },
      models: pageOf((q) => sources.relationships.listUseCaseModels(ctx, id, q)),
      vendors: pageOf((q) => sources.relationships.listUseCaseVendors(ctx, id, q)),
      risk_scenarios: pageOf((q) => sources.relationships.listUseCaseRiskScenarios(ctx, id, q)),
      policy_packs: pageOf((q) => sources.useCasePolicies.listPacks(ctx, id, q)),
      controls: () => controlsOf(ctx, id, evidenceIds),
      questionnaires,
      answerEvidence,
      evidence: () => evidenceOf(ctx, evidenceIds),
      gaps: { missing_answers: missing[0], missing_evidence: missing[1] },
    }
  }

  async function stageNames(ctx: Ctx, history: AuditLog[]): Promise<Record<string, string>> {
    const ids = new Set(
      history.flatMap((h) => [
        h.sub_object_type === 'workflow_stage' ? h.sub_object_id : null,
        ...(h.changes?.workflow_stage_id ?? []),
      ]),
    )
    const stageIds = [...ids].filter((id): id is string => typeof id === 'string')
    if (stageIds.length === 0) return {}
    const rows = await db
      .selectFrom('workflow_stages')
      .select(['id', 'name'])
      .where('tenant_id', '=', ctx.tenantId)
      .where('id', 'in', stageIds)
      .execute()
    return Object.fromEntries(rows.map((r) => [r.id, r.name]))
  }

  /** The use case's controls by key, a page at a time, each with its evidence; notes the evidence they use. */
  async function* controlsOf(ctx: Ctx, useCaseId: string, evidenceIds: Set<string>): AsyncGenerator<DossierControl[]> {
    let after: string | undefined
    do {
      const ks = keyset(
        { sort: 'control_key', page_limit: DOSSIER_PAGE, page_after: after },
        { control_key: 'control_key' },
      )
      const page = toPage(
        await applyKeyset(
          db
            .selectFrom('use_case_controls')
            .selectAll()
            .where('tenant_id', '=', ctx.tenantId)
            .where('use_case_id', '=', useCaseId),
          ks,
        ).execute(),
        ks,
        (row) => row,
      )
      const pageRows = page.items
      after = page.pagination.next_cursor ?? undefined
      const [controls, links] = await Promise.all([
        controlsWithEvidence(db, ctx.tenantId, pageRows),
        controlEvidenceLinks(
          db,
          ctx.tenantId,
          pageRows.map((r) => r.id),
        ),
      ])
      const evidence = new Map(
        (await findEvidenceMany(db, ctx.tenantId, [...new Set(links.map((l) => l.evidence_id))])).map((e) => [
          e.id,
          toEvidence(e),
        ]),
      )
      for (const l of links) evidenceIds.add(l.evidence_id)
      yield controls.map((c) => ({
        ...c,
        evidence: links
          .filter((l) => l.use_case_control_id === c.id)
          .map((l) => ({
            requirement: l.requirement,
            linked_at: l.created_at,
            evidence: evidence.get(l.evidence_id)!,
          })),
      }))
    } while (after !== undefined)
  }

  async function* evidenceOf(ctx: Ctx, ids: Set<string>): AsyncGenerator<Evidence[]> {
    const sorted = [...ids].sort()
    for (let i = 0; i < sorted.length; i += EVIDENCE_PAGE) {
      yield (await findEvidenceMany(db, ctx.tenantId, sorted.slice(i, i + EVIDENCE_PAGE)))
        .map(toEvidence)
        .sort((a, b) => (a.id < b.id ? -1 : 1))
    }
  }

  return {
    open,
    /**
     * The whole dossier as one value, for callers that need it whole (MCP); HTTP streams it from `open`. Past
     * WHOLE_DOSSIER_CHARS it is refused (422 response_too_large) rather than built: the detail names the stream.
     */
    async get(ctx: Ctx, id: string): Promise<Dossier> {
      const parts = await open(ctx, id)
      let size =
        JSON.stringify(parts.head).length +
        JSON.stringify(parts.questionnaires).length +
        JSON.stringify(parts.gaps).length
      const all = async <T>(list: () => AsyncGenerator<T[]>) => {
        const items: T[] = []
        for await (const page of list()) {
          size += JSON.stringify(page).length
          if (size > WHOLE_DOSSIER_CHARS) {
            throw new AppError(
              'response_too_large',
              `the dossier of ${id} is larger than ${WHOLE_DOSSIER_CHARS / 1_000_000} MB, more than one answer holds here: GET /api/v1/integration/use_cases/${id}/dossier streams it whole, and its lists (…/models, …/vendors, …/controls) page through it`,
            )
          }
          items.push(...page)
        }
        return items
      }
      const [models, vendors, riskScenarios, packs, controls] = [
        await all(parts.models),
        await all(parts.vendors),
        await all(parts.risk_scenarios),
        await all(parts.policy_packs),
        await all(parts.controls),
      ]
      return {
        ...parts.head,
        models,
        vendors,
        risk_scenarios: riskScenarios,
        policy_packs: packs,
        controls,
        questionnaires: parts.questionnaires,
        evidence: await all(parts.evidence),
        gaps: parts.gaps,
      }
    },
  }
}

async function* pages<T>(page: (after: string | undefined) => Promise<Page<T>>): AsyncGenerator<T[]> {
  let after: string | undefined
  do {
    const next = await page(after)
    yield next.items
    after = next.pagination.next_cursor ?? undefined
  } while (after !== undefined)
}
