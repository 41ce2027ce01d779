import { type Kysely, sql } from 'kysely'
import { anyOf, anyOfValue } from '../db/any-of.js'
import type { Database, DialectName } from '../db/create-db.js'
import type { AuditedDatabase } from './audit-append.js'
import type { Tables } from '../db/tables.js'
import { notFound } from '../http/errors.js'
import type { Ctx } from './context.js'
import {
  customFieldValueFilter,
  decorateGoverned,
  type EntityType,
  type GovernedInput,
  removeCustomFieldValues,
  resolveOwner,
  writeCustomFieldValues,
} from './governed.js'
import { type IdPrefix, newId, now } from './ids.js'
import type { ItemCache, ItemView, PageBody, PageIds, RenderedRow } from '../read-model/index.js'
import { utcDay } from './today.js'
import { itemBody, itemJson, type ItemText, itemText, type JsonField, pageBody } from './item-json.js'
import {
  type AuditEntry,
  auditedUpdate,
  createdChanges,
  forChange,
  forChangeInMutation,
  type MutationOutcome,
  runMutation,
  runRecordedMutation,
  type Tx,
} from './mutation.js'
import {
  applyKeyset,
  keyset,
  LONG_TEXT,
  type ListQuery,
  type Page,
  pageTextOf,
  textSize,
  toPage,
  withinTextBudget,
} from './pagination.js'
import { type UniqueField, uniqueName } from './records.js'
import { containsText } from './search.js'

/**
 * What every catalog family (use cases, models, vendors, risk types, users, teams, custom fields) shares:
 * tenant-scoped find and list with keyset pages, create/update/delete in one audited transaction, the
 * unique name (or email), and for governed records their owner and custom field values. A family declares
 * its table, columns, filters and what is really its own; its routes stay literal in its routes file.
 */

// The queries are written once for every family's table, so they address tables and columns by name.
// biome-ignore lint/suspicious/noExplicitAny: the tables are named by each family's spec at run time
type AnyDb = Kysely<any>
export type Columns<Row> = Omit<Row, 'id' | 'tenant_id' | 'created_at' | 'updated_at'>

interface BaseRow {
  id: string
  tenant_id: string
  created_at: string
  updated_at: string
}

/** What named families share: sorting and `q` search by name, a unique name. */
export const NAMED = {
  sortColumns: { name: 'name_key', created_at: 'created_at', updated_at: 'updated_at' },
  searchColumns: ['name_key'],
  uniqueValue: (input: { name?: string | null }) => input.name ?? undefined,
} as const

export interface CatalogQuery {
  sort?: string
  page_limit?: number
  page_after?: string
  q?: string
  owner_id?: string
  custom_field_id?: string
  custom_field_value?: string
}

export interface CatalogSpec<
  Row extends BaseRow,
  Item extends { id: string },
  Create,
  Update,
  Query extends CatalogQuery,
> {
  table: UniqueField['table']
  /** Words for messages: `use case`. */
  label: string
  /** Audit resource_type and action prefix: `use_case`. */
  resourceType: string
  idPrefix: IdPrefix
  /** Item fields whose changes the audit record lists. */
  audited: readonly (keyof Item & string)[]
  /** Sort fields (besides id) and their columns. */
  sortColumns: Record<string, string>
  /** Lower-cased columns `q` searches (any of them). */
  searchColumns: readonly string[]
  /** The field that must be unique per tenant (default `name`), and its value in a create or update body. */
  uniqueField?: 'email'
  uniqueValue(input: Create | Update): string | undefined
  /** The columns of a new record (the transaction is there for checks and derived values). */
  create(input: Create, ctx: Ctx, tx: Tx): Columns<Row> | Promise<Columns<Row>>
  /** The columns a PATCH body sets: `null` clears, absent stays. */
  update(input: Update, current: Row, tx: Tx, ctx: Ctx): Partial<Row> | Promise<Partial<Row>>
  toItem(row: Row): Item
  /** The family's own list filters. */
  filter?(q: ListQuery, query: Query): ListQuery
  /** Fills what lives outside the row for a page of items with one query. */
  decorate?(db: Tx, tenantId: string, items: Item[]): Promise<Item[]>
  /** Writes what the body says beyond the row and values (use cases' questionnaire_ids); returns its audit entries. */
  afterWrite?(tx: Tx, ctx: Ctx, row: Row, input: Create | Update): Promise<AuditEntry[]>
  /** Refuses a delete (409) or removes what refers to the record, returning the removals' audit entries. */
  beforeDelete?(tx: Tx, ctx: Ctx, row: Row, dialect: DialectName): Promise<AuditEntry[]>
  /** What the family's audit records refer to beyond the record itself (a use case's own id as use_case_id). */
  auditRefs?(row: { id: string }): Pick<AuditEntry, 'useCaseId'>
  /** Set on records with an owner and custom field values. */
  governed?: EntityType
}

/** A family whose reads the database renders: every item field, as the SQL that gives its JSON (see item-json.ts). */
export interface JsonCatalogSpec<
  Row extends BaseRow,
  Item extends { id: string },
  Create,
  Update,
  Query extends CatalogQuery,
> extends CatalogSpec<Row, Item, Create, Update, Query> {
  json: { [K in keyof Item]-?: JsonField }
  /**
   * Audited fields that no list filter, search or sort of the family reads: an update of only these leaves every
   * list page holding the same records in the same order, so kept pages stay (ItemCache).
   */
  unlisted: readonly (keyof Item & string)[]
  /** The queries whose rows also depend on today's date (UTC): their kept pages are kept per day. */
  daily?: (query: Query) => boolean
}

export type CatalogService<Item, Create, Update, Query> = {
  list(ctx: Ctx, query: Query): Promise<Page<Item>>
  get(ctx: Ctx, id: string): Promise<Item>
  create(ctx: Ctx, input: Create): Promise<Item>
  update(ctx: Ctx, id: string, input: Update): Promise<Item>
  delete(ctx: Ctx, id: string): Promise<void>
}

/**
 * The tenant test of a lookup by id. Written as an expression it is no index's condition, so the id alone chooses the
 * row (primary key) and the tenant is tested on what it finds. Written plainly, a planner without statistics of the
 * tenant's records (filled since the last ANALYZE: a new tenant, a bulk import) read all of them through an index of
 * (tenant, owner, id) for one id, a cost that grows with the tenant.
 */
const tenantOf = (table: string) => sql<string>`${sql.ref(`${table}.tenant_id`)} || ''`

export function createCatalogService<
  Row extends BaseRow,
  Item extends { id: string },
  Create extends object,
  Update extends object,
  Query extends CatalogQuery,
>(
  database: AuditedDatabase,
  spec: CatalogSpec<Row, Item, Create, Update, Query>,
  itemCache: ItemCache | null = null,
): CatalogService<Item, Create, Update, Query> {
  const { db } = database
  const tenant = tenantOf(spec.table)
  const select = (conn: Tx, tenantId: string, id: string) =>
    (conn as AnyDb).selectFrom(spec.table).selectAll().where(tenant, '=', tenantId).where('id', '=', id)
  const find = (conn: Tx, tenantId: string, id: string) =>
    select(conn, tenantId, id).executeTakeFirst() as Promise<Row | undefined>
  // A read-modify-write holds the row (see forChange), so a concurrent update of the same record waits instead
  // of diffing (and auditing) against a stale copy.
  const lock = (tx: Tx, tenantId: string, id: string) =>
    forChange(tx, select(tx, tenantId, id)).executeTakeFirst() as Promise<Row | undefined>

  const decorate = (conn: Tx, tenantId: string, items: Item[]) => decorateItems(spec, conn, tenantId, items)

  // A family the database renders: its item as one selected column, in the two reads its writes make, compiled once.
  const itemSql =
    'json' in spec ? renderedItem(database, spec as JsonCatalogSpec<Row, Item, Create, Update, Query>) : null
  const writtenItem =
    itemSql &&
    (db as AnyDb).selectFrom(spec.table).select(itemSql).where(tenant, '=', '').where('id', '=', '').compile()
  const lockedItem = itemSql && forChangeInMutation(database.dialect, select(db, '', '').select(itemSql)).compile()

  /** The item of a record whose writes are all done: rendered by the database in one query, else decorated. */
  const written = async (tx: Tx, tenantId: string, row: Row): Promise<Item> => {
    if (!writtenItem) return (await decorate(tx, tenantId, [spec.toItem(row)]))[0]
    const [{ item }] = (await tx.executeQuery<{ item: string }>({ ...writtenItem, parameters: [tenantId, row.id] }))
      .rows
    return JSON.parse(item) as Item
  }
  /**
   * The row a change locks, and its item before the change: read together where the database renders the item, so
   * that it costs no decoration queries (owner name, custom field values, questionnaire ids), a third of a PATCH's work.
   */
  const lockWithItem = async (
    tx: Tx,
    tenantId: string,
    id: string,
  ): Promise<{ current: Row; before: Item } | undefined> => {
    if (!lockedItem) {
      const current = await lock(tx, tenantId, id)
      return current && { current, before: (await decorate(tx, tenantId, [spec.toItem(current)]))[0] }
    }
    const [read] = (await tx.executeQuery<Row & { item: string }>({ ...lockedItem, parameters: [tenantId, id] })).rows
    if (!read) return undefined
    const { item, ...current } = read
    return { current: current as unknown as Row, before: JSON.parse(item) as Item }
  }

  const auditOf = (action: string, row: { id: string; name?: string | null; email?: string }): AuditEntry => ({
    action: `${spec.resourceType}.${action}`,
    resourceType: spec.resourceType,
    resourceId: row.id,
    resourceName: row.name ?? row.email ?? null,
    ...spec.auditRefs?.(row),
  })

  /**
   * The item after an update. A body of row fields only cannot change what decorate fills in (owner name, custom
   * field values, attachments), so the item before, with the changed row fields, is the item after: three queries
   * fewer for the common PATCH. A body naming anything else is decorated again.
   */
  const afterUpdate = async (
    current: Row,
    columns: Partial<Row>,
    before: Item,
    input: Update,
    decorated: () => Promise<Item[]>,
  ): Promise<Item> => {
    if (!namesRowFieldsOnly(input, columns)) return (await decorated())[0]
    const was = spec.toItem(current) as Record<string, unknown>
    const now = spec.toItem({ ...current, ...columns }) as Record<string, unknown>
    const changed = Object.keys(now).filter((field) => JSON.stringify(was[field]) !== JSON.stringify(now[field]))
    return { ...before, ...Object.fromEntries(changed.map((field) => [field, now[field]])) }
  }

  const unique: UniqueField = { table: spec.table, what: spec.label, field: spec.uniqueField ?? 'name' }
  const guarded = <T>(ctx: Ctx, input: Create | Update, work: () => Promise<T>) =>
    uniqueName(db, ctx, unique, spec.uniqueValue(input), work)

  return {
    async list(ctx, query) {
      const ks = keyset(query, spec.sortColumns)
      const q = (await listQuery(db, spec, ctx, query)).selectAll()
      const page = toPage(
        (await withinTextBudget(db, applyKeyset(q, ks), ks, pageTextOf(spec.table)).execute()) as Row[],
        ks,
        spec.toItem,
      )
      return { ...page, items: await decorate(db, ctx.tenantId, page.items) }
    },

    async get(ctx, id) {
      const row = await find(db, ctx.tenantId, id)
      if (!row) throw notFound(spec.label, id)
      return (await decorate(db, ctx.tenantId, [spec.toItem(row)]))[0]
    },

    async create(ctx, input) {
      return guarded(ctx, input, () =>
        runMutation(database, ctx, async (tx) => {
          const at = now()
          const governed = input as GovernedInput
          const owner = spec.governed ? await resolveOwner(tx, ctx.tenantId, governed.owner) : {}
          const row = {
            id: newId(spec.idPrefix),
            tenant_id: ctx.tenantId,
            ...(await spec.create(input, ctx, tx)),
            ...owner,
            created_at: at,
            updated_at: at,
          } as unknown as Row
          await (tx as AnyDb).insertInto(spec.table).values(row).execute()
          const valueChanges = spec.governed
            ? await writeCustomFieldValues(tx, ctx.tenantId, spec.governed, row.id, governed.custom_fields, true)
            : {}
          const extra = spec.afterWrite ? await spec.afterWrite(tx, ctx, row, input) : []
          // As on update: a body of row fields only leaves nothing for decorate to fill in.
          const created = namesRowFieldsOnly(input, row) ? spec.toItem(row) : await written(tx, ctx.tenantId, row)
          return {
            result: created,
            audit: [
              {
                ...auditOf('created', row as never),
                changes: { ...createdChanges(created, spec.audited), ...valueChanges },
              },
              ...extra,
            ],
          }
        }),
      )
    },

    async update(ctx, id, input) {
      // Where the database renders the item and reads keep it rendered, the update's statement renders it too.
      const mark = itemSql ? itemCache?.mark(ctx.tenantId) : undefined
      const { result, appended } = await guarded(ctx, input, () =>
        runRecordedMutation(
          database,
          ctx,
          async (tx): Promise<MutationOutcome<{ item: Item; rendered?: RenderedRow }>> => {
            const locked = await lockWithItem(tx, ctx.tenantId, id)
            if (!locked) throw notFound(spec.label, id)
            const { current, before } = locked
            const governed = input as GovernedInput
            const columns = {
              ...(await spec.update(input, current, tx, ctx)),
              ...(spec.governed && (await resolveOwner(tx, ctx.tenantId, governed.owner))),
            }
            const valueChanges = spec.governed
              ? await writeCustomFieldValues(tx, ctx.tenantId, spec.governed, id, governed.custom_fields, false)
              : {}
            const extra = spec.afterWrite ? await spec.afterWrite(tx, ctx, { ...current, ...columns }, input) : []
            const after = await afterUpdate(current, columns, before, input, () =>
              decorate(tx, ctx.tenantId, [spec.toItem({ ...current, ...columns })]),
            )
            type Stamped = Item & { updated_at: string }
            const outcome = await auditedUpdate(
              {
                before: before as Stamped,
                after: after as Stamped,
                fields: spec.audited as readonly (keyof Stamped & string)[],
                audit: auditOf('updated', after as never),
                alsoChanged: valueChanges,
                // The record as decorated after the other writes (an attached set replaced shows in it).
                unchanged: after as Stamped,
              },
              async (updatedAt: string) => {
                const update = (tx as AnyDb)
                  .updateTable(spec.table)
                  .set({ ...columns, updated_at: updatedAt })
                  .where(tenant, '=', ctx.tenantId)
                  .where('id', '=', id)
                // The last write of the change: what it returns is the record as committed.
                const rendered: RenderedRow | undefined =
                  mark && itemSql
                    ? {
                        id,
                        updatedAt,
                        text: itemText(
                          ((await update.returning(itemSql).executeTakeFirstOrThrow()) as { item: string }).item,
                        ),
                      }
                    : (await update.execute(), undefined)
                return rendered
              },
            )
            // Nothing of the record itself changed: no update record, no new updated_at (the other records stay).
            return {
              result: { item: outcome.result, rendered: outcome.written },
              audit: [...[outcome.audit].flat(), ...extra],
            }
          },
          [id],
        ),
      )
      if (mark && result.rendered) itemCache!.putWritten(mark, spec.resourceType, result.rendered, appended[0].seq)
      return result.item
    },

    async delete(ctx, id) {
      await runMutation(
        database,
        ctx,
        async (tx) => {
          const current = await lock(tx, ctx.tenantId, id)
          if (!current) throw notFound(spec.label, id)
          const removed = spec.beforeDelete ? await spec.beforeDelete(tx, ctx, current, database.dialect) : []
          if (spec.governed) await removeCustomFieldValues(tx, ctx.tenantId, id)
          await (tx as AnyDb).deleteFrom(spec.table).where(tenant, '=', ctx.tenantId).where('id', '=', id).execute()
          return { result: undefined, audit: [...removed, auditOf('deleted', current as never)] }
        },
        [id],
      )
    },
  }
}

/** The family's records of the tenant that a list query's search and filters select (no columns chosen yet). */
async function listQuery<Query extends CatalogQuery>(
  db: Kysely<Tables>,
  // biome-ignore lint/suspicious/noExplicitAny: a spec of any family, whatever its row and item types
  spec: CatalogSpec<any, any, any, any, Query>,
  ctx: Ctx,
  query: Query,
): Promise<ListQuery> {
  let q: ListQuery = (db as AnyDb).selectFrom(spec.table).where('tenant_id', '=', ctx.tenantId)
  if (query.q !== undefined) {
    const text = query.q
    q = q.where((eb) => eb.or(spec.searchColumns.map((column) => containsText(column, text))))
  }
  if (spec.governed) {
    if (query.owner_id !== undefined) q = q.where('owner_id', '=', query.owner_id)
    q = await customFieldValueFilter(db, ctx.tenantId, spec.governed, q, query)
  }
  return spec.filter ? spec.filter(q, query) : q
}

/** The list page and the get of a family, as the JSON text the database renders: what its GET routes send. */
export function createJsonReads<
  Row extends BaseRow,
  Item extends { id: string },
  Create,
  Update,
  Query extends CatalogQuery,
>(database: Database, spec: JsonCatalogSpec<Row, Item, Create, Update, Query>, itemCache: ItemCache | null) {
  const { db, dialect } = database
  const type = spec.resourceType
  const item = renderedItem(database, spec)
  const rendered = (db as AnyDb)
    .selectFrom(spec.table)
    .select(['id', 'updated_at', item])
    .where(tenantOf(spec.table), '=', '')
  const getQuery = rendered.where('id', '=', '').compile()
  // Any number of ids in one parameter, so that one statement text (prepared once per connection) serves every batch.
  const someQuery = rendered.where(anyOf(dialect, `${spec.table}.id`)).compile()
  type Rendered = { id: string; updated_at: string; item: string }
  itemCache?.keepPagesAcross(type, spec.unlisted)

  /** The rendered items of these ids (those that exist); one id with the GET's own statement. */
  const read = async (ctx: Ctx, ids: string[]): Promise<RenderedRow[]> => {
    const query =
      ids.length === 1
        ? { ...getQuery, parameters: [ctx.tenantId, ids[0]] }
        : { ...someQuery, parameters: [ctx.tenantId, anyOfValue(dialect, ids)] }
    const { rows } = await db.executeQuery<Rendered>(query)
    return rows.map((row) => ({ id: row.id, updatedAt: row.updated_at, text: itemText(row.item) }))
  }
  /** The rendered items of these ids (those that exist), by id; kept for later reads of `view` when given. */
  const render = async (ctx: Ctx, ids: string[], view: ItemView | null): Promise<Map<string, ItemText>> =>
    view
      ? itemCache!.render(view, type, ids, (some) => read(ctx, some))
      : new Map((await read(ctx, ids)).map((row) => [row.id, row.text]))

  return {
    /** A page: its records' ids in order from the list query, their JSON from the item cache or rendered for it. */
    async listJson(ctx: Ctx, query: Query, readAt: number | null = null): Promise<Buffer> {
      const ks = keyset(query, spec.sortColumns)
      if (!itemCache) {
        const q = (await listQuery(db, spec, ctx, query)).select([...new Set(['id', ks.column]), item])
        const { rows } = await db.executeQuery<{ id: string; item: string }>(
          withinTextBudget(db, applyKeyset(q, ks), ks, textSize('p', ['item'])).compile(),
        )
        const page = toPage(rows, ks, (row) => itemText(row.item))
        return pageBody(page.items, page.pagination)
      }
      const view = await itemCache.view(ctx.tenantId, readAt ?? undefined)
      // Sorted by updated_at, every update moves its record: those pages are never kept.
      const pageKey =
        ks.column === 'updated_at' ? null : `${JSON.stringify(query)}${spec.daily?.(query) ? ` ${utcDay()}` : ''}`
      let page: (PageIds & { body?: PageBody }) | undefined =
        pageKey === null ? undefined : itemCache.getPage(view, type, pageKey)
      // The versions the list query read, when it ran: a kept page and kept items are both current in the view.
      let versions: string[] | undefined
      if (!page) {
        const long = LONG_TEXT[spec.table]
        const q = (await listQuery(db, spec, ctx, query))
          .select([...new Set(['id', 'updated_at', ks.column])])
          .$if(long !== undefined, (qb) => qb.select(textSize(spec.table, long!).as('page_text')))
        const { rows } = await db.executeQuery<{ id: string; updated_at: string }>(
          withinTextBudget(
            db,
            applyKeyset(q, ks),
            ks,
            long ? sql<number>`${sql.ref('p.page_text')}` : undefined,
          ).compile(),
        )
        const read = toPage(rows, ks, (row) => row)
        page = { ids: read.items.map((row) => row.id), pagination: read.pagination }
        versions = read.items.map((row) => row.updated_at)
        if (pageKey !== null) itemCache.putPage(view, type, pageKey, page)
      }
      const { ids, body } = page
      // Kept only if rendered from the version the list read: a page never mixes a record's order and older content.
      const kept = ids.map((id, i) => itemCache.get(view, type, id, versions?.[i]))
      if (body && kept.every((text, i) => text === body.texts[i])) return body.bytes
      const missing = ids.filter((_id, i) => kept[i] === undefined)
      const fresh = missing.length > 0 ? await render(ctx, missing, view) : undefined
      // A record deleted between the two statements is left out, as a list after the delete would.
      const items = ids.flatMap((id, i) => kept[i] ?? fresh!.get(id) ?? [])
      const bytes = pageBody(items, page.pagination)
      if (pageKey !== null && items.length === ids.length)
        itemCache.putPageBody(view, type, pageKey, page, { texts: items, bytes })
      return bytes
    },

    async getJson(ctx: Ctx, id: string, readAt: number | null = null): Promise<Buffer> {
      const view = itemCache ? await itemCache.view(ctx.tenantId, readAt ?? undefined) : null
      const text = (view ? itemCache!.get(view, type, id) : undefined) ?? (await render(ctx, [id], view)).get(id)
      if (text === undefined) throw notFound(spec.label, id)
      return itemBody(text)
    },

    /** The JSON text getJson sends for each of `ids` that exists, by id (webhook events read a batch's records at once). */
    getJsonMany: async (ctx: Ctx, ids: string[]): Promise<Map<string, string>> =>
      new Map([...(await render(ctx, ids, null))].map(([id, text]) => [id, text.json])),
  }
}

/** The family's item as JSON text, selected `as item`. */
// biome-ignore lint/suspicious/noExplicitAny: a spec of any family, whatever its row and item types
function renderedItem(database: Database, spec: JsonCatalogSpec<any, any, any, any, any>) {
  // The item's SQL has no parameters (its keys are literals): compiled to text once, it is not rebuilt per request.
  return sql.raw<string>(itemJson(spec.json, spec.table, database.dialect).compile(database.db).sql).as('item')
}

interface Decoration<Item> {
  governed?: EntityType
  decorate?(db: Tx, tenantId: string, items: Item[]): Promise<Item[]>
}

async function decorateItems<Item extends { id: string }>(
  spec: Decoration<Item>,
  conn: Tx,
  tenantId: string,
  items: Item[],
): Promise<Item[]> {
  const governed = spec.governed ? ((await decorateGoverned(conn, tenantId, items as never[])) as Item[]) : items
  return spec.decorate ? spec.decorate(conn, tenantId, governed) : governed
}

/** A family's items for rows read elsewhere (relationship lists), complete with what lives outside the row. */
export function catalogItems<Row, Item extends { id: string }>(
  spec: Decoration<Item> & { toItem(row: Row): Item },
  conn: Tx,
  tenantId: string,
  rows: Row[],
): Promise<Item[]> {
  return decorateItems(
    spec,
    conn,
    tenantId,
    rows.map((row) => spec.toItem(row)),
  )
}

/** True when every field of a body is a column of the row it writes: then nothing decorate fills in can change. */
function namesRowFieldsOnly(input: object, columns: object): boolean {
  return Object.keys(input).every((field) => field in columns)
}
