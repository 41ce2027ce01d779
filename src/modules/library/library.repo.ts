import type { Kysely } from 'kysely'
import type { RiskScenarioRow, RiskTypeRow, Tables } from '../../db/tables.js'

type Db = Kysely<Tables>

/** Risk types and scenarios belong to the catalog family; the starter library only looks them up by name and adds missing ones. */

export async function riskTypeIdsByNameKey(db: Db, tenantId: string, nameKeys: string[]): Promise<Map<string, string>> {
  if (nameKeys.length === 0) return new Map()
  const rows = await db
    .selectFrom('risk_types')
    .select(['id', 'name_key'])
    .where('tenant_id', '=', tenantId)
    .where('name_key', 'in', nameKeys)
    .execute()
  return new Map(rows.map((r) => [r.name_key, r.id]))
}

export async function insertRiskType(db: Db, row: RiskTypeRow): Promise<void> {
  await db.insertInto('risk_types').values(row).execute()
}

export async function riskScenarioNameKeys(db: Db, tenantId: string, nameKeys: string[]): Promise<Set<string>> {
  if (nameKeys.length === 0) return new Set()
  const rows = await db
    .selectFrom('risk_scenarios')
    .select('name_key')
    .where('tenant_id', '=', tenantId)
    .where('name_key', 'in', nameKeys)
    .execute()
  return new Set(rows.map((r) => r.name_key))
}

export async function insertRiskScenario(db: Db, row: RiskScenarioRow, riskTypeIds: string[]): Promise<void> {
  await db.insertInto('risk_scenarios').values(row).execute()
  if (riskTypeIds.length > 0) {
    await db
      .insertInto('risk_scenario_risk_types')
      .values(
        riskTypeIds.map((risk_type_id) => ({
          tenant_id: row.tenant_id,
          risk_scenario_id: row.id,
          risk_type_id,
          created_at: row.created_at,
        })),
      )
      .execute()
  }
}
