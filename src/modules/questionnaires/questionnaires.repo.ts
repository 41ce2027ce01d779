import { type Kysely, sql } from 'kysely'
import type { QuestionnaireRow, Tables } from '../../db/tables.js'
import { applyKeyset, type Keyset, pageTextOf, textSize, withinTextBudget } from '../../shared/pagination.js'
import { containsText } from '../../shared/search.js'
import { progress, type StoredAnswers } from './questionnaire-answers.js'
import type { QuestionnaireListQuery, Section } from './questionnaires.schemas.js'

type Db = Kysely<Tables>

export const QUESTIONNAIRE_SORT_COLUMNS = { key: 'key', name: 'name_key', created_at: 'created_at' }

export function findQuestionnaire(db: Db, tenantId: string, id: string): Promise<QuestionnaireRow | undefined> {
  return db
    .selectFrom('questionnaires')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst()
}

/** A given version of a key, or its latest when `version` is undefined. */
export function findQuestionnaireByKey(
  db: Db,
  tenantId: string,
  key: string,
  version?: number,
): Promise<QuestionnaireRow | undefined> {
  let q = db.selectFrom('questionnaires').selectAll().where('tenant_id', '=', tenantId).where('key', '=', key)
  q = version === undefined ? q.where('latest', '=', 1) : q.where('version', '=', version)
  return q.executeTakeFirst()
}

export function listQuestionnaires(
  db: Db,
  tenantId: string,
  query: QuestionnaireListQuery,
  ks: Keyset,
): Promise<QuestionnaireRow[]> {
  let q = db.selectFrom('questionnaires').selectAll().where('tenant_id', '=', tenantId)
  if (!query.all_versions) q = q.where('latest', '=', 1)
  if (query.key !== undefined) q = q.where('key', '=', query.key)
  if (query.target !== undefined) q = q.where('target', '=', query.target)
  if (query.q !== undefined) q = q.where(containsText('name_key', query.q))
  return withinTextBudget(db, applyKeyset(q, ks), ks, pageTextOf('questionnaires')).execute()
}

export async function insertQuestionnaire(db: Db, row: QuestionnaireRow): Promise<void> {
  await db
    .updateTable('questionnaires')
    .set({ latest: 0 })
    .where('tenant_id', '=', row.tenant_id)
    .where('key', '=', row.key)
    .where('latest', '=', 1)
    .execute()
  await db.insertInto('questionnaires').values(row).execute()
}

// --- attachments to use cases, models and vendors ---

export type OwnerKind = 'use_case' | 'model' | 'vendor'

/**
 * Both attachment tables have the same shape apart from the owner column; queries are typed
 * against use_case_questionnaires and name the owner column through OWNERS.
 */
export const OWNERS = {
  use_case: { table: 'use_case_questionnaires', column: 'use_case_id', parent: 'use_cases', label: 'use case' },
  model: { table: 'model_questionnaires', column: 'model_id', parent: 'models', label: 'model' },
  vendor: { table: 'vendor_questionnaires', column: 'vendor_id', parent: 'vendors', label: 'vendor' },
} as const

const table = (kind: OwnerKind) => OWNERS[kind].table as 'use_case_questionnaires'
const ownerColumn = (kind: OwnerKind) => OWNERS[kind].column as 'use_case_id'

export async function ownerExists(
  db: Db,
  tenantId: string,
  kind: OwnerKind,
  id: string,
): Promise<{ id: string; name: string } | undefined> {
  return db
    .selectFrom(OWNERS[kind].parent as 'use_cases')
    .select(['id', 'name'])
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst()
}

function attached(db: Db, tenantId: string, kind: OwnerKind, ownerId: string) {
  const joined = db
    .selectFrom(`${table(kind)} as a`)
    .innerJoin('questionnaires as q', 'q.id', 'a.questionnaire_id')
    .where('a.tenant_id', '=', tenantId)
    .where(`a.${ownerColumn(kind)}`, '=', ownerId)
    .select([
      'q.id as id',
      'q.key as key',
      'q.version as version',
      'q.name as name',
      'q.target as target',
      'a.created_at as attached_at',
    ])
  // A derived table gives the keyset helper unambiguous column names.
  return db.selectFrom(joined.as('aq')).selectAll()
}

export type AttachedRow = Awaited<ReturnType<ReturnType<typeof attached>['executeTakeFirstOrThrow']>>

/** The owner's attachments joined to their questionnaires: what a list or read of them with answers selects. */
function withAnswers(db: Db, tenantId: string, kind: OwnerKind, ownerId: string) {
  return db
    .selectFrom(`${table(kind)} as a`)
    .innerJoin('questionnaires as q', 'q.id', 'a.questionnaire_id')
    .where('a.tenant_id', '=', tenantId)
    .where(`a.${ownerColumn(kind)}`, '=', ownerId)
    .select([
      'q.id as id',
      'q.key as key',
      'q.version as version',
      'q.name as name',
      'q.target as target',
      'a.created_at as attached_at',
      'q.sections as sections',
      'a.answers as answers',
    ])
}

/** A page of attachments with their questions and answers (for their progress). */
export function listAttached(db: Db, tenantId: string, kind: OwnerKind, ownerId: string, ks: Keyset) {
  const joined = withAnswers(db, tenantId, kind, ownerId)
  const page = applyKeyset(db.selectFrom(joined.as('aq')).selectAll(), ks)
  // Answers may be long: the page ends at the text budget, as other lists do.
  return withinTextBudget(db, page, ks, textSize('p', ['sections', 'answers'])).execute()
}

export function allAttached(db: Db, tenantId: string, kind: OwnerKind, ownerId: string): Promise<AttachedRow[]> {
  return attached(db, tenantId, kind, ownerId).execute()
}

export function findAttached(
  db: Db,
  tenantId: string,
  kind: OwnerKind,
  ownerId: string,
  key: string,
): Promise<AttachedRow | undefined> {
  return attached(db, tenantId, kind, ownerId).where('key', '=', key).executeTakeFirst()
}

/** Required questions of a version's sections (JSON) that `answers` leaves unanswered. */
function missingOf(sections: string, answers: StoredAnswers): number {
  const p = progress(JSON.parse(sections) as Section[], answers)
  return p.required - p.required_answered
}

export async function attach(
  db: Db,
  tenantId: string,
  kind: OwnerKind,
  ownerId: string,
  questionnaire: QuestionnaireRow,
  at: string,
): Promise<void> {
  await db
    .insertInto(table(kind))
    .values({
      tenant_id: tenantId,
      [ownerColumn(kind)]: ownerId,
      questionnaire_key: questionnaire.key,
      questionnaire_id: questionnaire.id,
      created_at: at,
      answers: '{}',
      missing_required: missingOf(questionnaire.sections, {}),
    } as Tables['use_case_questionnaires'])
    .execute()
}

export async function detach(db: Db, tenantId: string, kind: OwnerKind, ownerId: string, key: string): Promise<void> {
  await db
    .deleteFrom(table(kind))
    .where('tenant_id', '=', tenantId)
    .where(ownerColumn(kind), '=', ownerId)
    .where('questionnaire_key', '=', key)
    .execute()
}

/** Attachments with their questions and answers; `key` narrows to one, `lock` holds its row until the transaction ends (PostgreSQL). */
export function attachmentsWithAnswers(
  db: Db,
  tenantId: string,
  kind: OwnerKind,
  ownerId: string,
  key?: string,
  lock = false,
) {
  let q = withAnswers(db, tenantId, kind, ownerId).orderBy('q.key')
  if (key !== undefined) q = q.where('a.questionnaire_key', '=', key)
  if (lock) q = q.forUpdate('a')
  return q.execute()
}

/** The characters of the attachments' questions and answers, measured by the database before any is read. */
export async function attachmentsTextSize(db: Db, tenantId: string, kind: OwnerKind, ownerId: string): Promise<number> {
  const row = await db
    .selectFrom(`${table(kind)} as a`)
    .innerJoin('questionnaires as q', 'q.id', 'a.questionnaire_id')
    .where('a.tenant_id', '=', tenantId)
    .where(`a.${ownerColumn(kind)}`, '=', ownerId)
    .select(sql<number>`coalesce(sum(length(q.sections) + length(a.answers)), 0)`.as('n'))
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

export async function updateAnswers(
  db: Db,
  tenantId: string,
  kind: OwnerKind,
  ownerId: string,
  key: string,
  answers: string,
  missingRequired: number,
): Promise<void> {
  await db
    .updateTable(table(kind))
    .set({ answers, missing_required: missingRequired })
    .where('tenant_id', '=', tenantId)
    .where(ownerColumn(kind), '=', ownerId)
    .where('questionnaire_key', '=', key)
    .execute()
}

/** "KEY+version" of the questionnaires attached to each of several use cases, in one query. */
export async function useCaseQuestionnaireIds(
  db: Db,
  tenantId: string,
  useCaseIds: string[],
): Promise<Map<string, string[]>> {
  const byUseCase = new Map<string, string[]>()
  if (useCaseIds.length === 0) return byUseCase
  const rows = await db
    .selectFrom('use_case_questionnaires as a')
    .innerJoin('questionnaires as q', 'q.id', 'a.questionnaire_id')
    .select(['a.use_case_id', 'q.key', 'q.version'])
    .where('a.tenant_id', '=', tenantId)
    .where('a.use_case_id', 'in', useCaseIds)
    .orderBy('a.use_case_id')
    .orderBy('q.key')
    .execute()
  for (const row of rows)
    byUseCase.set(row.use_case_id, [...(byUseCase.get(row.use_case_id) ?? []), `${row.key}+${row.version}`])
  return byUseCase
}
