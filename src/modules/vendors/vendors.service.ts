import type { VendorRow } from '../../db/tables.js'
import { createCatalogService, createJsonReads, type JsonCatalogSpec, NAMED } from '../../shared/catalog.js'
import type { Deps } from '../../shared/deps.js'
import { ownerOf } from '../../shared/governed.js'
import { column, customFields, owner } from '../../shared/item-json.js'
import { removeAssociations } from '../../shared/links.repo.js'
import { nameColumns, presentFields } from '../../shared/records.js'
import type { Vendor, VendorCreate, VendorListQuery, VendorUpdate } from './vendors.schemas.js'

export type VendorsService = ReturnType<typeof createVendorsService>

const PLAIN_FIELDS = ['description', 'website', 'status'] as const
const DEFAULTS = { status: 'active' }

export const vendorCatalog: JsonCatalogSpec<VendorRow, Vendor, VendorCreate, VendorUpdate, VendorListQuery> = {
  table: 'vendors',
  label: 'vendor',
  resourceType: 'vendor',
  idPrefix: 'vnd',
  governed: 'vendor',
  ...NAMED,
  audited: ['name', ...PLAIN_FIELDS, 'owner'],
  // Lists filter on status, owner and custom field values, search and sort the name.
  unlisted: ['description', 'website'],
  create: (input) => ({
    ...nameColumns(input.name),
    description: input.description ?? null,
    website: input.website ?? null,
    status: input.status ?? DEFAULTS.status,
    owner_id: null,
    owner_type: null,
  }),
  update: (input) => ({
    ...presentFields(input, PLAIN_FIELDS, DEFAULTS),
    ...(input.name !== undefined && nameColumns(input.name)),
  }),
  filter: (q, query) => (query.status === undefined ? q : q.where('status', '=', query.status)),
  /** Its links to use cases and models go with it (each removal is audited). */
  beforeDelete: (tx, ctx, row, dialect) => removeAssociations(tx, dialect, ctx.tenantId, 'vendor', row),
  toItem: (row) => ({
    id: row.id,
    name: row.name,
    description: row.description,
    website: row.website,
    status: row.status as Vendor['status'],
    owner: ownerOf(row.owner_id, row.owner_type),
    custom_fields: [],
    created_at: row.created_at,
    updated_at: row.updated_at,
  }),
  json: {
    id: column('id'),
    name: column('name'),
    description: column('description'),
    website: column('website'),
    status: column('status'),
    owner,
    custom_fields: customFields,
    created_at: column('created_at'),
    updated_at: column('updated_at'),
  },
}

export function createVendorsService(deps: Pick<Deps, 'database' | 'itemCache'>) {
  return {
    ...createCatalogService(deps.database, vendorCatalog, deps.itemCache),
    ...createJsonReads(deps.database, vendorCatalog, deps.itemCache),
  }
}
