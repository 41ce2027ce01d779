import type { ModelRow } from '../../db/tables.js'
import type { Deps } from '../../shared/deps.js'
import { createCatalogService, createJsonReads, type JsonCatalogSpec, NAMED } from '../../shared/catalog.js'
import { ownerOf } from '../../shared/governed.js'
import { column, customFields, owner } from '../../shared/item-json.js'
import { removeAssociations } from '../../shared/links.repo.js'
import { nameColumns, presentFields } from '../../shared/records.js'
import type { Model, ModelCreate, ModelListQuery, ModelUpdate } from './models.schemas.js'

export type ModelsService = ReturnType<typeof createModelsService>

const PLAIN_FIELDS = ['summary', 'source', 'status', 'provider', 'model_type', 'version'] as const
const DEFAULTS = { status: 'none' }

export const modelCatalog: JsonCatalogSpec<ModelRow, Model, ModelCreate, ModelUpdate, ModelListQuery> = {
  table: 'models',
  label: 'model',
  resourceType: 'model',
  idPrefix: 'mdl',
  governed: 'model',
  ...NAMED,
  audited: ['name', ...PLAIN_FIELDS, 'owner'],
  // Lists filter on status, owner and custom field values, search and sort the name.
  unlisted: ['summary', 'source', 'provider', 'model_type', 'version'],
  create: (input) => ({
    ...nameColumns(input.name),
    summary: input.summary ?? null,
    source: input.source ?? null,
    status: input.status ?? DEFAULTS.status,
    provider: input.provider ?? null,
    model_type: input.model_type ?? null,
    version: input.version ?? null,
    owner_id: null,
    owner_type: null,
  }),
  update: (input) => ({
    ...presentFields(input, PLAIN_FIELDS, DEFAULTS),
    ...(input.name !== undefined && nameColumns(input.name)),
  }),
  filter: (q, query) => (query.status === undefined ? q : q.where('status', '=', query.status)),
  /** Its links to use cases and vendors go with it (each removal is audited). */
  beforeDelete: (tx, ctx, row, dialect) => removeAssociations(tx, dialect, ctx.tenantId, 'model', row),
  toItem: (row) => ({
    id: row.id,
    name: row.name,
    summary: row.summary,
    source: row.source,
    status: row.status as Model['status'],
    provider: row.provider,
    model_type: row.model_type,
    version: row.version,
    owner: ownerOf(row.owner_id, row.owner_type),
    custom_fields: [],
    created_at: row.created_at,
    updated_at: row.updated_at,
  }),
  json: {
    id: column('id'),
    name: column('name'),
    summary: column('summary'),
    source: column('source'),
    status: column('status'),
    provider: column('provider'),
    model_type: column('model_type'),
    version: column('version'),
    owner,
    custom_fields: customFields,
    created_at: column('created_at'),
    updated_at: column('updated_at'),
  },
}

export function createModelsService(deps: Pick<Deps, 'database' | 'itemCache'>) {
  return {
    ...createCatalogService(deps.database, modelCatalog, deps.itemCache),
    ...createJsonReads(deps.database, modelCatalog, deps.itemCache),
  }
}
