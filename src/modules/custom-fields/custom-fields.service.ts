import type { CustomFieldRow } from '../../db/tables.js'
import { AppError, conflict, invalid } from '../../http/errors.js'
import { type CatalogSpec, type Columns, createCatalogService, NAMED } from '../../shared/catalog.js'
import type { Deps } from '../../shared/deps.js'
import { canonicalValue } from '../../shared/governed.js'
import type { Tx } from '../../shared/mutation.js'
import { derive, flag, ID, list, name, plain, stored, TIME } from '../../shared/fields.js'
import { toFlag } from '../../shared/records.js'
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

/** The metadata column: JSON text of at most MAX_METADATA_BYTES. */
function metadataColumn(metadata: Record<string, unknown> | null): string | null {
  if (metadata === null) return null
  // Bodies and MCP arguments are refused past 64 levels before they get here, so stringifying cannot overflow.
  const text = JSON.stringify(metadata)
  const bytes = Buffer.byteLength(text)
  if (bytes > MAX_METADATA_BYTES) throw invalid('metadata', `is ${bytes} bytes as JSON; at most ${MAX_METADATA_BYTES}`)
  return text
}

/** The description metadata carries, for a body that sends none of its own. */
function describedBy(metadata: Record<string, unknown> | null | undefined): string | undefined {
  const description = metadata?.description
  return typeof description === 'string' && description.trim() !== '' ? description : undefined
}

const fields = derive<CustomFieldRow, CustomField, CustomFieldCreate, CustomFieldUpdate>({
  id: ID,
  name,
  description: plain(),
  type: plain({ default: 'string' }),
  // From the type when a body names none: written by create and update below.
  element_type: stored({ audited: true }),
  options: list(),
  multiple: flag({ default: false }),
  required: flag({ default: false }),
  // Also sent as `entity_type_ids`: create and update below write whichever came.
  entity_types: list({ listed: true }),
  archived: flag({ default: false, listed: true }),
  metadata: (key) => ({
    read: (row) => (row[key] === null ? null : JSON.parse(row[key] as string)),
    create: (value) => ({ [key]: metadataColumn((value as Record<string, unknown> | undefined) ?? null) }),
    update: (value) => ({ [key]: metadataColumn(value as Record<string, unknown> | null) }),
    audited: true,
    listed: false,
  }),
  created_at: TIME,
  updated_at: TIME,
})

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
  audited: fields.audited,
  toItem: fields.toItem,
  create: (input, ctx) => {
    const columns = {
      ...fields.createColumns(input, ctx),
      description: input.description ?? describedBy(input.metadata) ?? null,
      element_type: input.element_type ?? DEFAULT_ELEMENT[input.type ?? 'string'],
      entity_types: JSON.stringify(entityTypesOf(input) ?? []),
    } as Columns<CustomFieldRow>
    checkDefinition(fields.toItem({ ...columns, id: '', tenant_id: '', created_at: '', updated_at: '' }))
    return columns
  },
  update: async (input, current, tx, ctx) => {
    const type = input.type === undefined ? current.type : (input.type ?? 'string')
    const described = input.description === undefined ? describedBy(input.metadata) : undefined
    const entityTypes = entityTypesOf(input)
    const changes: Partial<CustomFieldRow> = {
      ...fields.updateColumns(input, ctx),
      ...(described !== undefined && { description: described }),
      ...(input.element_type !== undefined && { element_type: input.element_type ?? DEFAULT_ELEMENT[type] }),
      ...(entityTypes !== undefined && { entity_types: JSON.stringify(entityTypes ?? []) }),
    }
    const after = { ...current, ...changes }
    checkDefinition(fields.toItem(after))
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
}

export function createCustomFieldsService(deps: Pick<Deps, 'database'>) {
  return createCatalogService(deps.database, customFieldCatalog)
}
