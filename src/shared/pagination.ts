import { type Expression, type RawBuilder, type SelectQueryBuilder, sql } from 'kysely'
import { type TProperties, Type } from 'typebox'
import { AppError } from '../http/errors.js'

export const DEFAULT_PAGE_LIMIT = 50

/** A list's query as it is being built (filters, search, keyset), for any family's table. */
// biome-ignore lint/suspicious/noExplicitAny: any family's list query, whatever its tables
export type ListQuery = SelectQueryBuilder<any, any, any>

/** Query parameters every list accepts. */
export const PageQuery = {
  page_limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 100, default: DEFAULT_PAGE_LIMIT, description: 'Records per page (1-100).' }),
  ),
  page_after: Type.Optional(Type.String({ maxLength: 1024, description: 'The `next_cursor` of the previous page.' })),
}

/** A `sort` parameter accepting each allowed field, ascending or with `-` for descending. */
export function SortParam<F extends string>(fields: readonly F[]) {
  // Typed as the fields it allows: a union built from a list would be typed as no value at all.
  return Type.Optional(
    Type.Unsafe<F | `-${F}`>(
      Type.Union(
        fields.flatMap((f) => [Type.Literal(f), Type.Literal(`-${f}`)]),
        { description: `Sort field, \`-\` prefix for descending. Default: creation order.` },
      ),
    ),
  )
}

/** `q`: a case-insensitive substring of the name. */
export const NameSearch = Type.Optional(
  Type.String({ minLength: 1, maxLength: 200, description: 'Case-insensitive substring of the name.' }),
)

/** The list query of a named family: pages, sort by name or timestamps, `q` on the name, and the family's own filters. */
export function NamedListQuery<P extends TProperties>(filters: P) {
  return Type.Object(
    { ...PageQuery, sort: SortParam(['name', 'created_at', 'updated_at']), q: NameSearch, ...filters },
    { additionalProperties: false },
  )
}

export const Pagination = Type.Object({
  has_more: Type.Boolean(),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
})

export function PageOf<T extends Parameters<typeof Type.Array>[0]>(item: T) {
  return Type.Object({ items: Type.Array(item), pagination: Pagination })
}

export interface Page<T> {
  items: T[]
  pagination: { has_more: boolean; next_cursor: string | null }
}

export interface Keyset {
  /** The sort parameter as given (`name`, `-name`, or undefined for creation order). */
  sort: string
  column: string
  descending: boolean
  after: { value: string | number; id: string } | null
  limit: number
}

/**
 * Resolves `sort`, `page_limit` and `page_after` into a keyset position.
 * `columns` maps each allowed sort field to its column (a sortable, non-null one); `defaultSort` applies when
 * neither `sort` nor a cursor says. A cursor carries its sort: `page_after` alone continues in it (generated clients
 * send only the cursor), while an explicit `sort` that differs from it is a 400.
 */
export function keyset(
  query: { sort?: string; page_limit?: number; page_after?: string },
  columns: Record<string, string> = {},
  defaultSort = 'id',
): Keyset {
  const cursor = query.page_after === undefined ? null : decodeCursor(query.page_after)
  if (cursor && query.sort !== undefined && cursor.sort !== query.sort) {
    throw cursorError(
      `the cursor was made for sort "${cursor.sort}", not "${query.sort}"; send page_after without sort, or with the same sort`,
    )
  }
  const sort = query.sort ?? cursor?.sort ?? defaultSort
  const descending = sort.startsWith('-')
  const field = descending ? sort.slice(1) : sort
  const column = field === 'id' ? 'id' : columns[field]
  if (!column) {
    if (query.sort === undefined && cursor) throw cursorError('not a cursor of this list')
    throw new AppError('bad_request', `sort: unknown field "${field}"`, [
      { field: 'sort', message: 'not a sortable field' },
    ])
  }
  const after = cursor && { value: cursor.value, id: cursor.id }
  return { sort, column, descending, after, limit: query.page_limit ?? DEFAULT_PAGE_LIMIT }
}

/** Adds the keyset WHERE, ORDER BY and LIMIT (limit + 1, to learn whether a next page exists). */
export function applyKeyset<DB, TB extends keyof DB, O>(
  qb: SelectQueryBuilder<DB, TB, O>,
  ks: Keyset,
): SelectQueryBuilder<DB, TB, O> {
  const direction = ks.descending ? 'desc' : 'asc'
  const op = ks.descending ? '<' : '>'
  let q = qb
  if (ks.after) {
    const { value, id } = ks.after
    // A row value, not "column > v or (column = v and id > i)": SQLite seeks an index to a row value, but reads an
    // OR from the start of the tenant's range on every page, so page n cost n pages (an export read O(n²)).
    q =
      ks.column === 'id'
        ? q.where(sql.ref('id'), op, id)
        : q.where(sql<boolean>`(${sql.ref(ks.column)}, id) ${sql.raw(op)} (${value}, ${id})`)
  }
  if (ks.column !== 'id') q = q.orderBy(sql.ref(ks.column), direction)
  return q.orderBy(sql.ref('id'), direction).limit(ks.limit + 1)
}

/**
 * The text a list page holds at most, in characters of its records' long-text columns: a page ends early (has_more,
 * a next_cursor) once its records reach it, so a page of 100 records of 100 000-character descriptions is read, held
 * and sent as several pages of about this size. A page always holds at least one record.
 */
export const PAGE_TEXT_BUDGET = 1_000_000
/** What a record's other fields count for against the budget (names, ids, timestamps, lists). */
const ROW_TEXT = 2_000

/** The columns of each table whose text may be long (descriptions, summaries, audit changes): what a page budgets. */
export const LONG_TEXT: Record<string, string[]> = {
  use_cases: ['description'],
  models: ['summary'],
  vendors: ['description'],
  risk_types: ['description'],
  risk_scenarios: ['description'],
  teams: ['description'],
  workflow_stages: ['description'],
  policy_packs: ['description'],
  policy_control_versions: ['description', 'evidence_requirements'],
  questionnaires: ['description', 'sections'],
  audit_logs: ['changes', 'metadata'],
}

/** A record's size against the budget: its long-text columns' characters and a constant for the rest. */
export const textSize = (alias: string, columns: string[]): RawBuilder<number> =>
  sql<number>`${sql.join([sql.lit(ROW_TEXT), ...columns.map((c) => sql`coalesce(length(${sql.ref(`${alias}.${c}`)}), 0)`)], sql` + `)}`

/** The size of a page row of `table` (its own columns, as `p`); undefined for a table without long text. */
export const pageTextOf = (table: string): Expression<number> | undefined =>
  LONG_TEXT[table] ? textSize('p', LONG_TEXT[table]) : undefined

const BEFORE = 'page_text_before'
const BEFORE_PREVIOUS = 'page_text_before_previous'
/** The column a budgeted page's rows carry for toPage (a query that reads a budgeted page again selects it too). */
export const PAGE_TEXT_COLUMNS = [BEFORE] as const

/**
 * A keyset page (from applyKeyset) read only as far as PAGE_TEXT_BUDGET, plus one record past it to tell a next page
 * exists: the database measures each record's long text over the page's own rows (at most limit + 1), so rows past
 * the budget never reach this process. toPage ends the page there. `size` measures a row of the page query, as `p`
 * (`pageTextOf(table)`); none: the table holds no long text.
 */
// biome-ignore lint/suspicious/noExplicitAny: any family's list query, whatever its tables
export function withinTextBudget<Q extends SelectQueryBuilder<any, any, any>>(
  // biome-ignore lint/suspicious/noExplicitAny: the caller's database, whatever its tables
  db: { selectFrom: (from: any) => any },
  page: Q,
  ks: Keyset,
  size: Expression<number> | undefined,
): Q {
  if (!size) return page
  const direction = sql.raw(ks.descending ? 'desc' : 'asc')
  const order =
    ks.column === 'id'
      ? sql`${sql.ref('p.id')} ${direction}`
      : sql`${sql.ref(`p.${ks.column}`)} ${direction}, ${sql.ref('p.id')} ${direction}`
  const measured = db
    .selectFrom(page.as('p'))
    .selectAll('p')
    .select([
      sql<number>`coalesce(sum(${size}) over (order by ${order} rows between unbounded preceding and 1 preceding), 0)`.as(
        BEFORE,
      ),
      sql<number>`coalesce(sum(${size}) over (order by ${order} rows between unbounded preceding and 2 preceding), 0)`.as(
        BEFORE_PREVIOUS,
      ),
    ])
  const outer = db
    .selectFrom(measured.as('w'))
    .selectAll('w')
    .where(sql.ref(`w.${BEFORE_PREVIOUS}`), '<', PAGE_TEXT_BUDGET)
  const sortRef = (column: string) => sql.ref(`w.${column}`)
  const ordered = ks.column === 'id' ? outer : outer.orderBy(sortRef(ks.column), ks.descending ? 'desc' : 'asc')
  return ordered.orderBy(sortRef('id'), ks.descending ? 'desc' : 'asc') as Q
}

/** Cuts the extra row (or the rows past the text budget) and builds the next cursor from the last row's sort value and id. */
export function toPage<Row extends { id: string }, Item>(
  rows: Row[],
  ks: Keyset,
  toItem: (row: Row) => Item,
): Page<Item> {
  let end = Math.min(rows.length, ks.limit)
  if (rows.length > 0 && BEFORE in rows[0]) {
    for (let i = 1; i < end; i++) {
      if (Number((rows[i] as Record<string, unknown>)[BEFORE]) >= PAGE_TEXT_BUDGET) {
        end = i
        break
      }
    }
    for (const row of rows) {
      delete (row as Record<string, unknown>)[BEFORE]
      delete (row as Record<string, unknown>)[BEFORE_PREVIOUS]
    }
  }
  const hasMore = rows.length > end
  const pageRows = hasMore ? rows.slice(0, end) : rows
  const last = pageRows[pageRows.length - 1]
  const next =
    hasMore && last
      ? encodeCursor(ks.sort, (last as Record<string, unknown>)[ks.column] as string | number, last.id)
      : null
  return { items: pageRows.map(toItem), pagination: { has_more: hasMore, next_cursor: next } }
}

function encodeCursor(sort: string, value: string | number, id: string): string {
  return Buffer.from(JSON.stringify([sort, value, id])).toString('base64url')
}

const cursorError = (why: string) =>
  new AppError('bad_request', `page_after: ${why}`, [{ field: 'page_after', message: why }])

function decodeCursor(cursor: string): { sort: string; value: string | number; id: string } {
  let decoded: unknown
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))
  } catch {
    throw cursorError('not a valid cursor')
  }
  if (
    !Array.isArray(decoded) ||
    decoded.length !== 3 ||
    typeof decoded[0] !== 'string' ||
    !(typeof decoded[1] === 'string' || typeof decoded[1] === 'number') ||
    typeof decoded[2] !== 'string'
  ) {
    throw cursorError('not a valid cursor')
  }
  return { sort: decoded[0], value: decoded[1], id: decoded[2] }
}
