import type { ModelRow } from '../../db/tables.js'
import type { Deps } from '../../shared/deps.js'
import { createCatalogService, createJsonReads, type JsonCatalogSpec, NAMED } from '../../shared/catalog.js'
import { customFieldValues, derive, ID, name, ownerField, plain, TIME } from '../../shared/fields.js'
import { removeAssociations } from '../../shared/links.repo.js'
import type { Model, ModelCreate, ModelListQuery, ModelUpdate } from './models.schemas.js'

export type ModelsService = ReturnType<typeof createModelsService>

/** Each field of a model, once (see shared/fields.ts); lists filter on status, owner and custom field values. */
const fields = derive<ModelRow, Model, ModelCreate, ModelUpdate>({
  id: ID,
  name,
  summary: plain(),
  source: plain(),
  status: plain({ default: 'none', listed: true }),
  provider: plain(),
  model_type: plain(),
  version: plain(),
  owner: ownerField,
  custom_fields: customFieldValues,
  created_at: TIME,
  updated_at: TIME,
})

export const modelCatalog: JsonCatalogSpec<ModelRow, Model, ModelCreate, ModelUpdate, ModelListQuery> = {
  table: 'models',
  label: 'model',
  resourceType: 'model',
  idPrefix: 'mdl',
  governed: 'model',
  ...NAMED,
  ...fields,
  filter: (q, query) => (query.status === undefined ? q : q.where('status', '=', query.status)),
  /** Its links to use cases and vendors go with it (each removal is audited). */
  beforeDelete: (tx, ctx, row, dialect) => removeAssociations(tx, dialect, ctx.tenantId, 'model', row),
}

export function createModelsService(deps: Pick<Deps, 'database' | 'readModel'>) {
  return {
    ...createCatalogService(deps.database, modelCatalog, deps.readModel.records),
    ...createJsonReads(deps.database, modelCatalog, deps.readModel.records),
  }
}
