import type { RiskTypeRow } from '../../db/tables.js'
import { type CatalogSpec, createCatalogService, NAMED } from '../../shared/catalog.js'
import type { Deps } from '../../shared/deps.js'
import { removeAssociations } from '../../shared/links.repo.js'
import { derive, flag, ID, name, plain, TIME } from '../../shared/fields.js'
import type { RiskType, RiskTypeCreate, RiskTypeListQuery, RiskTypeUpdate } from './risk-types.schemas.js'

export type RiskTypesService = ReturnType<typeof createRiskTypesService>

/** Each field of a risk type, once (see shared/fields.ts). */
export const riskTypeFields = derive<RiskTypeRow, RiskType, RiskTypeCreate, RiskTypeUpdate>({
  id: ID,
  name,
  description: plain(),
  custom: flag({ default: true }),
  hidden: flag({ default: false }),
  created_at: TIME,
  updated_at: TIME,
})

export const riskTypeCatalog: CatalogSpec<RiskTypeRow, RiskType, RiskTypeCreate, RiskTypeUpdate, RiskTypeListQuery> = {
  table: 'risk_types',
  label: 'risk type',
  resourceType: 'risk_type',
  idPrefix: 'rt',
  ...NAMED,
  ...riskTypeFields,
  /** Scenarios that reference the type lose the reference (a plain association, audited per scenario). */
  beforeDelete: (tx, ctx, row, dialect) => removeAssociations(tx, dialect, ctx.tenantId, 'risk_type', row),
}

export function createRiskTypesService(deps: Pick<Deps, 'database'>) {
  return createCatalogService(deps.database, riskTypeCatalog)
}
