import type { ExpressionBuilder, Kysely } from 'kysely'
import type { ControlEvidenceRow, Tables, UseCaseControlRow, UseCasePolicyPackRow } from '../../db/tables.js'
import { applyKeyset, type Keyset } from '../../shared/pagination.js'
import type { TenantControlListQuery, UseCaseControlListQuery } from './use-case-policies.schemas.js'
import { forChange } from '../../shared/mutation.js'

type Db = Kysely<Tables>

// --- applied packs ---

function appliedPacks(db: Db, tenantId: string, useCaseId: string) {
  const joined = db
    .selectFrom('use_case_policy_packs as a')
    .innerJoin('policy_packs as p', 'p.id', 'a.policy_pack_id')
    .where('a.tenant_id', '=', tenantId)
    .where('a.use_case_id', '=', useCaseId)
    .select([
      'p.id as id',
      'p.key as key',
      'p.version as version',
      'p.name as name',
      'p.description as description',
      'a.due_date as due_date',
      'a.created_at as applied_at',
    ])
  // A derived table gives the keyset helper unambiguous column names.
  return db.selectFrom(joined.as('ap')).selectAll()
}

export type AppliedPackRow = Awaited<ReturnType<ReturnType<typeof appliedPacks>['executeTakeFirstOrThrow']>>

export function listAppliedPacks(db: Db, tenantId: string, useCaseId: string, ks: Keyset): Promise<AppliedPackRow[]> {
  return applyKeyset(appliedPacks(db, tenantId, useCaseId), ks).execute()
}

export function findAppliedPack(
  db: Db,
  tenantId: string,
  useCaseId: string,
  key: string,
): Promise<AppliedPackRow | undefined> {
  return appliedPacks(db, tenantId, useCaseId).where('key', '=', key).executeTakeFirst()
}

export async function insertApplication(db: Db, row: UseCasePolicyPackRow): Promise<void> {
  await db.insertInto('use_case_policy_packs').values(row).execute()
}

export async function deleteApplication(db: Db, tenantId: string, useCaseId: string, key: string): Promise<void> {
  await db
    .deleteFrom('use_case_policy_packs')
    .where('tenant_id', '=', tenantId)
    .where('use_case_id', '=', useCaseId)
    .where('policy_pack_key', '=', key)
    .execute()
}

/** For each control key the use case's applied packs need: the packs needing it, oldest application first. */
export function neededControls(db: Db, tenantId: string, useCaseId: string) {
  return db
    .selectFrom('use_case_policy_packs as a')
    .innerJoin('policy_pack_controls as pc', 'pc.policy_pack_id', 'a.policy_pack_id')
    .innerJoin('policy_packs as p', 'p.id', 'a.policy_pack_id')
    .select(['pc.control_key', 'p.key as pack_key', 'p.version as pack_version'])
    .where('a.tenant_id', '=', tenantId)
    .where('a.use_case_id', '=', useCaseId)
    .orderBy('a.created_at')
    .orderBy('p.id')
    .execute()
}

// --- use-case controls ---

export function findControl(
  db: Db,
  tenantId: string,
  useCaseId: string,
  id: string,
): Promise<UseCaseControlRow | undefined> {
  return forChange(
    db,
    db
      .selectFrom('use_case_controls')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('use_case_id', '=', useCaseId)
      .where('id', '=', id),
  ).executeTakeFirst()
}

export function allControls(db: Db, tenantId: string, useCaseId: string): Promise<UseCaseControlRow[]> {
  return db
    .selectFrom('use_case_controls')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('use_case_id', '=', useCaseId)
    .execute()
}

export function listControls(
  db: Db,
  tenantId: string,
  useCaseId: string,
  query: UseCaseControlListQuery,
  ks: Keyset,
): Promise<UseCaseControlRow[]> {
  let q = db
    .selectFrom('use_case_controls')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('use_case_id', '=', useCaseId)
  if (query.status !== undefined) q = q.where('status', '=', query.status)
  if (query.policy_pack_key !== undefined) q = q.where('policy_pack_key', '=', query.policy_pack_key)
  if (query.assignee_id !== undefined) q = q.where('assignee_id', '=', query.assignee_id)
  return applyKeyset(q, ks).execute()
}

/** A control still to do: what "open" and "overdue" count, here as in the governance summary. */
const OPEN_STATUSES = ['pending', 'in_progress']

export function listTenantControls(
  db: Db,
  tenantId: string,
  query: TenantControlListQuery,
  ks: Keyset,
  today: string,
): Promise<UseCaseControlRow[]> {
  let q = db.selectFrom('use_case_controls').selectAll().where('tenant_id', '=', tenantId)
  if (query.assignee_id !== undefined) q = q.where('assignee_id', '=', query.assignee_id)
  if (query.status !== undefined) q = q.where('status', '=', query.status)
  if (query.policy_pack_key !== undefined) q = q.where('policy_pack_key', '=', query.policy_pack_key)
  if (query.open !== undefined) q = q.where('status', query.open ? 'in' : 'not in', OPEN_STATUSES)
  if (query.overdue !== undefined) {
    const overdue = (eb: ExpressionBuilder<Tables, 'use_case_controls'>) =>
      eb.and([eb('status', 'in', OPEN_STATUSES), eb('due_date', 'is not', null), eb('due_date', '<', today)])
    q = q.where((eb) => (query.overdue ? overdue(eb) : eb.not(overdue(eb))))
  }
  return applyKeyset(q, ks).execute()
}

/** The names of a tenant's use cases by id. */
export async function useCaseNames(db: Db, tenantId: string, ids: string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map()
  const rows = await db
    .selectFrom('use_cases')
    .select(['id', 'name'])
    .where('tenant_id', '=', tenantId)
    .where('id', 'in', [...new Set(ids)])
    .execute()
  return new Map(rows.map((r) => [r.id, r.name]))
}

export async function insertControls(db: Db, rows: UseCaseControlRow[]): Promise<void> {
  if (rows.length > 0) await db.insertInto('use_case_controls').values(rows).execute()
}

export async function updateControl(
  db: Db,
  tenantId: string,
  id: string,
  changes: Partial<UseCaseControlRow>,
): Promise<void> {
  await db
    .updateTable('use_case_controls')
    .set(changes)
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .execute()
}

export async function deleteControls(db: Db, tenantId: string, ids: string[]): Promise<void> {
  if (ids.length > 0)
    await db.deleteFrom('use_case_controls').where('tenant_id', '=', tenantId).where('id', 'in', ids).execute()
}

// --- evidence on controls ---

export function controlEvidenceLinks(db: Db, tenantId: string, controlIds: string[]) {
  if (controlIds.length === 0) return Promise.resolve([])
  return db
    .selectFrom('use_case_control_evidence')
    .select(['use_case_control_id', 'evidence_id', 'requirement', 'created_at'])
    .where('tenant_id', '=', tenantId)
    .where('use_case_control_id', 'in', controlIds)
    .orderBy('created_at')
    .orderBy('evidence_id')
    .execute()
}

/** The evidence requirements (JSON) of control versions, by version id. */
export async function evidenceRequirements(
  db: Db,
  tenantId: string,
  versionIds: string[],
): Promise<Map<string, string>> {
  if (versionIds.length === 0) return new Map()
  const rows = await db
    .selectFrom('policy_control_versions')
    .select(['id', 'evidence_requirements'])
    .where('tenant_id', '=', tenantId)
    .where('id', 'in', [...new Set(versionIds)])
    .execute()
  return new Map(rows.map((r) => [r.id, r.evidence_requirements]))
}

export function findControlEvidence(db: Db, tenantId: string, controlId: string, evidenceId: string) {
  return db
    .selectFrom('use_case_control_evidence')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('use_case_control_id', '=', controlId)
    .where('evidence_id', '=', evidenceId)
    .executeTakeFirst()
}

export async function insertControlEvidence(db: Db, row: ControlEvidenceRow): Promise<void> {
  await db.insertInto('use_case_control_evidence').values(row).execute()
}

export async function updateControlEvidence(
  db: Db,
  tenantId: string,
  controlId: string,
  evidenceId: string,
  requirement: number | null,
): Promise<void> {
  await db
    .updateTable('use_case_control_evidence')
    .set({ requirement })
    .where('tenant_id', '=', tenantId)
    .where('use_case_control_id', '=', controlId)
    .where('evidence_id', '=', evidenceId)
    .execute()
}

export async function deleteControlEvidence(
  db: Db,
  tenantId: string,
  controlId: string,
  evidenceId: string,
): Promise<void> {
  await db
    .deleteFrom('use_case_control_evidence')
    .where('tenant_id', '=', tenantId)
    .where('use_case_control_id', '=', controlId)
    .where('evidence_id', '=', evidenceId)
    .execute()
}
