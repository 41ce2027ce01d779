import type { Kysely } from 'kysely'
import type { RiskScenarioRow, Tables } from '../../db/tables.js'
import { applyKeyset, type Keyset, pageTextOf, withinTextBudget } from '../../shared/pagination.js'
import { containsText } from '../../shared/search.js'
import type { RiskScenarioListQuery } from './risk-scenarios.schemas.js'
import { forChange } from '../../shared/mutation.js'

type Db = Kysely<Tables>

export const RISK_SCENARIO_SORT_COLUMNS = { name: 'name_key', created_at: 'created_at', updated_at: 'updated_at' }

export function findRiskScenario(db: Db, tenantId: string, id: string): Promise<RiskScenarioRow | undefined> {
  return forChange(
    db,
    db.selectFrom('risk_scenarios').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id),
  ).executeTakeFirst()
}

export function listRiskScenarios(
  db: Db,
  tenantId: string,
  query: RiskScenarioListQuery,
  ks: Keyset,
): Promise<RiskScenarioRow[]> {
  let q = db.selectFrom('risk_scenarios').selectAll().where('tenant_id', '=', tenantId)
  if (query.q !== undefined) q = q.where(containsText('name_key', query.q))
  if (query.archived !== undefined) q = q.where('archived', '=', query.archived ? 1 : 0)
  if (query.risk_type_id !== undefined) {
    const riskTypeId = query.risk_type_id
    q = q.where(({ exists, selectFrom }) =>
      exists(
        selectFrom('risk_scenario_risk_types as l')
          .select('l.risk_scenario_id')
          .where('l.tenant_id', '=', tenantId)
          .where('l.risk_type_id', '=', riskTypeId)
          .whereRef('l.risk_scenario_id', '=', 'risk_scenarios.id'),
      ),
    )
  }
  return withinTextBudget(db, applyKeyset(q, ks), ks, pageTextOf('risk_scenarios')).execute()
}

/** The risk type ids of each scenario, in id order. */
export async function riskTypeIdsOf(db: Db, tenantId: string, scenarioIds: string[]): Promise<Map<string, string[]>> {
  const byScenario = new Map<string, string[]>(scenarioIds.map((id) => [id, []]))
  if (scenarioIds.length === 0) return byScenario
  const rows = await db
    .selectFrom('risk_scenario_risk_types')
    .select(['risk_scenario_id', 'risk_type_id'])
    .where('tenant_id', '=', tenantId)
    .where('risk_scenario_id', 'in', scenarioIds)
    .execute()
  for (const row of rows) byScenario.get(row.risk_scenario_id)?.push(row.risk_type_id)
  // Sorted here rather than in SQL so the order never depends on the database's collation.
  for (const ids of byScenario.values()) ids.sort()
  return byScenario
}

/** Which of `ids` are risk types of this tenant. */
export async function existingRiskTypeIds(db: Db, tenantId: string, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set()
  const rows = await db
    .selectFrom('risk_types')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('id', 'in', ids)
    .execute()
  return new Set(rows.map((r) => r.id))
}

export async function replaceRiskTypes(
  db: Db,
  tenantId: string,
  scenarioId: string,
  riskTypeIds: string[],
  at: string,
): Promise<void> {
  await db
    .deleteFrom('risk_scenario_risk_types')
    .where('tenant_id', '=', tenantId)
    .where('risk_scenario_id', '=', scenarioId)
    .execute()
  if (riskTypeIds.length === 0) return
  await db
    .insertInto('risk_scenario_risk_types')
    .values(
      riskTypeIds.map((risk_type_id) => ({
        tenant_id: tenantId,
        risk_scenario_id: scenarioId,
        risk_type_id,
        created_at: at,
      })),
    )
    .execute()
}

export async function insertRiskScenario(db: Db, row: RiskScenarioRow): Promise<void> {
  await db.insertInto('risk_scenarios').values(row).execute()
}

export async function updateRiskScenario(
  db: Db,
  tenantId: string,
  id: string,
  changes: Partial<RiskScenarioRow>,
): Promise<void> {
  await db.updateTable('risk_scenarios').set(changes).where('tenant_id', '=', tenantId).where('id', '=', id).execute()
}

export async function deleteRiskScenario(db: Db, tenantId: string, id: string): Promise<void> {
  await db.deleteFrom('risk_scenarios').where('tenant_id', '=', tenantId).where('id', '=', id).execute()
}
