import type { ExpressionBuilder, Kysely } from 'kysely'
import { keptRead } from '../read-model/index.js'
import type { CustomFieldRow, Tables } from '../db/tables.js'
import { AppError, type FieldError, invalidFields } from '../http/errors.js'
import type { Tx } from './mutation.js'
import type { ListQuery } from './pagination.js'
import { fromFlag } from './records.js'

/**
 * What governed records (use cases, models, vendors) carry beyond their own columns: an accountable owner
 * (a user or team of the tenant) and values of the tenant's custom fields.
 */

type Db = Kysely<Tables>
export type EntityType = 'use_case' | 'model' | 'vendor'
export type OwnerType = 'user' | 'team'
export type Scalar = string | number | boolean
export type FieldValue = Scalar | Scalar[]

export interface OwnerRef {
  owner_id: string
  owner_type?: OwnerType
}
export interface Owner {
  owner_id: string
  owner_type: OwnerType
  name: string
}
export interface CustomFieldValueInput {
  custom_field_id: string
  value: FieldValue | null
}
export interface CustomFieldValue {
  custom_field_id: string
  name: string
  value: FieldValue
}
export interface GovernedInput {
  owner?: OwnerRef | null
  custom_fields?: CustomFieldValueInput[]
}
interface GovernedItem {
  id: string
  owner: Owner | null
  custom_fields: CustomFieldValue[]
}

const ENTITY_LABELS: Record<EntityType, string> = { use_case: 'use cases', model: 'models', vendor: 'vendors' }

/** The owner as a row stores it; its name is filled by decorateGoverned. */
export function ownerOf(ownerId: string | null, ownerType: string | null): Owner | null {
  return ownerId ? { owner_id: ownerId, owner_type: ownerType as OwnerType, name: '' } : null
}

/**
 * Checks an owner (or assignee) reference against the tenant's users and teams; returns the columns to
 * write: none when absent, nulls when cleared. Another tenant's id is as unknown as a made-up one.
 */
export async function resolveOwner(
  tx: Tx,
  tenantId: string,
  ref: OwnerRef | null | undefined,
  field = 'owner',
  column = 'owner',
): Promise<Record<string, string | null>> {
  if (ref === undefined) return {}
  if (ref === null) return { [`${column}_id`]: null, [`${column}_type`]: null }
  const type: OwnerType = ref.owner_id.startsWith('team_') ? 'team' : 'user'
  if (ref.owner_type !== undefined && ref.owner_type !== type)
    throw invalidAt(`${field}/owner_type`, `${ref.owner_id} is not a ${ref.owner_type}`)
  const found = (await ownerNames(tx, tenantId, [{ owner_id: ref.owner_id, owner_type: type }])).has(ref.owner_id)
  if (!found) throw invalidAt(`${field}/owner_id`, `no ${type} ${ref.owner_id} in this tenant`)
  return { [`${column}_id`]: ref.owner_id, [`${column}_type`]: type }
}

/** Display names of owners: a user's name (else email), a team's name. */
export async function ownerNames(
  db: Db,
  tenantId: string,
  refs: readonly Pick<Owner, 'owner_id' | 'owner_type'>[],
): Promise<Map<string, string>> {
  const names = new Map<string, string>()
  const userIds = [...new Set(refs.filter((r) => r.owner_type === 'user').map((r) => r.owner_id))]
  const teamIds = [...new Set(refs.filter((r) => r.owner_type === 'team').map((r) => r.owner_id))]
  if (userIds.length > 0) {
    const users = await db
      .selectFrom('users')
      .select(['id', 'name', 'email'])
      .where('tenant_id', '=', tenantId)
      .where('id', 'in', userIds)
      .execute()
    for (const u of users) names.set(u.id, u.name ?? u.email)
  }
  if (teamIds.length > 0) {
    const teams = await db
      .selectFrom('teams')
      .select(['id', 'name'])
      .where('tenant_id', '=', tenantId)
      .where('id', 'in', teamIds)
      .execute()
    for (const t of teams) names.set(t.id, t.name)
  }
  return names
}

/** Fills owner names and custom field values for a page of governed items with two queries. */
export async function decorateGoverned<Item extends GovernedItem>(
  db: Db,
  tenantId: string,
  items: Item[],
): Promise<Item[]> {
  if (items.length === 0) return items
  const names = await ownerNames(
    db,
    tenantId,
    items.flatMap((item) => (item.owner ? [item.owner] : [])),
  )
  const values = await loadCustomFieldValues(
    db,
    tenantId,
    items.map((item) => item.id),
  )
  return items.map((item) => ({
    ...item,
    owner: item.owner ? { ...item.owner, name: names.get(item.owner.owner_id) ?? '' } : null,
    custom_fields: values.get(item.id) ?? [],
  }))
}

async function loadCustomFieldValues(
  db: Db,
  tenantId: string,
  entityIds: string[],
): Promise<Map<string, CustomFieldValue[]>> {
  const rows = await db
    .selectFrom('custom_field_values as v')
    .innerJoin('custom_fields as f', (join) =>
      join.onRef('f.id', '=', 'v.custom_field_id').onRef('f.tenant_id', '=', 'v.tenant_id'),
    )
    .select(['v.entity_id', 'v.custom_field_id', 'v.value', 'f.name', 'f.multiple'])
    .where('v.tenant_id', '=', tenantId)
    .where('v.entity_id', 'in', entityIds)
    .orderBy('v.entity_id')
    .orderBy('v.custom_field_id')
    .orderBy('v.position')
    .execute()
  const out = new Map<string, CustomFieldValue[]>()
  for (const row of rows) {
    const list = out.get(row.entity_id) ?? []
    out.set(row.entity_id, list)
    const value = JSON.parse(row.value) as Scalar
    const last = list[list.length - 1]
    if (fromFlag(row.multiple)) {
      if (last?.custom_field_id === row.custom_field_id) (last.value as Scalar[]).push(value)
      else list.push({ custom_field_id: row.custom_field_id, name: row.name, value: [value] })
    } else {
      list.push({ custom_field_id: row.custom_field_id, name: row.name, value })
    }
  }
  return out
}

/** A custom field definition as the value checks read it. */
interface Definition {
  id: string
  name: string
  type: string
  options: string[]
  multiple: boolean
  required: boolean
  entityTypes: string[]
  archived: boolean
}

function definition(row: CustomFieldRow): Definition {
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    options: JSON.parse(row.options) as string[],
    multiple: fromFlag(row.multiple),
    required: fromFlag(row.required),
    entityTypes: JSON.parse(row.entity_types) as string[],
    archived: fromFlag(row.archived),
  }
}

const appliesTo = (def: Definition, entity: EntityType) =>
  def.entityTypes.length === 0 || def.entityTypes.includes(entity)

/**
 * Checks the body's custom field values against their definitions and writes them (replacing each named
 * field's values; `null` clears). Returns the audit changes as `custom_fields.<name>: [before, after]`.
 * Every problem is found before anything is written, and all of them are reported.
 */
export async function writeCustomFieldValues(
  tx: Tx,
  tenantId: string,
  entity: EntityType,
  entityId: string,
  input: CustomFieldValueInput[] | undefined,
  creating: boolean,
): Promise<Record<string, [unknown, unknown]>> {
  const given = input ?? []
  if (given.length === 0 && !creating) return {}
  const rows = await keptRead(tx, 'custom_fields', tenantId, () =>
    tx.selectFrom('custom_fields').selectAll().where('tenant_id', '=', tenantId).execute(),
  )
  const defs = new Map(rows.map((row) => [row.id, definition(row)]))
  const errors: FieldError[] = []
  const seen = new Set<string>()
  const accepted: { def: Definition; keys: string[]; values: Scalar[] | null }[] = []
  for (const [i, item] of given.entries()) {
    const at = `custom_fields/${i}`
    const def = defs.get(item.custom_field_id)
    if (!def)
      errors.push({ field: `${at}/custom_field_id`, message: `no custom field ${item.custom_field_id} in this tenant` })
    else if (def.archived)
      errors.push({ field: `${at}/custom_field_id`, message: `the custom field "${def.name}" is archived` })
    else if (!appliesTo(def, entity))
      errors.push({
        field: `${at}/custom_field_id`,
        message: `the custom field "${def.name}" is not for ${ENTITY_LABELS[entity]}`,
      })
    else if (seen.has(def.id))
      errors.push({ field: `${at}/custom_field_id`, message: 'the same custom field is given twice' })
    else {
      seen.add(def.id)
      const checked = await checkValue(tx, tenantId, def, item.value)
      if (typeof checked === 'string') errors.push({ field: `${at}/value`, message: checked })
      else accepted.push({ def, ...checked })
    }
  }
  if (creating) {
    // A required field named with an empty value is reported at its member by checkValue.
    for (const def of defs.values()) {
      if (
        def.required &&
        !def.archived &&
        appliesTo(def, entity) &&
        !given.some((item) => item.custom_field_id === def.id)
      ) {
        errors.push({ field: 'custom_fields', message: `the custom field "${def.name}" is required` })
      }
    }
  }
  if (errors.length > 0) throw invalidFields(errors)

  const changes: Record<string, [unknown, unknown]> = {}
  for (const { def, keys, values } of accepted) {
    const before = await tx
      .selectFrom('custom_field_values')
      .select('value')
      .where('tenant_id', '=', tenantId)
      .where('entity_id', '=', entityId)
      .where('custom_field_id', '=', def.id)
      .orderBy('position')
      .execute()
    const beforeValue = shape(def, before.length === 0 ? null : before.map((row) => JSON.parse(row.value) as Scalar))
    const afterValue = shape(def, values)
    if (JSON.stringify(beforeValue) === JSON.stringify(afterValue)) continue
    changes[`custom_fields.${def.name}`] = [beforeValue, afterValue]
    await tx
      .deleteFrom('custom_field_values')
      .where('tenant_id', '=', tenantId)
      .where('entity_id', '=', entityId)
      .where('custom_field_id', '=', def.id)
      .execute()
    if (values && values.length > 0) {
      await tx
        .insertInto('custom_field_values')
        .values(
          values.map((value, position) => ({
            tenant_id: tenantId,
            custom_field_id: def.id,
            entity_type: entity,
            entity_id: entityId,
            position,
            value: JSON.stringify(value),
            value_key: keys[position],
          })),
        )
        .execute()
    }
  }
  return changes
}

const shape = (def: Definition, values: Scalar[] | null): FieldValue | null =>
  values === null || values.length === 0 ? null : def.multiple ? values : values[0]

/** The value's elements and their canonical keys, or the message saying why it does not fit the field. */
async function checkValue(
  tx: Tx,
  tenantId: string,
  def: Definition,
  value: FieldValue | null,
): Promise<{ keys: string[]; values: Scalar[] | null } | string> {
  if (value === null)
    return def.required
      ? `the custom field "${def.name}" is required; it cannot be cleared`
      : { keys: [], values: null }
  if (Array.isArray(value) !== def.multiple)
    return def.multiple ? 'must be a list (the field takes several values)' : 'must be a single value, not a list'
  const elements = Array.isArray(value) ? value : [value]
  if (def.required && elements.length === 0) return `the custom field "${def.name}" is required`
  const keys: string[] = []
  const values: Scalar[] = []
  for (const element of elements) {
    const key = canonicalValue(def.type, element)
    if (key === null) return `must be a ${TYPE_WORDS[def.type] ?? def.type}`
    if (def.options.length > 0 && !def.options.some((option) => canonicalValue(def.type, option) === key))
      return `must be one of: ${def.options.join(', ')}`
    keys.push(key)
    values.push(def.type === 'datetime' ? key : element)
  }
  if (def.type === 'user' && keys.length > 0) {
    const found = await tx
      .selectFrom('users')
      .select('id')
      .where('tenant_id', '=', tenantId)
      .where('id', 'in', keys)
      .execute()
    const missing = keys.filter((key) => !found.some((u) => u.id === key))
    if (missing.length > 0) return `no user ${missing.join(', ')} in this tenant`
  }
  return { keys, values }
}

const TYPE_WORDS: Record<string, string> = {
  string: 'string of at most 500 characters',
  number: 'finite number',
  boolean: 'boolean',
  datetime: 'date-time (RFC 3339)',
  user: 'user id (usr_…)',
}

const DATE_TIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?$/

/**
 * The text find-by-value compares for one value of a field of `type`, or null when the value does not
 * fit the type. Query strings arrive as text, so numbers and booleans are accepted in their text form too.
 */
export function canonicalValue(type: string, value: unknown): string | null {
  switch (type) {
    case 'string':
      return typeof value === 'string' && value.length <= 500 ? value : null
    case 'number': {
      const n =
        typeof value === 'number'
          ? value
          : typeof value === 'string' && value.trim() !== ''
            ? Number(value)
            : Number.NaN
      return Number.isFinite(n) ? String(n) : null
    }
    case 'boolean':
      return value === true || value === 'true' ? 'true' : value === false || value === 'false' ? 'false' : null
    case 'datetime': {
      if (typeof value !== 'string' || !DATE_TIME.test(value)) return null
      const at = new Date(value)
      return Number.isNaN(at.getTime()) ? null : at.toISOString()
    }
    case 'user':
      return typeof value === 'string' && /^usr_[0-9a-z]{26}$/.test(value) ? value : null
    default:
      return null
  }
}

/** `custom_field_id` + `custom_field_value` on a list: the records carrying that value, through the value index. */
export async function customFieldValueFilter(
  db: Db,
  tenantId: string,
  entity: EntityType,
  q: ListQuery,
  query: { custom_field_id?: string; custom_field_value?: string },
): Promise<ListQuery> {
  const { custom_field_id: fieldId, custom_field_value: value } = query
  if (fieldId === undefined && value === undefined) return q
  if (fieldId === undefined || value === undefined) {
    const missing = fieldId === undefined ? 'custom_field_id' : 'custom_field_value'
    throw new AppError('bad_request', `${missing}: custom_field_id and custom_field_value go together`, [
      { field: missing, message: 'required with the other' },
    ])
  }
  const field = await db
    .selectFrom('custom_fields')
    .select('type')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', fieldId)
    .executeTakeFirst()
  if (!field)
    throw new AppError('bad_request', `custom_field_id: no custom field ${fieldId} in this tenant`, [
      { field: 'custom_field_id', message: 'no such custom field' },
    ])
  const key = canonicalValue(field.type, value)
  if (key === null)
    throw new AppError('bad_request', `custom_field_value: must be a ${TYPE_WORDS[field.type]}`, [
      { field: 'custom_field_value', message: `must be a ${TYPE_WORDS[field.type]}` },
    ])
  // biome-ignore lint/suspicious/noExplicitAny: any governed family's table
  return q.where('id', 'in', (eb: ExpressionBuilder<any, any>) =>
    eb
      .selectFrom('custom_field_values')
      .select('entity_id')
      .where('tenant_id', '=', tenantId)
      .where('custom_field_id', '=', fieldId)
      .where('value_key', '=', key)
      .where('entity_type', '=', entity),
  )
}

export async function removeCustomFieldValues(tx: Tx, tenantId: string, entityId: string): Promise<void> {
  await tx
    .deleteFrom('custom_field_values')
    .where('tenant_id', '=', tenantId)
    .where('entity_id', '=', entityId)
    .execute()
}

function invalidAt(field: string, message: string): AppError {
  return new AppError('validation_failed', `${field}: ${message}`, [{ field, message }])
}

/**
 * A user or team that owns a record, is assigned a control, or (a user) is a custom field value cannot be
 * deleted: 409 naming what still refers to it (a few of each), so the caller can reassign or deactivate.
 */
export async function refuseWhileOwning(tx: Tx, tenantId: string, type: OwnerType, id: string): Promise<void> {
  const shown = 3
  const found: string[] = []
  for (const [table, label] of [
    ['use_cases', 'use case'],
    ['models', 'model'],
    ['vendors', 'vendor'],
  ] as const) {
    const rows = await tx
      .selectFrom(table)
      .select(['id', 'name'])
      .where('tenant_id', '=', tenantId)
      .where('owner_id', '=', id)
      .orderBy('id')
      .limit(shown)
      .execute()
    found.push(...rows.map((row) => `owns ${label} "${row.name}" (${row.id})`))
  }
  const controls = await tx
    .selectFrom('use_case_controls')
    .select(['id', 'control_key', 'use_case_id'])
    .where('tenant_id', '=', tenantId)
    .where('assignee_id', '=', id)
    .orderBy('id')
    .limit(shown)
    .execute()
  found.push(...controls.map((c) => `is assigned control ${c.control_key} (${c.id}) of use case ${c.use_case_id}`))
  if (type === 'user') {
    const values = await tx
      .selectFrom('custom_field_values as v')
      .innerJoin('custom_fields as f', (join) =>
        join.onRef('f.id', '=', 'v.custom_field_id').onRef('f.tenant_id', '=', 'v.tenant_id'),
      )
      .select(['v.entity_id', 'f.name'])
      .where('v.tenant_id', '=', tenantId)
      .where('f.type', '=', 'user')
      .where('v.value_key', '=', id)
      .limit(shown)
      .execute()
    found.push(...values.map((v) => `is the "${v.name}" value of ${v.entity_id}`))
  }
  if (found.length > 0)
    throw new AppError(
      'conflict',
      `${type} ${id} ${found.join('; ')}: reassign first${type === 'user' ? ', or deactivate the user instead' : ''}`,
    )
}
