import { type Expression, type RawBuilder, sql } from 'kysely'
import type { DialectName } from '../db/create-db.js'

/**
 * Records rendered to JSON text by the database itself, for the read paths (list pages and gets) of the families
 * read most. Building a page of items as JavaScript objects (a row object per record, the owner, custom field
 * and questionnaire rows in three more queries, then serialising it all) cost about five times the query itself;
 * one statement that returns each item as JSON text costs about what the row read alone did, and the text goes
 * out as it is. The families' `toItem` and `decorate` stay the rendering of their writes, MCP and events; a test
 * holds both renderings to the same output on both databases (test/item-json.test.ts).
 */

/** An SQL expression whose value is one JSON value of an item, given the table its rows come from. */
export type JsonField = (table: string, dialect: DialectName) => Expression<unknown>

const ref = (table: string, column: string) => sql.ref(`${table}.${column}`)

/** A column as it is: text, number or null. */
export const column =
  (name: string): JsonField =>
  (table) =>
    ref(table, name)

/** A 0/1 column as a JSON boolean. */
export const flagColumn =
  (name: string): JsonField =>
  (table, dialect) =>
    dialect === 'sqlite'
      ? sql`json(case when ${ref(table, name)} = 1 then 'true' else 'false' end)`
      : sql`(${ref(table, name)} = 1)`

/** A text column holding JSON (a list stored as text). */
export const storedJson =
  (name: string): JsonField =>
  (table, dialect) =>
    parsed(ref(table, name), dialect)

const parsed = (text: Expression<unknown>, dialect: DialectName) =>
  dialect === 'sqlite' ? sql`json(${text})` : sql`(${text})::json`

/** `{key: value, …}` of JSON values, keys in the given order. */
export function jsonObject(dialect: DialectName, fields: [string, Expression<unknown>][]): RawBuilder<unknown> {
  const args = sql.join(fields.flatMap(([key, value]) => [sql.lit(key), value]))
  return dialect === 'sqlite' ? sql`json_object(${args})` : sql`json_build_object(${args})`
}

/** The JSON array of `value` over a subquery's rows in `order`; `[]` when there are none. */
function jsonArray(dialect: DialectName, value: Expression<unknown>, order: RawBuilder<unknown>): RawBuilder<unknown> {
  return dialect === 'sqlite'
    ? sql`json_group_array(${value} order by ${order})`
    : sql`coalesce(json_agg(${value} order by ${order}), '[]'::json)`
}

/** A scalar subquery yielding JSON, embedded as JSON (SQLite passes text on unless told it is JSON). */
const subquery = (dialect: DialectName, query: RawBuilder<unknown>) =>
  dialect === 'sqlite' ? sql`json((${query}))` : sql`(${query})`

/** The owner as `ownerOf` + `decorateGoverned` give it: `{owner_id, owner_type, name}` or null. */
export const owner: JsonField = (table, dialect) => {
  const id = ref(table, 'owner_id')
  const type = ref(table, 'owner_type')
  const tenant = ref(table, 'tenant_id')
  const name = sql`coalesce(case ${type}
    when 'user' then (select coalesce(u.name, u.email) from users u where u.tenant_id = ${tenant} and u.id = ${id})
    when 'team' then (select t.name from teams t where t.tenant_id = ${tenant} and t.id = ${id}) end, '')`
  return sql`case when ${id} is null then null else ${jsonObject(dialect, [
    ['owner_id', id],
    ['owner_type', type],
    ['name', name],
  ])} end`
}

/** The record's custom field values as `loadCustomFieldValues` gives them: by field id, a list for `multiple` fields. */
export const customFields: JsonField = (table, dialect) => {
  const values = sql`(select ${jsonArray(dialect, parsed(sql.ref('w.value'), dialect), sql`w.position`)}
    from custom_field_values w where w.tenant_id = v.tenant_id and w.entity_id = v.entity_id and w.custom_field_id = v.custom_field_id)`
  const value = sql`case when f.multiple = 1 then ${subquery(dialect, values)} else ${parsed(sql.ref('v.value'), dialect)} end`
  const item = jsonObject(dialect, [
    ['custom_field_id', sql.ref('f.id')],
    ['name', sql.ref('f.name')],
    ['value', value],
  ])
  return subquery(
    dialect,
    sql`select ${jsonArray(dialect, item, sql`v.custom_field_id`)}
      from custom_field_values v join custom_fields f on f.tenant_id = v.tenant_id and f.id = v.custom_field_id
      where v.tenant_id = ${ref(table, 'tenant_id')} and v.entity_id = ${ref(table, 'id')} and v.position = 0`,
  )
}

/** A use case's attached questionnaires as `key+version`, by key (as `useCaseQuestionnaireIds`). */
export const questionnaireIds: JsonField = (table, dialect) =>
  subquery(
    dialect,
    sql`select ${jsonArray(dialect, sql`q.key || '+' || q.version`, sql`q.key`)}
      from use_case_questionnaires a join questionnaires q on q.id = a.questionnaire_id
      where a.tenant_id = ${ref(table, 'tenant_id')} and a.use_case_id = ${ref(table, 'id')}`,
  )

/** The item as JSON text (PostgreSQL returns json values parsed unless cast). */
export function itemJson(fields: Record<string, JsonField>, table: string, dialect: DialectName): RawBuilder<string> {
  const object = jsonObject(
    dialect,
    Object.entries(fields).map(([key, field]) => [key, field(table, dialect)]),
  )
  return (dialect === 'sqlite' ? object : sql`${object}::text`) as RawBuilder<string>
}

/**
 * An item's JSON text and its length in UTF-8 bytes, measured once when it is rendered: the body of a read is
 * then written straight into the bytes it is sent as, instead of a page being joined, measured and encoded again on
 * every request (bench/results/design-measurements.md).
 */
export interface ItemText {
  json: string
  bytes: number
}

export const itemText = (json: string): ItemText => ({ json, bytes: Buffer.byteLength(json) })

/** The bytes of one item's JSON. */
export const itemBody = (item: ItemText): Buffer => Buffer.from(item.json, isAscii(item) ? 'latin1' : 'utf8')

/** A page's JSON bytes from its items' texts, as the page schema (`items`, `pagination`) reads. */
export function pageBody(items: ItemText[], pagination: { has_more: boolean; next_cursor: string | null }): Buffer {
  const head = '{"items":['
  const tail = `],"pagination":${JSON.stringify(pagination)}}`
  let size = head.length + Buffer.byteLength(tail) + Math.max(0, items.length - 1)
  for (const item of items) size += item.bytes
  const body = Buffer.allocUnsafe(size)
  let at = body.write(head, 0, 'latin1')
  for (let i = 0; i < items.length; i++) {
    if (i > 0) at = body.writeUInt8(0x2c, at)
    at += body.write(items[i].json, at, isAscii(items[i]) ? 'latin1' : 'utf8')
  }
  body.write(tail, at, 'utf8')
  return body
}

/** A text as long in UTF-8 bytes as in UTF-16 units is all ASCII, whose Latin-1 bytes are its UTF-8 bytes (a copy). */
const isAscii = (item: ItemText) => item.bytes === item.json.length
