import type { Columns } from './catalog.js'
import type { Ctx } from './context.js'
import { ownerOf } from './governed.js'
import { column, customFields, flagColumn, type JsonField, owner, storedJson } from './item-json.js'
import { fromFlag, nameColumns, toFlag } from './records.js'

/**
 * A family's fields, each declared once: its columns, how a create and a PATCH body write it, whether its changes are
 * audited, whether a list filter, search or sort reads it, and how it renders in JavaScript and in SQL alike. The
 * catalog's create, update, item, SQL item, audited list and the pages the caches may keep are all derived from here.
 */
export interface Field {
  /** The item's value from the row. */
  read(row: Record<string, unknown>): unknown
  /** The SQL that renders the same value as JSON, given the table its rows come from; none: the family renders it. */
  json?: JsonField
  /** The columns a create body's value (undefined when absent) gives; none: the family's create sets them. */
  create?(value: unknown, ctx: Ctx): Record<string, unknown>
  /** The columns a PATCH body's value sets (null clears); none: a body does not write the field. */
  update?(value: unknown, ctx: Ctx): Record<string, unknown>
  /** Its changes are listed in the audit record. */
  audited: boolean
  /** A list filter, search or sort reads it: a change of it may move a record between kept pages. */
  listed: boolean
}

/** A field's declaration before it knows its name (the item key, which is also its column). */
export type FieldOf = (key: string) => Field

export interface PlainOptions {
  /** What a create without the field, or a PATCH clearing it, stores (a NOT NULL column). */
  default?: unknown
  /** What a create without the field stores, from who creates it. */
  createDefault?: (ctx: Ctx) => unknown
  /** A list filter, search or sort reads it. */
  listed?: boolean
}

/** A column as it is (text, number or null), written by create and PATCH bodies, audited. */
export const plain =
  (options: PlainOptions = {}): FieldOf =>
  (key) => ({
    read: (row) => row[key],
    json: column(key),
    create: (value, ctx) => ({ [key]: value ?? options.createDefault?.(ctx) ?? options.default ?? null }),
    update: (value) => ({ [key]: value === null && 'default' in options ? options.default : value }),
    audited: true,
    listed: options.listed ?? false,
  })

/** A list of strings stored as JSON text; absent on create and cleared by PATCH it is `[]`. */
export const list =
  (options: { listed?: boolean } = {}): FieldOf =>
  (key) => ({
    read: (row) => JSON.parse(row[key] as string),
    json: storedJson(key),
    create: (value) => ({ [key]: JSON.stringify(value ?? []) }),
    update: (value) => ({ [key]: JSON.stringify(value ?? []) }),
    audited: true,
    listed: options.listed ?? false,
  })

/** A JSON value (an object, or null) stored as JSON text. */
export const jsonText =
  (options: { listed?: boolean } = {}): FieldOf =>
  (key) => ({
    read: (row) => (row[key] === null ? null : JSON.parse(row[key] as string)),
    json: storedJson(key),
    create: (value) => ({ [key]: value == null ? null : JSON.stringify(value) }),
    update: (value) => ({ [key]: value === null ? null : JSON.stringify(value) }),
    audited: true,
    listed: options.listed ?? false,
  })

/** A boolean stored as 0 or 1; absent on create, or cleared by PATCH, it is `default`. */
export const flag =
  (options: { default: boolean; listed?: boolean }): FieldOf =>
  (key) => ({
    read: (row) => fromFlag(row[key] as number),
    json: flagColumn(key),
    create: (value) => ({ [key]: toFlag((value as boolean | null | undefined) ?? options.default) }),
    update: (value) => ({ [key]: toFlag((value as boolean | null) ?? options.default) }),
    audited: true,
    listed: options.listed ?? false,
  })

/** A versioned record's latest flag: a new version is its key's latest (its repository moves the flag off the one before). */
export const latest: FieldOf = (key) => ({
  read: (row) => fromFlag(row[key] as number),
  create: () => ({ [key]: 1 }),
  audited: false,
  listed: true,
})

/** A kind whose changes the audit record does not list. */
export const unaudited =
  (of: FieldOf): FieldOf =>
  (key) => ({ ...of(key), audited: false })

/** The record's name, stored with the key that uniqueness and `q` search compare; lists search and sort it. */
export const name: FieldOf = (key) => ({
  read: (row) => row[key],
  json: column(key),
  create: (value) => nameColumns(value as string),
  update: (value) => nameColumns(value as string),
  audited: true,
  listed: true,
})

/** A column the family itself sets (ids, times, state moved by its own operations), not a body. */
export const stored =
  (options: { audited?: boolean; listed?: boolean } = {}): FieldOf =>
  (key) => ({
    read: (row) => row[key],
    json: column(key),
    audited: options.audited ?? false,
    listed: options.listed ?? false,
  })

/** The owner of a governed record: written by the catalog (resolved against users and teams), filtered on by lists. */
export const ownerField: FieldOf = () => ({
  read: (row) => ownerOf(row.owner_id as string | null, row.owner_type as string | null),
  json: owner,
  create: () => ({ owner_id: null, owner_type: null }),
  audited: true,
  listed: true,
})

/** What lives outside the row (custom field values, attachments): `empty` in the row's item, filled by decoration. */
export const outside =
  (json: JsonField, empty: () => unknown = () => []): FieldOf =>
  () => ({ read: empty, json, audited: false, listed: false })

/**
 * What the family keeps beside its row (a link table's ids) and writes itself: audited, `[]` in the row's item, the
 * family sets it from what it read.
 */
export const beside =
  (options: { listed?: boolean } = {}): FieldOf =>
  () => ({ read: () => [], audited: true, listed: options.listed ?? false })

/** The governed record's custom field values (their changes are audited by the values' own writer). */
export const customFieldValues: FieldOf = outside(customFields)

/** The common fields of every record: id first, times last. */
export const ID: FieldOf = stored()
export const TIME: FieldOf = stored()

export type Fields<Item> = { [K in keyof Item]-?: FieldOf }

/** What a catalog spec takes from a family's field declarations. */
export interface Derived<Row, Item, Create, Update> {
  fields: Record<string, Field>
  audited: (keyof Item & string)[]
  unlisted: (keyof Item & string)[]
  json: { [K in keyof Item]-?: JsonField }
  toItem(row: Row): Item
  /** The columns a create body writes (the family adds what it derives itself). */
  createColumns(input: Create, ctx: Ctx): Record<string, unknown>
  /** The columns a PATCH body sets: present fields only. */
  updateColumns(input: Update, ctx: Ctx): Record<string, unknown>
  /** The catalog's create and update, for a family with nothing to add to the bodies' columns. */
  create(input: Create, ctx: Ctx): Columns<Row>
  update(input: Update, current: Row, tx: unknown, ctx: Ctx): Partial<Row>
}

const unrendered =
  (key: string): JsonField =>
  () => {
    throw new Error(`field ${key} has no SQL rendering: its family renders its items itself`)
  }

/** Derives a family's renderings, writes and audited and unlisted fields from its declaration (item order kept). */
export function derive<Row, Item, Create extends object, Update extends object>(
  declared: Fields<Item>,
): Derived<Row, Item, Create, Update> {
  const entries = Object.entries(declared as Record<string, FieldOf>).map(([key, of]) => [key, of(key)] as const)
  const fields = Object.fromEntries(entries)
  const written = entries.filter(([, field]) => field.create || field.update)
  const createColumns = (input: Create, ctx: Ctx) => {
    const out: Record<string, unknown> = {}
    for (const [key, field] of written) {
      if (field.create) Object.assign(out, field.create((input as Record<string, unknown>)[key], ctx))
    }
    return out
  }
  const updateColumns = (input: Update, ctx: Ctx) => {
    const out: Record<string, unknown> = {}
    for (const [key, field] of written) {
      const value = (input as Record<string, unknown>)[key]
      if (value !== undefined && field.update) Object.assign(out, field.update(value, ctx))
    }
    return out
  }
  return {
    fields,
    audited: entries.filter(([, field]) => field.audited).map(([key]) => key) as (keyof Item & string)[],
    unlisted: entries.filter(([, field]) => field.audited && !field.listed).map(([key]) => key) as (keyof Item &
      string)[],
    json: Object.fromEntries(entries.map(([key, field]) => [key, field.json ?? unrendered(key)])) as {
      [K in keyof Item]-?: JsonField
    },
    toItem: (row) => {
      const item: Record<string, unknown> = {}
      for (const [key, field] of entries) item[key] = field.read(row as Record<string, unknown>)
      return item as Item
    },
    createColumns,
    updateColumns,
    create: (input, ctx) => createColumns(input, ctx) as Columns<Row>,
    update: (input, _current, _tx, ctx) => updateColumns(input, ctx) as Partial<Row>,
  }
}
