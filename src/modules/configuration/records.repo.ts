import { type Kysely, sql } from 'kysely'
import type { EvidenceRow, ModelRow, Tables, UseCaseRow, VendorRow } from '../../db/tables.js'
import { catalogItems } from '../../shared/catalog.js'
import { nameKey } from '../../shared/search.js'
import { modelCatalog } from '../models/models.service.js'
import type { StoredAnswers } from '../questionnaires/questionnaire-answers.js'
import { useCaseCatalog } from '../use-cases/use-cases.service.js'
import { vendorCatalog } from '../vendors/vendors.service.js'
import type { Static, TObject } from 'typebox'
import { type EvidenceRecord, ModelRecord, type RecordOwner, UseCaseRecord, VendorRecord } from './records.schemas.js'

type Db = Kysely<Tables>
type Obj = Record<string, unknown>

/** Records read and rendered at a time: what one NDJSON entry of an export holds. */
export const RECORDS_PAGE = 200

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/** Evidence's natural key: its content (sha256) or URL, and its title. */
export const evidenceKey = (row: { sha256: string | null; url: string | null; title: string | null }) =>
  `${row.sha256 ?? row.url ?? ''} ${row.title ?? ''}`

/** A record's owner by natural key: a user by email, a team by name. */
async function owners(db: Db, tenantId: string, items: Obj[]): Promise<(RecordOwner | null)[]> {
  const userIds = items
    .map((i) => i.owner as { owner_id: string; owner_type: string } | null)
    .filter((o) => o?.owner_type === 'user')
    .map((o) => o!.owner_id)
  const emails = new Map(
    userIds.length === 0
      ? []
      : (
          await db
            .selectFrom('users')
            .select(['id', 'email'])
            .where('tenant_id', '=', tenantId)
            .where('id', 'in', userIds)
            .execute()
        ).map((u) => [u.id, u.email]),
  )
  return items.map((i) => {
    const owner = i.owner as { owner_id: string; owner_type: string; name: string } | null
    if (!owner) return null
    return owner.owner_type === 'user' ? { email: emails.get(owner.owner_id) ?? '' } : { team: owner.name }
  })
}

const customFields = (item: Obj) =>
  Object.fromEntries(
    [...((item.custom_fields ?? []) as { name: string; value: unknown }[])]
      .sort((a, b) => byText(nameKey(a.name), nameKey(b.name)))
      .map((f) => [f.name, f.value]),
  ) as VendorRecord['custom_fields']

/** Names linked to each of `ids` through `table` (owner column → member table), sorted. */
async function linkedNames(
  db: Db,
  tenantId: string,
  table: 'use_case_models' | 'use_case_vendors' | 'model_vendors',
  ownerColumn: 'use_case_id' | 'model_id',
  memberColumn: 'model_id' | 'vendor_id',
  memberTable: 'models' | 'vendors',
  ids: string[],
): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>()
  if (ids.length === 0) return out
  const rows = (await db
    .selectFrom(`${table} as l` as 'use_case_models as l')
    .innerJoin(`${memberTable} as m` as 'models as m', (j) =>
      j.onRef('m.id', '=', sql.ref(`l.${memberColumn}`)).onRef('m.tenant_id', '=', 'l.tenant_id'),
    )
    .select([sql<string>`${sql.ref(`l.${ownerColumn}`)}`.as('owner'), 'm.name', 'm.name_key'])
    .where('l.tenant_id', '=', tenantId)
    .where(sql.ref(`l.${ownerColumn}`), 'in', ids)
    .orderBy('m.name_key')
    .execute()) as { owner: string; name: string }[]
  for (const row of rows) out.set(row.owner, [...(out.get(row.owner) ?? []), row.name])
  return out
}

/** One page of a named table after `after` (a name_key), in name order. */
export function namedPage<T extends 'use_cases' | 'models' | 'vendors'>(
  db: Db,
  tenantId: string,
  table: T,
  after: string | null,
  limit = RECORDS_PAGE,
) {
  let q = db
    .selectFrom(table as 'vendors')
    .selectAll()
    .where('tenant_id', '=', tenantId)
  if (after !== null) q = q.where('name_key', '>', after)
  return q.orderBy('name_key').limit(limit).execute() as unknown as Promise<
    T extends 'use_cases' ? UseCaseRow[] : T extends 'models' ? ModelRow[] : VendorRow[]
  >
}

/** The row of a named record by its name, compared as names are. */
export function findNamed<T extends 'use_cases' | 'models' | 'vendors'>(
  db: Db,
  tenantId: string,
  table: T,
  name: string,
) {
  return db
    .selectFrom(table as 'vendors')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('name_key', '=', nameKey(name))
    .executeTakeFirst() as unknown as Promise<
    (T extends 'use_cases' ? UseCaseRow : T extends 'models' ? ModelRow : VendorRow) | undefined
  >
}

/** The rows of named records by their names, compared as names are. */
export function findNamedMany<T extends 'use_cases' | 'models' | 'vendors'>(
  db: Db,
  tenantId: string,
  table: T,
  names: string[],
) {
  return db
    .selectFrom(table as 'vendors')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('name_key', 'in', [...new Set(names.map(nameKey))])
    .execute() as unknown as Promise<(T extends 'use_cases' ? UseCaseRow : T extends 'models' ? ModelRow : VendorRow)[]>
}

/**
 * A record in its bundle schema's field order: each field the item's value of the same name unless `own` renders it,
 * so a field the family and the bundle schema both declare is exported without a line here.
 */
function inRecordOrder<S extends TObject>(schema: S, item: Obj, own: Obj): Static<S> {
  const record: Obj = {}
  for (const key of Object.keys(schema.properties)) record[key] = key in own ? own[key] : item[key]
  return record as Static<S>
}

export async function renderVendors(db: Db, tenantId: string, rows: VendorRow[]): Promise<VendorRecord[]> {
  const items = (await catalogItems(vendorCatalog, db, tenantId, rows)) as unknown as Obj[]
  const who = await owners(db, tenantId, items)
  return items.map((v, i) => inRecordOrder(VendorRecord, v, { owner: who[i], custom_fields: customFields(v) }))
}

export async function renderModels(db: Db, tenantId: string, rows: ModelRow[]): Promise<ModelRecord[]> {
  const items = (await catalogItems(modelCatalog, db, tenantId, rows)) as unknown as Obj[]
  const who = await owners(db, tenantId, items)
  const ids = rows.map((r) => r.id)
  const vendors = await linkedNames(db, tenantId, 'model_vendors', 'model_id', 'vendor_id', 'vendors', ids)
  return items.map((m, i) =>
    inRecordOrder(ModelRecord, m, {
      owner: who[i],
      custom_fields: customFields(m),
      vendors: vendors.get(rows[i].id) ?? [],
    }),
  )
}

export const renderEvidence = (row: EvidenceRow): EvidenceRecord => ({
  key: evidenceKey(row),
  kind: row.kind as 'file' | 'link',
  title: row.title,
  url: row.url,
  file_name: row.file_name,
  content_type: row.content_type,
  size: row.size === null ? null : Number(row.size),
  sha256: row.sha256,
})

const evidenceOrder = sql<string>`coalesce(sha256, url, '')`
const titleOrder = sql<string>`coalesce(title, '')`

/** One page of evidence in natural-key order after (content or URL, title, id). */
export function evidencePage(db: Db, tenantId: string, after: [string, string, string] | null, limit = RECORDS_PAGE) {
  let q = db.selectFrom('evidence').selectAll().where('tenant_id', '=', tenantId)
  if (after !== null)
    q = q.where(sql<boolean>`(${evidenceOrder}, ${titleOrder}, id) > (${after[0]}, ${after[1]}, ${after[2]})`)
  return q.orderBy(evidenceOrder).orderBy(titleOrder).orderBy('id').limit(limit).execute()
}

/** The evidence of a tenant with this natural key, if any. */
export function findEvidenceByKey(db: Db, tenantId: string, record: EvidenceRecord) {
  let q = db.selectFrom('evidence').selectAll().where('tenant_id', '=', tenantId).where('kind', '=', record.kind)
  q = record.title === null ? q.where('title', 'is', null) : q.where('title', '=', record.title)
  q = record.sha256 !== null ? q.where('sha256', '=', record.sha256) : q.where('url', '=', record.url ?? '')
  return q.orderBy('id').limit(1).executeTakeFirst()
}

/** Evidence whose natural key (content or URL, a space, title) is `key`. */
export function evidenceKeyWhere(key: string) {
  const space = key.indexOf(' ')
  const what = key.slice(0, space)
  const title = key.slice(space + 1)
  // biome-ignore lint/suspicious/noExplicitAny: a Kysely expression builder over the evidence table
  return (eb: any) =>
    eb.and([
      eb.or([eb('sha256', '=', what), eb('url', '=', what)]),
      title === '' ? eb.or([eb('title', 'is', null), eb('title', '=', '')]) : eb('title', '=', title),
    ])
}

/** One page of completed evidence content, in sha256 order after `after`. */
export function blobPage(db: Db, tenantId: string, after: string | null, limit = RECORDS_PAGE) {
  let q = db.selectFrom('evidence_blobs').selectAll().where('tenant_id', '=', tenantId).where('sha256', 'is not', null)
  if (after !== null) q = q.where('sha256', '>', after)
  return q.orderBy('sha256').limit(limit).execute()
}

async function evidenceKeys(db: Db, tenantId: string, ids: string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map()
  const rows = await db
    .selectFrom('evidence')
    .select(['id', 'sha256', 'url', 'title'])
    .where('tenant_id', '=', tenantId)
    .where('id', 'in', [...new Set(ids)])
    .execute()
  return new Map(rows.map((r) => [r.id, evidenceKey(r)]))
}

export async function renderUseCases(db: Db, tenantId: string, rows: UseCaseRow[]): Promise<UseCaseRecord[]> {
  if (rows.length === 0) return []
  const items = (await catalogItems(useCaseCatalog, db, tenantId, rows)) as unknown as Obj[]
  const who = await owners(db, tenantId, items)
  const ids = rows.map((r) => r.id)
  const models = await linkedNames(db, tenantId, 'use_case_models', 'use_case_id', 'model_id', 'models', ids)
  const vendors = await linkedNames(db, tenantId, 'use_case_vendors', 'use_case_id', 'vendor_id', 'vendors', ids)
  const attached = await db
    .selectFrom('use_case_questionnaires as a')
    .innerJoin('questionnaires as q', 'q.id', 'a.questionnaire_id')
    .select(['a.use_case_id', 'q.key', 'q.version', 'a.answers'])
    .where('a.tenant_id', '=', tenantId)
    .where('a.use_case_id', 'in', ids)
    .orderBy('q.key')
    .execute()
  const packs = await db
    .selectFrom('use_case_policy_packs as a')
    .innerJoin('policy_packs as p', 'p.id', 'a.policy_pack_id')
    .select(['a.use_case_id', 'p.key', 'p.version', 'a.due_date'])
    .where('a.tenant_id', '=', tenantId)
    .where('a.use_case_id', 'in', ids)
    .orderBy('p.key')
    .execute()
  const controls = await db
    .selectFrom('use_case_controls')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('use_case_id', 'in', ids)
    .orderBy('control_key')
    .orderBy('control_version')
    .execute()
  const links =
    controls.length === 0
      ? []
      : await db
          .selectFrom('use_case_control_evidence')
          .select(['use_case_control_id', 'evidence_id', 'requirement'])
          .where('tenant_id', '=', tenantId)
          .where('use_case_id', 'in', ids)
          .execute()
  const answers = attached.map((a) => JSON.parse(a.answers) as StoredAnswers)
  const keys = await evidenceKeys(db, tenantId, [
    ...answers.flatMap((set) => Object.values(set).flatMap((a) => a.evidence_ids ?? [])),
    ...links.map((l) => l.evidence_id),
  ])
  const keyOf = (id: string) => keys.get(id) ?? id
  return items.map((u, i) => {
    const id = rows[i].id
    return inRecordOrder(UseCaseRecord, u, {
      owner: who[i],
      custom_fields: customFields(u),
      models: models.get(id) ?? [],
      vendors: vendors.get(id) ?? [],
      questionnaires: attached.flatMap((a, n) =>
        a.use_case_id !== id
          ? []
          : [
              {
                questionnaire: `${a.key}+${a.version}`,
                answers: Object.entries(answers[n])
                  .sort(([x], [y]) => byText(x, y))
                  .map(([question_id, answer]) => ({
                    question_id,
                    section_id: answer.section_id,
                    value: answer.value,
                    evidence: (answer.evidence_ids ?? []).map(keyOf).sort(byText),
                  })),
              },
            ],
      ),
      policy_packs: packs
        .filter((p) => p.use_case_id === id)
        .map((p) => ({ pack: `${p.key}+${p.version}`, due_date: p.due_date })),
      controls: controls
        .filter((c) => c.use_case_id === id)
        .map((c) => ({
          control: `${c.control_key}+${c.control_version}`,
          status: c.status as UseCaseRecord['controls'][number]['status'],
          notes: c.notes,
          due_date: c.due_date,
          evidence: links
            .filter((l) => l.use_case_control_id === c.id)
            .map((l) => ({
              key: keyOf(l.evidence_id),
              requirement: l.requirement === null ? null : Number(l.requirement),
            }))
            .sort((a, b) => byText(`${a.key} ${a.requirement}`, `${b.key} ${b.requirement}`)),
        })),
    })
  })
}
