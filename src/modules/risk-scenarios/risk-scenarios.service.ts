import { isForeignKeyViolation } from '../../db/create-db.js'
import type { RiskScenarioRow } from '../../db/tables.js'
import { AppError, notFound } from '../../http/errors.js'
import type { Columns } from '../../shared/catalog.js'
import type { Ctx } from '../../shared/context.js'
import type { Deps } from '../../shared/deps.js'
import { newId, now } from '../../shared/ids.js'
import { removeAssociations } from '../../shared/links.repo.js'
import { auditedUpdate, createdChanges, runMutation, type Tx } from '../../shared/mutation.js'
import { keyset, type Page, toPage } from '../../shared/pagination.js'
import { uniqueName } from '../../shared/records.js'
import { beside, derive, flag, ID, list, name, plain, TIME } from '../../shared/fields.js'
import * as repo from './risk-scenarios.repo.js'
import type {
  RiskScenario,
  RiskScenarioCreate,
  RiskScenarioListQuery,
  RiskScenarioUpdate,
} from './risk-scenarios.schemas.js'
// What other families read of this one's records, inside their own transactions: through here, not the repository.
export { findRiskScenario, riskTypeIdsOf } from './risk-scenarios.repo.js'

export type RiskScenariosService = ReturnType<typeof createRiskScenariosService>

/** Each field of a risk scenario, once (see shared/fields.ts). */
const fields = derive<RiskScenarioRow, RiskScenario, RiskScenarioCreate, RiskScenarioUpdate>({
  id: ID,
  name,
  description: plain(),
  // In the link table (risk_scenario_risk_types): create and update below check and write it.
  risk_type_ids: beside(),
  domains: list(),
  industries: list(),
  regions: list(),
  archived: flag({ default: false }),
  created_at: TIME,
  updated_at: TIME,
})

const missingRiskTypes = (ids: string[]) => {
  const message = `risk type${ids.length > 1 ? 's' : ''} ${ids.join(', ')} not found in this tenant`
  return new AppError('validation_failed', `risk_type_ids: ${message}`, [{ field: 'risk_type_ids', message }])
}

/** The deduplicated, id-ordered risk type ids, each checked to exist in the tenant (422 naming the missing ones). */
async function checkedRiskTypeIds(tx: Tx, tenantId: string, ids: readonly string[]): Promise<string[]> {
  const unique = [...new Set(ids)].sort()
  const found = await repo.existingRiskTypeIds(tx, tenantId, unique)
  const missing = unique.filter((id) => !found.has(id))
  if (missing.length > 0) throw missingRiskTypes(missing)
  return unique
}

/** Duplicate names are 422 already_exists; a risk type deleted while the scenario was written is 422 like any missing one. */
async function guardedWrite<T>(db: Tx, ctx: Ctx, name: string | undefined, work: () => Promise<T>): Promise<T> {
  return uniqueName(db, ctx, { table: 'risk_scenarios', what: 'risk scenario' }, name, async () => {
    try {
      return await work()
    } catch (err) {
      throw isForeignKeyViolation(err)
        ? new AppError('validation_failed', 'risk_type_ids: a risk type was deleted meanwhile', [
            { field: 'risk_type_ids', message: 'a risk type was deleted meanwhile' },
          ])
        : err
    }
  })
}

export function createRiskScenariosService(deps: Pick<Deps, 'database'>) {
  const { database } = deps
  const { db } = database

  return {
    async list(ctx: Ctx, query: RiskScenarioListQuery): Promise<Page<RiskScenario>> {
      const ks = keyset(query, repo.RISK_SCENARIO_SORT_COLUMNS)
      const rows = await repo.listRiskScenarios(db, ctx.tenantId, query, ks)
      const typeIds = await repo.riskTypeIdsOf(
        db,
        ctx.tenantId,
        rows.map((r) => r.id),
      )
      return toPage(rows, ks, (row) => toRiskScenario(row, typeIds.get(row.id) ?? []))
    },

    async get(ctx: Ctx, id: string): Promise<RiskScenario> {
      const row = await repo.findRiskScenario(db, ctx.tenantId, id)
      if (!row) throw notFound('risk scenario', id)
      return toRiskScenario(row, (await repo.riskTypeIdsOf(db, ctx.tenantId, [id])).get(id) ?? [])
    },

    async create(ctx: Ctx, input: RiskScenarioCreate): Promise<RiskScenario> {
      const at = now()
      const row: RiskScenarioRow = {
        id: newId('rs'),
        tenant_id: ctx.tenantId,
        ...(fields.createColumns(input, ctx) as Columns<RiskScenarioRow>),
        created_at: at,
        updated_at: at,
      }
      return guardedWrite(db, ctx, input.name, () =>
        runMutation(database, ctx, async (tx) => {
          const riskTypeIds = await checkedRiskTypeIds(tx, ctx.tenantId, input.risk_type_ids ?? [])
          await repo.insertRiskScenario(tx, row)
          await repo.replaceRiskTypes(tx, ctx.tenantId, row.id, riskTypeIds, at)
          const created = toRiskScenario(row, riskTypeIds)
          return {
            result: created,
            audit: {
              action: 'risk_scenario.created',
              resourceType: 'risk_scenario',
              resourceId: row.id,
              resourceName: row.name,
              changes: createdChanges(created, fields.audited),
            },
          }
        }),
      )
    },

    async update(ctx: Ctx, id: string, input: RiskScenarioUpdate): Promise<RiskScenario> {
      return guardedWrite(db, ctx, input.name, () =>
        runMutation(
          database,
          ctx,
          async (tx) => {
            const current = await repo.findRiskScenario(tx, ctx.tenantId, id)
            if (!current) throw notFound('risk scenario', id)
            const currentTypeIds = (await repo.riskTypeIdsOf(tx, ctx.tenantId, [id])).get(id) ?? []
            const riskTypeIds =
              input.risk_type_ids === undefined
                ? currentTypeIds
                : await checkedRiskTypeIds(tx, ctx.tenantId, input.risk_type_ids ?? [])
            const changes: Partial<RiskScenarioRow> = fields.updateColumns(input, ctx)
            const before = toRiskScenario(current, currentTypeIds)
            const after = toRiskScenario({ ...current, ...changes }, riskTypeIds)
            return auditedUpdate(
              {
                before,
                after,
                fields: fields.audited,
                audit: {
                  action: 'risk_scenario.updated',
                  resourceType: 'risk_scenario',
                  resourceId: id,
                  resourceName: after.name,
                },
              },
              async (updatedAt, changed) => {
                await repo.updateRiskScenario(tx, ctx.tenantId, id, { ...changes, updated_at: updatedAt })
                if (changed.risk_type_ids) await repo.replaceRiskTypes(tx, ctx.tenantId, id, riskTypeIds, updatedAt)
              },
            )
          },
          [id],
        ),
      )
    },

    /** Removes its links to use cases and risk types too, one audit record per removed link. */
    async delete(ctx: Ctx, id: string): Promise<void> {
      await runMutation(
        database,
        ctx,
        async (tx) => {
          const current = await repo.findRiskScenario(tx, ctx.tenantId, id)
          if (!current) throw notFound('risk scenario', id)
          const unlinked = await removeAssociations(tx, database.dialect, ctx.tenantId, 'risk_scenario', current)
          await repo.deleteRiskScenario(tx, ctx.tenantId, id)
          return {
            result: undefined,
            audit: [
              ...unlinked,
              {
                action: 'risk_scenario.deleted',
                resourceType: 'risk_scenario',
                resourceId: id,
                resourceName: current.name,
              },
            ],
          }
        },
        [id],
      )
    },
  }
}

/** The scenario's item: its row's fields and the risk type ids its link table holds. */
export function toRiskScenario(row: RiskScenarioRow, riskTypeIds: string[]): RiskScenario {
  return { ...fields.toItem(row), risk_type_ids: riskTypeIds }
}
