import { AppError } from '../../http/errors.js'
import { type Ctx, systemCtx } from '../../shared/context.js'
import type { Deps } from '../../shared/deps.js'
import { newId, now } from '../../shared/ids.js'
import { type AuditEntry, runMutation, type Tx } from '../../shared/mutation.js'
import { nameKey } from '../../shared/search.js'
import { findBaseByKey } from '../policy-controls/policy-controls.service.js'
import { newBase, newVersion, publish } from '../policy-controls/policy-controls.service.js'
import { findPackByKey } from '../policy-packs/policy-packs.service.js'
import { publishPackVersion } from '../policy-packs/policy-packs.service.js'
import { findQuestionnaireByKey } from '../questionnaires/questionnaires.service.js'
import { publishQuestionnaireVersion } from '../questionnaires/questionnaires.service.js'
import * as repo from './library.repo.js'
import { CONTROLS, PACKS, QUESTIONNAIRES, RISK_SCENARIOS, RISK_TYPES } from './starter-library.js'

export interface LoadResult {
  audit: AuditEntry[]
  /** Packs left out because a control they need exists in the tenant without a published version. */
  skipped: string[]
}

/**
 * Adds whatever part of the starter library the tenant lacks, matching risk types and scenarios by name and
 * controls, packs and questionnaires by key; what exists is left alone, so loading twice changes nothing.
 * Returns one audit entry per record written, for the caller's transaction.
 */
export async function loadStarterLibrary(tx: Tx, ctx: Ctx): Promise<LoadResult> {
  const audit: AuditEntry[] = []
  const skipped: string[] = []
  const at = now()
  const tenantId = ctx.tenantId

  const riskTypeIds = await repo.riskTypeIdsByNameKey(
    tx,
    tenantId,
    RISK_TYPES.map((r) => nameKey(r.name)),
  )
  for (const riskType of RISK_TYPES) {
    if (riskTypeIds.has(nameKey(riskType.name))) continue
    const row = {
      id: newId('rt'),
      tenant_id: tenantId,
      name: riskType.name,
      name_key: nameKey(riskType.name),
      description: riskType.description,
      custom: 0,
      hidden: 0,
      created_at: at,
      updated_at: at,
    }
    await repo.insertRiskType(tx, row)
    riskTypeIds.set(row.name_key, row.id)
    audit.push({
      action: 'risk_type.created',
      resourceType: 'risk_type',
      resourceId: row.id,
      resourceName: row.name,
      changes: { name: [null, row.name], custom: [null, false] },
      metadata: { starter_library: true },
    })
  }
  const idsOf = (names: string[]) =>
    names.map((name) => riskTypeIds.get(nameKey(name))).filter((id): id is string => id !== undefined)

  const scenarios = await repo.riskScenarioNameKeys(
    tx,
    tenantId,
    RISK_SCENARIOS.map((s) => nameKey(s.name)),
  )
  for (const scenario of RISK_SCENARIOS) {
    if (scenarios.has(nameKey(scenario.name))) continue
    const row = {
      id: newId('rs'),
      tenant_id: tenantId,
      name: scenario.name,
      name_key: nameKey(scenario.name),
      description: scenario.description,
      domains: JSON.stringify(scenario.domains),
      industries: JSON.stringify(scenario.industries),
      regions: '[]',
      archived: 0,
      created_at: at,
      updated_at: at,
    }
    const typeIds = idsOf(scenario.risk_types)
    await repo.insertRiskScenario(tx, row, typeIds)
    audit.push({
      action: 'risk_scenario.created',
      resourceType: 'risk_scenario',
      resourceId: row.id,
      resourceName: row.name,
      changes: { name: [null, row.name], risk_type_ids: [[], typeIds] },
      metadata: { starter_library: true },
    })
  }

  for (const control of CONTROLS) {
    if (await findBaseByKey(tx, tenantId, control.key)) continue
    const base = await newBase(tx, ctx, control.key, control.name)
    const draft = await newVersion(tx, ctx, base.row, {
      name: control.name,
      description: control.description,
      evidence_requirements: control.evidence_requirements,
      risk_type_ids: idsOf(control.risk_types),
    })
    const published = await publish(tx, ctx, draft.row)
    audit.push(base.audit, draft.audit, published.audit)
  }

  for (const pack of PACKS) {
    if (await findPackByKey(tx, tenantId, pack.key)) continue
    try {
      audit.push((await publishPackVersion(tx, ctx, pack)).audit)
    } catch (err) {
      // Checked before anything is written, so the transaction stays usable.
      if (err instanceof AppError && err.code === 'validation_failed') skipped.push(`${pack.key}: ${err.detail}`)
      else throw err
    }
  }

  for (const questionnaire of QUESTIONNAIRES) {
    if (await findQuestionnaireByKey(tx, tenantId, questionnaire.key)) continue
    audit.push((await publishQuestionnaireVersion(tx, ctx, questionnaire)).audit)
  }
  return { audit, skipped }
}

export function createLibraryService(deps: Pick<Deps, 'database'>) {
  return {
    /** Loads the starter library into one tenant in one transaction; returns how many audit records (one per write) it made. */
    async load(tenantId: string, source: Ctx['source'] = 'cli'): Promise<{ records: number; skipped: string[] }> {
      return runMutation(deps.database, systemCtx(tenantId, source), async (tx) => {
        const { audit, skipped } = await loadStarterLibrary(tx, systemCtx(tenantId, source))
        return { result: { records: audit.length, skipped }, audit }
      })
    },
  }
}
