import type { VendorRow } from '../../db/tables.js'
import { createCatalogService, createJsonReads, type JsonCatalogSpec, NAMED } from '../../shared/catalog.js'
import type { Deps } from '../../shared/deps.js'
import { customFieldValues, derive, ID, name, ownerField, plain, TIME } from '../../shared/fields.js'
import { removeAssociations } from '../../shared/links.repo.js'
import type { Vendor, VendorCreate, VendorListQuery, VendorUpdate } from './vendors.schemas.js'

export type VendorsService = ReturnType<typeof createVendorsService>

/** Each field of a vendor, once (see shared/fields.ts); lists filter on status, owner and custom field values. */
const fields = derive<VendorRow, Vendor, VendorCreate, VendorUpdate>({
  id: ID,
  name,
  description: plain(),
  website: plain(),
  status: plain({ default: 'active', listed: true }),
  owner: ownerField,
  custom_fields: customFieldValues,
  created_at: TIME,
  updated_at: TIME,
})

export const vendorCatalog: JsonCatalogSpec<VendorRow, Vendor, VendorCreate, VendorUpdate, VendorListQuery> = {
  table: 'vendors',
  label: 'vendor',
  resourceType: 'vendor',
  idPrefix: 'vnd',
  governed: 'vendor',
  ...NAMED,
  ...fields,
  filter: (q, query) => (query.status === undefined ? q : q.where('status', '=', query.status)),
  /** Its links to use cases and models go with it (each removal is audited). */
  beforeDelete: (tx, ctx, row, dialect) => removeAssociations(tx, dialect, ctx.tenantId, 'vendor', row),
}

export function createVendorsService(deps: Pick<Deps, 'database' | 'readModel'>) {
  return {
    ...createCatalogService(deps.database, vendorCatalog, deps.readModel.records),
    ...createJsonReads(deps.database, vendorCatalog, deps.readModel.records),
  }
}
