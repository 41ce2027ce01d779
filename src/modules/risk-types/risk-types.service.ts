import type { RiskTypeRow } from '../../db/tables.js'
import { type CatalogSpec, createCatalogService, NAMED } from '../../shared/catalog.js'
import type { Deps } from '../../shared/deps.js'
import { removeAssociations } from '../../shared/links.repo.js'
import { fromFlag, nameColumns, presentFields, toFlag } from '../../shared/records.js'
import type { RiskType, RiskTypeCreate, RiskTypeListQuery, RiskTypeUpdate } from './risk-types.schemas.js'

export type RiskTypesService = ReturnType<typeof createRiskTypesService>

const DEFAULTS = { custom: true, hidden: false }

export const riskTypeCatalog: CatalogSpec<RiskTypeRow, RiskType, RiskTypeCreate, RiskTypeUpdate, RiskTypeListQuery> = {
  table: 'risk_types',
  label: 'risk type',
  resourceType: 'risk_type',
  idPrefix: 'rt',
  ...NAMED,
  audited: ['name', 'description', 'custom', 'hidden'],
  create: (input) => ({
    ...nameColumns(input.name),
    description: input.description ?? null,
    custom: toFlag(input.custom ?? DEFAULTS.custom),
    hidden: toFlag(input.hidden ?? DEFAULTS.hidden),
  }),
  update: (input) => {
    const flags = presentFields(input, ['custom', 'hidden'], DEFAULTS) as { custom?: boolean; hidden?: boolean }
    return {
      ...presentFields(input, ['description']),
      ...(input.name !== undefined && nameColumns(input.name)),
      ...(flags.custom !== undefined && { custom: toFlag(flags.custom) }),
      ...(flags.hidden !== undefined && { hidden: toFlag(flags.hidden) }),
    }
  },
  /** Scenarios that reference the type lose the reference (a plain association, audited per scenario). */
  beforeDelete: (tx, ctx, row, dialect) => removeAssociations(tx, dialect, ctx.tenantId, 'risk_type', row),
  toItem: (row) => ({
    id: row.id,
    name: row.name,
    description: row.description,
    custom: fromFlag(row.custom),
    hidden: fromFlag(row.hidden),
    created_at: row.created_at,
    updated_at: row.updated_at,
  }),
}

export function createRiskTypesService(deps: Pick<Deps, 'database'>) {
  return createCatalogService(deps.database, riskTypeCatalog)
}
