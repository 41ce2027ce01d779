import type { CustomFieldRow } from '../../db/tables.js'
import { AppError, conflict, invalid } from '../../http/errors.js'
import { type CatalogSpec, createCatalogService, NAMED } from '../../shared/catalog.js'
import type { Deps } from '../../shared/deps.js'
import { canonicalValue } from '../../shared/governed.js'
import type { Tx } from '../../shared/mutation.js'
import { fromFlag, nameColumns, presentFields, toFlag } from '../../shared/records.js'
import {
  type CustomField,
  type CustomFieldCreate,
  type CustomFieldListQuery,
  type CustomFieldUpdate,
  MAX_METADATA_BYTES,
} from './custom-fields.schemas.js'

export type CustomFieldsService = ReturnType<typeof createCustomFieldsService>

const DEFAULT_ELEMENT: Record<string, string> = {
  string: 'input',
  number: 'input',
  boolean: 'checkbox',
  datetime: 'datepicker',
  user: 'select',
}
const ELEMENTS: Record<string, string[]> = {
  string: ['input', 'select'],
  number: ['input', 'select'],
  boolean: ['checkbox', 'select'],
  datetime: ['datepicker', 'input'],
  user: ['select', 'input'],
}

const hasValues = async (tx: Tx, tenantId: string, id: string) =>
  (await tx
    .selectFrom('custom_field_values')
    .select('entity_id')
    .where('tenant_id', '=', tenantId)
    .where('custom_field_id', '=', id)
    .limit(1)
    .executeTakeFirst()) !== undefined

/** A definition must hang together: an element its type can show, options only (and always) for a select of strings or numbers. */
function checkDefinition(field: CustomField): void {
  if (!ELEMENTS[field.type].includes(field.element_type))
    throw invalid('element_type', `a ${field.type} field shows as ${ELEMENTS[field.type].join(' or ')}`)
  const takesOptions = field.element_type === 'select' && (field.type === 'string' || field.type === 'number')
  if (takesOptions && field.options.length === 0) throw invalid('options', 'a select field needs its options')
  if (!takesOptions && field.options.length > 0)
    throw invalid('options', 'only a select field of strings or numbers has options')
  const bad = field.options.findIndex((option) => canonicalValue(field.type, option) === null)
  if (bad >= 0) throw invalid(`options/${bad}`, `must be a ${field.type}`)
}

/** `entity_types` under either of its names (the original SDK says `entity_type_ids`); both must agree. */
function entityTypesOf(input: CustomFieldCreate | CustomFieldUpdate): CustomField['entity_types'] | null | undefined {
  const { entity_types: plain, entity_type_ids: alias } = input
  if (plain !== undefined && alias !== undefined && JSON.stringify(plain ?? []) !== JSON.stringify(alias ?? [])) {
    throw invalid('entity_type_ids', 'differs from entity_types; send one of them')
  }
  return plain !== undefined ? plain : alias
}

/** The metadata column (JSON text, at most MAX_METADATA_BYTES), and the description it carries. */
function metadataOf(metadata: Record<string, unknown> | null): {
  column: string | null
  description: string | undefined
} {
  if (metadata === null) return { column: null, description: undefined }
  // Bodies and MCP arguments are refused past 64 levels before they get here, so stringifying cannot overflow.
  const text = JSON.stringify(metadata)
  const bytes = Buffer.byteLength(text)
  if (bytes > MAX_METADATA_BYTES) throw invalid('metadata', `is ${bytes} bytes as JSON; at most ${MAX_METADATA_BYTES}`)
  const description = metadata.description
  return {
    column: text,
    description: typeof description === 'string' && description.trim() !== '' ? description : undefined,
  }
}

export const customFieldCatalog: CatalogSpec<
  CustomFieldRow,
  CustomField,
  CustomFieldCreate,
  CustomFieldUpdate,
  CustomFieldListQuery
> = {
  table: 'custom_fields',
  label: 'custom field',
  resourceType: 'custom_field',
  idPrefix: 'cf',
  ...NAMED,
  audited: [
    'name',
    'description',
    'type',
    'element_type',
    'options',
    'multiple',
    'required',
    'entity_types',
    'archived',
    'metadata',
  ],
  create: (input) => {
    const type = input.type ?? 'string'
    const metadata = metadataOf(input.metadata ?? null)
    const columns = {
      ...nameColumns(input.name),
      description: input.description ?? metadata.description ?? null,
      type,
      element_type: input.element_type ?? DEFAULT_ELEMENT[type],
      options: JSON.stringify(input.options ?? []),
      multiple: toFlag(input.multiple ?? false),
      required: toFlag(input.required ?? false),
      entity_types: JSON.stringify(entityTypesOf(input) ?? []),
      archived: toFlag(input.archived ?? false),
      metadata: metadata.column,
    }
    checkDefinition(customFieldCatalog.toItem({ ...columns, id: '', tenant_id: '', created_at: '', updated_at: '' }))
    return columns
  },
  update: async (input, current, tx, ctx) => {
    const flags = presentFields(input, ['multiple', 'required', 'archived'], {
      multiple: false,
      required: false,
      archived: false,
    }) as Record<string, boolean>
    const type = input.type === undefined ? current.type : (input.type ?? 'string')
    const metadata = input.metadata === undefined ? undefined : metadataOf(input.metadata)
    const entityTypes = entityTypesOf(input)
    const changes: Partial<CustomFieldRow> = {
      ...presentFields(input, ['description']),
      ...(input.description === undefined &&
        metadata?.description !== undefined && { description: metadata.description }),
      ...(metadata !== undefined && { metadata: metadata.column }),
      ...(input.name !== undefined && nameColumns(input.name)),
      ...(input.type !== undefined && { type }),
      ...(input.element_type !== undefined && { element_type: input.element_type ?? DEFAULT_ELEMENT[type] }),
      ...(input.options !== undefined && { options: JSON.stringify(input.options ?? []) }),
      ...(entityTypes !== undefined && { entity_types: JSON.stringify(entityTypes ?? []) }),
      ...Object.fromEntries(Object.entries(flags).map(([flag, on]) => [flag, toFlag(on)])),
    }
    const after = { ...current, ...changes }
    checkDefinition(customFieldCatalog.toItem(after))
    if (
      (after.type !== current.type || after.multiple !== current.multiple) &&
      (await hasValues(tx, ctx.tenantId, current.id))
    ) {
      throw conflict(
        `custom field ${current.id} has values: its type and multiple cannot change (create another field instead)`,
      )
    }
    return changes
  },
  filter: (q, query) => {
    let out = q
    if (query.archived !== undefined) out = out.where('archived', '=', toFlag(query.archived))
    if (query.entity_type !== undefined)
      out = out.where((eb) =>
        eb.or([eb('entity_types', '=', '[]'), eb('entity_types', 'like', `%"${query.entity_type}"%`)]),
      )
    return out
  },
  beforeDelete: async (tx, ctx, row) => {
    if (await hasValues(tx, ctx.tenantId, row.id)) {
      throw new AppError(
        'conflict',
        `custom field ${row.id} ("${row.name}") has values on records: archive it instead (PATCH {"archived": true}), or clear its values first`,
      )
    }
    return []
  },
  toItem: (row) => ({
    id: row.id,
    name: row.name,
    description: row.description,
    type: row.type as CustomField['type'],
    element_type: row.element_type as CustomField['element_type'],
    options: JSON.parse(row.options) as string[],
    multiple: fromFlag(row.multiple),
    required: fromFlag(row.required),
    entity_types: JSON.parse(row.entity_types) as CustomField['entity_types'],
    archived: fromFlag(row.archived),
    metadata: row.metadata === null ? null : (JSON.parse(row.metadata) as Record<string, unknown>),
    created_at: row.created_at,
    updated_at: row.updated_at,
  }),
}

export function createCustomFieldsService(deps: Pick<Deps, 'database'>) {
  return createCatalogService(deps.database, customFieldCatalog)
}
