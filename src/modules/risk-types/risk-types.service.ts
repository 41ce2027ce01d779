import type { RiskTypeRow } from '../../db/tables.js'
import { notFound } from '../../http/errors.js'
import type { Ctx } from '../../shared/context.js'
import type { Deps } from '../../shared/deps.js'
import { newId, now } from '../../shared/ids.js'
import { removeAssociations } from '../../shared/links.repo.js'
import { auditedUpdate, diff, runMutation } from '../../shared/mutation.js'
import { keyset, type Page, toPage } from '../../shared/pagination.js'
import { fromFlag, nameColumns, presentFields, toFlag, uniqueName } from '../../shared/records.js'
import * as repo from './risk-types.repo.js'
import type { RiskType, RiskTypeCreate, RiskTypeListQuery, RiskTypeUpdate } from './risk-types.schemas.js'

export type RiskTypesService = ReturnType<typeof createRiskTypesService>

const AUDITED_FIELDS = ['name', 'description', 'custom', 'hidden'] as const
const DEFAULTS = { custom: true, hidden: false }

export function createRiskTypesService(deps: Pick<Deps, 'database'>) {
  const { database } = deps
  const { db } = database

  return {
    async list(ctx: Ctx, query: RiskTypeListQuery): Promise<Page<RiskType>> {
      const ks = keyset(query, repo.RISK_TYPE_SORT_COLUMNS)
      return toPage(await repo.listRiskTypes(db, ctx.tenantId, query, ks), ks, toRiskType)
    },

    async get(ctx: Ctx, id: string): Promise<RiskType> {
      const row = await repo.findRiskType(db, ctx.tenantId, id)
      if (!row) throw notFound('risk type', id)
      return toRiskType(row)
    },

    async create(ctx: Ctx, input: RiskTypeCreate): Promise<RiskType> {
      const at = now()
      const row: RiskTypeRow = {
        id: newId('rt'),
        tenant_id: ctx.tenantId,
        ...nameColumns(input.name),
        description: input.description ?? null,
        custom: toFlag(input.custom ?? DEFAULTS.custom),
        hidden: toFlag(input.hidden ?? DEFAULTS.hidden),
        created_at: at,
        updated_at: at,
      }
      return uniqueName(db, ctx, { table: 'risk_types', what: 'risk type' }, input.name, () =>
        runMutation(database, ctx, async (tx) => {
          await repo.insertRiskType(tx, row)
          const created = toRiskType(row)
          return {
            result: created,
            audit: { action: 'risk_type.created', resourceType: 'risk_type', resourceId: row.id, resourceName: row.name, changes: diff(blankRiskType, created, AUDITED_FIELDS) },
          }
        }),
      )
    },

    async update(ctx: Ctx, id: string, input: RiskTypeUpdate): Promise<RiskType> {
      return uniqueName(db, ctx, { table: 'risk_types', what: 'risk type' }, input.name, () =>
        runMutation(database, ctx, async (tx) => {
          const current = await repo.findRiskType(tx, ctx.tenantId, id)
          if (!current) throw notFound('risk type', id)
          const flags = presentFields(input, ['custom', 'hidden'], DEFAULTS) as { custom?: boolean; hidden?: boolean }
          const changes: Partial<RiskTypeRow> = {
            ...presentFields(input, ['description']),
            ...(input.name !== undefined && nameColumns(input.name)),
            ...(flags.custom !== undefined && { custom: toFlag(flags.custom) }),
            ...(flags.hidden !== undefined && { hidden: toFlag(flags.hidden) }),
          }
          const before = toRiskType(current)
          const after = toRiskType({ ...current, ...changes })
          return auditedUpdate(
            { before, after, fields: AUDITED_FIELDS, audit: { action: 'risk_type.updated', resourceType: 'risk_type', resourceId: id, resourceName: after.name } },
            async (updatedAt) => {
              await repo.updateRiskType(tx, ctx.tenantId, id, { ...changes, updated_at: updatedAt })
            },
          )
        }),
      )
    },

    /** Scenarios that reference the type lose the reference (a plain association, audited per scenario). */
    async delete(ctx: Ctx, id: string): Promise<void> {
      await runMutation(database, ctx, async (tx) => {
        const current = await repo.findRiskType(tx, ctx.tenantId, id)
        if (!current) throw notFound('risk type', id)
        const unlinked = await removeAssociations(tx, database.dialect, ctx.tenantId, 'risk_type', current)
        await repo.deleteRiskType(tx, ctx.tenantId, id)
        return {
          result: undefined,
          audit: [...unlinked, { action: 'risk_type.deleted', resourceType: 'risk_type', resourceId: id, resourceName: current.name }],
        }
      })
    },
  }
}

export function toRiskType(row: RiskTypeRow): RiskType {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    custom: fromFlag(row.custom),
    hidden: fromFlag(row.hidden),
    created_at: row.created_at,
    updated_at: row.updated_at,
  }
}

const blankRiskType: RiskType = { id: '', name: null as unknown as string, description: null, custom: null as unknown as boolean, hidden: null as unknown as boolean, created_at: '', updated_at: '' }
