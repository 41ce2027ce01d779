import type { Kysely } from 'kysely'
import type { PolicyControlBaseRow, PolicyControlVersionRow, Tables } from '../../db/tables.js'
import { applyKeyset, type Keyset, pageTextOf, withinTextBudget } from '../../shared/pagination.js'
import { containsText } from '../../shared/search.js'
import type {
  PolicyControlBaseListQuery,
  PolicyControlListQuery,
  PolicyControlVersionListQuery,
} from './policy-controls.schemas.js'
import { forChange } from '../../shared/mutation.js'

type Db = Kysely<Tables>

export const BASE_SORT_COLUMNS = { key: 'key', name: 'name_key', created_at: 'created_at' }
export const CONTROL_SORT_COLUMNS = { key: 'key', name: 'name_key' }

// --- bases ---

export function findBase(db: Db, tenantId: string, id: string): Promise<PolicyControlBaseRow | undefined> {
  return forChange(
    db,
    db.selectFrom('policy_control_bases').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id),
  ).executeTakeFirst()
}

export function findBaseByKey(db: Db, tenantId: string, key: string): Promise<PolicyControlBaseRow | undefined> {
  return db
    .selectFrom('policy_control_bases')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('key', '=', key)
    .executeTakeFirst()
}

export function listBases(
  db: Db,
  tenantId: string,
  query: PolicyControlBaseListQuery,
  ks: Keyset,
): Promise<PolicyControlBaseRow[]> {
  let q = db.selectFrom('policy_control_bases').selectAll().where('tenant_id', '=', tenantId)
  if (query.q !== undefined) q = q.where(containsText('name_key', query.q))
  if (query.key !== undefined) q = q.where('key', '=', query.key)
  if (query.archived !== undefined) q = q.where('archived', '=', query.archived ? 1 : 0)
  return applyKeyset(q, ks).execute()
}

export async function insertBase(db: Db, row: PolicyControlBaseRow): Promise<void> {
  await db.insertInto('policy_control_bases').values(row).execute()
}

export async function updateBase(
  db: Db,
  tenantId: string,
  id: string,
  changes: Partial<PolicyControlBaseRow>,
): Promise<void> {
  await db
    .updateTable('policy_control_bases')
    .set(changes)
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .execute()
}

// --- versions ---

export function findVersion(db: Db, tenantId: string, id: string): Promise<PolicyControlVersionRow | undefined> {
  return forChange(
    db,
    db.selectFrom('policy_control_versions').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id),
  ).executeTakeFirst()
}

export function findVersionByKey(
  db: Db,
  tenantId: string,
  key: string,
  version: number,
): Promise<PolicyControlVersionRow | undefined> {
  return db
    .selectFrom('policy_control_versions')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('key', '=', key)
    .where('version', '=', version)
    .executeTakeFirst()
}

export function listVersions(
  db: Db,
  tenantId: string,
  query: PolicyControlVersionListQuery,
  ks: Keyset,
): Promise<PolicyControlVersionRow[]> {
  let q = db.selectFrom('policy_control_versions').selectAll().where('tenant_id', '=', tenantId)
  if (query.base_id !== undefined) q = q.where('base_id', '=', query.base_id)
  if (query.key !== undefined) q = q.where('key', '=', query.key)
  if (query.status !== undefined) q = q.where('status', '=', query.status)
  return withinTextBudget(db, applyKeyset(q, ks), ks, pageTextOf('policy_control_versions')).execute()
}

export async function maxVersion(db: Db, tenantId: string, baseId: string): Promise<number> {
  const row = await db
    .selectFrom('policy_control_versions')
    .select((eb) => eb.fn.max('version').as('max'))
    .where('tenant_id', '=', tenantId)
    .where('base_id', '=', baseId)
    .executeTakeFirst()
  return Number(row?.max ?? 0)
}

export async function insertVersion(db: Db, row: PolicyControlVersionRow): Promise<void> {
  await db.insertInto('policy_control_versions').values(row).execute()
}

export async function updateVersion(
  db: Db,
  tenantId: string,
  id: string,
  changes: Partial<PolicyControlVersionRow>,
): Promise<void> {
  await db
    .updateTable('policy_control_versions')
    .set(changes)
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .execute()
}

// --- published controls: each non-archived base joined to its latest published version ---

function publishedControls(db: Db, tenantId: string) {
  const joined = db
    .selectFrom('policy_control_bases as b')
    .innerJoin('policy_control_versions as v', (join) =>
      join.onRef('v.base_id', '=', 'b.id').onRef('v.version', '=', 'b.latest_version'),
    )
    .where('b.tenant_id', '=', tenantId)
    .where('v.tenant_id', '=', tenantId)
    .where('b.archived', '=', 0)
    .select([
      'b.id as id',
      'v.id as version_id',
      'b.key as key',
      'v.version as version',
      'v.name as name',
      'v.name_key as name_key',
      'v.description as description',
      'v.evidence_requirements as evidence_requirements',
      'v.risk_type_ids as risk_type_ids',
      'b.deprecated as deprecated',
      'v.published_at as published_at',
      'b.created_at as created_at',
      'b.updated_at as updated_at',
    ])
  // A derived table gives the keyset helper unambiguous column names.
  return db.selectFrom(joined.as('pc')).selectAll()
}

export type PublishedControlRow = Awaited<ReturnType<ReturnType<typeof publishedControls>['executeTakeFirstOrThrow']>>

export function listPublishedControls(
  db: Db,
  tenantId: string,
  query: PolicyControlListQuery,
  ks: Keyset,
): Promise<PublishedControlRow[]> {
  let q = publishedControls(db, tenantId)
  if (query.q !== undefined) q = q.where(containsText('name_key', query.q))
  if (query.key !== undefined) q = q.where('key', '=', query.key)
  if (query.risk_type_id !== undefined) q = q.where(containsText('risk_type_ids', JSON.stringify(query.risk_type_id)))
  return withinTextBudget(db, applyKeyset(q, ks), ks, pageTextOf('policy_control_versions')).execute()
}

export function findPublishedControl(
  db: Db,
  tenantId: string,
  baseId: string,
): Promise<PublishedControlRow | undefined> {
  return publishedControls(db, tenantId).where('id', '=', baseId).executeTakeFirst()
}

// --- risk types (owned by the catalog family; read here only to check references) ---

export async function existingRiskTypeIds(db: Db, tenantId: string, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set()
  const rows = await db
    .selectFrom('risk_types')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('id', 'in', ids)
    .execute()
  return new Set(rows.map((r) => r.id))
}
