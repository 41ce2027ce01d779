import { isUniqueViolation } from '../../db/create-db.js'
import type { QuestionnaireRow } from '../../db/tables.js'
import { AppError, conflict, type FieldError, invalid, invalidFields, notFound } from '../../http/errors.js'
import type { Ctx } from '../../shared/context.js'
import type { Deps } from '../../shared/deps.js'
import { newId, now } from '../../shared/ids.js'
import { type AuditEntry, createdChanges, runMutation, type Tx } from '../../shared/mutation.js'
import { keyset, type Page, toPage } from '../../shared/pagination.js'
import { derive, type FieldOf, ID, latest, list, name, plain, stored, TIME, unaudited } from '../../shared/fields.js'
import { findEvidenceMany } from '../evidence/evidence.service.js'
import { type AnswerInput, answerList, applyAnswers, progress, type StoredAnswers } from './questionnaire-answers.js'
import * as repo from './questionnaires.repo.js'
import {
  type AnsweredQuestionnaire,
  type AnswerProgress,
  type AnswersUpdate,
  type AttachedQuestionnaire,
  type AttachQuestionnaire,
  MAX_QUESTIONS,
  type Questionnaire,
  type QuestionnaireCreate,
  type QuestionnaireListQuery,
  type Section,
} from './questionnaires.schemas.js'
// What other families read of this one's records, inside their own transactions: through here, not the repository.
export { attachmentsWithAnswers, findQuestionnaireByKey, useCaseQuestionnaireIds } from './questionnaires.repo.js'

export type QuestionnairesService = ReturnType<typeof createQuestionnairesService>

const QUESTIONNAIRE_ID = /^q_[0-9a-z]{26}$/

const publicId = (row: { key: string; version: number }) => `${row.key}+${row.version}`

/** "KEY+version", from the row's key and version. */
const publicIdField: FieldOf = () => ({
  read: (row) => publicId(row as { key: string; version: number }),
  audited: false,
  listed: false,
})

type QuestionnaireColumns = Omit<QuestionnaireCreate, 'sections'> & { sections: Section[] }

// A questionnaire is written once; its created record lists key, version, name and target (its size goes in metadata).
const fields = derive<QuestionnaireRow, Questionnaire, QuestionnaireColumns, object>({
  id: ID,
  key: plain(),
  // The next number for the key, counted by the create.
  version: stored({ audited: true }),
  questionnaire_id: publicIdField,
  latest,
  name,
  description: unaudited(plain()),
  target: plain(),
  // Checked, with their ids assigned, before they are written.
  sections: unaudited(list()),
  created_at: TIME,
  updated_at: TIME,
})

const attachedFields = derive<repo.AttachedRow, AttachedQuestionnaire, object, object>({
  id: ID,
  key: stored(),
  version: stored(),
  questionnaire_id: publicIdField,
  name: stored(),
  target: stored(),
  attached_at: stored(),
})

export function createQuestionnairesService(deps: Pick<Deps, 'database'>) {
  const { database } = deps
  const { db } = database

  async function owner(tx: Tx, ctx: Ctx, kind: repo.OwnerKind, id: string) {
    const row = await repo.ownerExists(tx, ctx.tenantId, kind, id)
    if (!row) throw notFound(repo.OWNERS[kind].label, id)
    return row
  }

  return {
    async list(ctx: Ctx, query: QuestionnaireListQuery): Promise<Page<Questionnaire>> {
      const ks = keyset(query, repo.QUESTIONNAIRE_SORT_COLUMNS)
      return toPage(await repo.listQuestionnaires(db, ctx.tenantId, query, ks), ks, toQuestionnaire)
    },

    /** By key (the latest version, or `version`), by "KEY+version", or by a q_ id. */
    async get(ctx: Ctx, keyOrId: string, version?: number): Promise<Questionnaire> {
      if (QUESTIONNAIRE_ID.test(keyOrId) && version === undefined) {
        const row = await repo.findQuestionnaire(db, ctx.tenantId, keyOrId)
        if (!row) throw notFound('questionnaire', keyOrId)
        return toQuestionnaire(row)
      }
      const ref = parseQuestionnaireRef(keyOrId)
      if (ref?.version !== undefined && version !== undefined && ref.version !== version) {
        throw new AppError(
          'bad_request',
          `version: "${keyOrId}" names version ${ref.version}, the query version ${version}`,
          [{ field: 'version', message: `"${keyOrId}" names version ${ref.version}` }],
        )
      }
      const wanted = ref?.version ?? version
      const row = ref && (await repo.findQuestionnaireByKey(db, ctx.tenantId, ref.key, wanted))
      if (!row)
        throw notFound(
          'questionnaire',
          wanted === undefined || ref?.version !== undefined ? keyOrId : `${keyOrId} version ${wanted}`,
        )
      return toQuestionnaire(row)
    },

    async create(ctx: Ctx, input: QuestionnaireCreate): Promise<Questionnaire> {
      try {
        return await runMutation(database, ctx, async (tx) => {
          const { row, audit } = await publishQuestionnaireVersion(tx, ctx, input)
          return { result: toQuestionnaire(row), audit }
        })
      } catch (err) {
        throw isUniqueViolation(err)
          ? conflict(`another version of questionnaire "${input.key}" was created at the same time; retry`)
          : err
      }
    },

    async listAttached(
      ctx: Ctx,
      kind: repo.OwnerKind,
      ownerId: string,
      query: { page_limit?: number; page_after?: string },
    ): Promise<Page<AttachedQuestionnaire & { progress: AnswerProgress }>> {
      await owner(db, ctx, kind, ownerId)
      const ks = keyset(query)
      return toPage(await repo.listAttached(db, ctx.tenantId, kind, ownerId, ks), ks, (row) => ({
        ...toAttached(row),
        progress: progress(JSON.parse(row.sections) as Section[], JSON.parse(row.answers) as StoredAnswers),
      }))
    },

    /** The attachment with its answers and progress. */
    async getAttached(ctx: Ctx, kind: repo.OwnerKind, ownerId: string, key: string): Promise<AnsweredQuestionnaire> {
      await owner(db, ctx, kind, ownerId)
      const ref = attachedRef(key)
      const [row] = await repo.attachmentsWithAnswers(db, ctx.tenantId, kind, ownerId, ref.key)
      return toAnswered(checkAttached(row, key, ref))
    },

    /** Every attachment with its questions, answers and progress (for the dossier). */
    async listAnswered(
      ctx: Ctx,
      kind: repo.OwnerKind,
      ownerId: string,
    ): Promise<(AnsweredQuestionnaire & { sections: Section[] })[]> {
      await owner(db, ctx, kind, ownerId)
      const size = await repo.attachmentsTextSize(db, ctx.tenantId, kind, ownerId)
      if (size > DOSSIER_QUESTIONNAIRES_CHARS) {
        throw new AppError(
          'response_too_large',
          `the questionnaires of ${repo.OWNERS[kind].label} ${ownerId} hold ${size} characters of questions and answers, more than the ${DOSSIER_QUESTIONNAIRES_CHARS} read at once; read each at …/questionnaires/{key}`,
        )
      }
      const rows = await repo.attachmentsWithAnswers(db, ctx.tenantId, kind, ownerId)
      return rows.map((row) => ({ ...toAnswered(row), sections: JSON.parse(row.sections) as Section[] }))
    },

    /** Upserts the listed answers (null clears); one audit record naming each changed answer. */
    async answer(
      ctx: Ctx,
      kind: repo.OwnerKind,
      ownerId: string,
      key: string,
      input: AnswersUpdate,
    ): Promise<AnsweredQuestionnaire> {
      return runMutation(database, ctx, async (tx) => {
        const parent = await owner(tx, ctx, kind, ownerId)
        const ref = attachedRef(key)
        const row = checkAttached(
          (
            await repo.attachmentsWithAnswers(tx, ctx.tenantId, kind, ownerId, ref.key, database.dialect === 'postgres')
          )[0],
          key,
          ref,
        )
        const before = JSON.parse(row.answers) as StoredAnswers
        const after = await mergeAnswers(
          tx,
          ctx,
          JSON.parse(row.sections) as Section[],
          before,
          input.answers,
          (i) => `answers/${i}`,
        )
        const changes: Record<string, [unknown, unknown]> = {}
        for (const id of new Set([...Object.keys(before), ...Object.keys(after)])) {
          const was = before[id] ? { value: before[id].value, evidence_ids: before[id].evidence_ids } : null
          const is = after[id] ? { value: after[id].value, evidence_ids: after[id].evidence_ids } : null
          if (JSON.stringify(was) !== JSON.stringify(is)) changes[id] = [was, is]
        }
        if (Object.keys(changes).length === 0) return { result: toAnswered(row), audit: [] }
        // Answers given again unchanged keep who gave them and when.
        for (const id of Object.keys(after)) if (!(id in changes) && before[id]) after[id] = before[id]
        const answers = JSON.stringify(after)
        if (answers.length > ANSWERS_MAX_CHARS) {
          throw new AppError(
            'payload_too_large',
            `the answers to questionnaire "${row.key}" would hold ${answers.length} characters; one attachment keeps at most ${ANSWERS_MAX_CHARS}`,
          )
        }
        const p = progress(JSON.parse(row.sections) as Section[], after)
        await repo.updateAnswers(tx, ctx.tenantId, kind, ownerId, row.key, answers, p.required - p.required_answered)
        return {
          result: toAnswered({ ...row, answers }),
          audit: {
            ...attachmentAudit('questionnaire.answered', kind, parent, row.id, publicId(row)),
            changes,
            metadata: { progress: p },
          },
        }
      })
    },

    async attach(
      ctx: Ctx,
      kind: repo.OwnerKind,
      ownerId: string,
      input: AttachQuestionnaire,
    ): Promise<AttachedQuestionnaire> {
      try {
        return await runMutation(database, ctx, async (tx) => {
          const parent = await owner(tx, ctx, kind, ownerId)
          const ref = parseQuestionnaireRef(input.key)
          if (!ref) throw invalid('key', `"${input.key}" is neither a key nor KEY+version`)
          if (ref.version !== undefined && input.version != null && input.version !== ref.version) {
            throw invalid('version', `"${input.key}" names version ${ref.version}; send one version`)
          }
          const version = ref.version ?? input.version ?? undefined
          const q = await repo.findQuestionnaireByKey(tx, ctx.tenantId, ref.key, version)
          if (!q) {
            throw version === undefined || ref.version !== undefined
              ? invalid('key', `no questionnaire "${input.key}" in this tenant`)
              : invalid('version', `questionnaire "${ref.key}" has no version ${version}`)
          }
          if (q.target !== kind) throw invalid('key', `questionnaire "${q.key}" targets ${q.target}, not ${kind}`)
          if (await repo.findAttached(tx, ctx.tenantId, kind, ownerId, q.key)) {
            throw conflict(
              `questionnaire "${q.key}" is already attached to ${repo.OWNERS[kind].label} ${ownerId}; detach it first to attach another version`,
            )
          }
          if ((await repo.allAttached(tx, ctx.tenantId, kind, ownerId)).length >= ATTACHMENTS_PER_RECORD) {
            throw conflict(
              `${repo.OWNERS[kind].label} ${ownerId} already has ${ATTACHMENTS_PER_RECORD} questionnaires attached, the most one record carries; detach one first`,
            )
          }
          const at = now()
          await repo.attach(tx, ctx.tenantId, kind, ownerId, q, at)
          return {
            result: toAttached({ ...q, attached_at: at }),
            audit: attachmentAudit('questionnaire.attached', kind, parent, q.id, publicId(q)),
          }
        })
      } catch (err) {
        throw isUniqueViolation(err)
          ? conflict(`questionnaire "${input.key}" was attached at the same time; it is attached once`)
          : err
      }
    },

    async detach(ctx: Ctx, kind: repo.OwnerKind, ownerId: string, key: string): Promise<void> {
      await runMutation(database, ctx, async (tx) => {
        const parent = await owner(tx, ctx, kind, ownerId)
        const ref = attachedRef(key)
        const current = checkAttached(await repo.findAttached(tx, ctx.tenantId, kind, ownerId, ref.key), key, ref)
        await repo.detach(tx, ctx.tenantId, kind, ownerId, current.key)
        return {
          result: undefined,
          audit: attachmentAudit('questionnaire.detached', kind, parent, current.id, publicId(current)),
        }
      })
    },
  }
}

/** Checks answers against the questionnaire version and the tenant's evidence, and merges them in; 422 naming each bad member. */
async function mergeAnswers(
  tx: Tx,
  ctx: Ctx,
  sections: Section[],
  current: StoredAnswers,
  inputs: AnswerInput[],
  pathOf: (i: number) => string,
): Promise<StoredAnswers> {
  const { answers, evidenceIds, errors } = applyAnswers(
    sections,
    current,
    inputs,
    { actor: ctx.actor.id, at: now() },
    pathOf,
  )
  const found = new Set((await findEvidenceMany(tx, ctx.tenantId, [...evidenceIds.keys()])).map((e) => e.id))
  for (const [id, path] of evidenceIds)
    if (!found.has(id)) errors.push({ field: path, message: `evidence ${id} was not found` })
  if (errors.length > 0) throw invalidFields(errors)
  return answers
}

function attachmentAudit(
  action: string,
  kind: repo.OwnerKind,
  parent: { id: string; name: string },
  questionnaireId: string,
  label: string,
): AuditEntry {
  return {
    action,
    resourceType: kind,
    resourceId: parent.id,
    resourceName: parent.name,
    useCaseId: kind === 'use_case' ? parent.id : null,
    subObjectType: 'questionnaire',
    subObjectId: questionnaireId,
    subObjectName: label,
  }
}

const REF_VERSION = /^[1-9][0-9]{0,8}$/

/**
 * "KEY+version" (the form use cases list, and the original interface's clients address), or "KEY" alone; null when
 * the version part is not a version (`KEY+0`, `KEY+x`, `KEY+`). Keys cannot contain "+", so the first one splits.
 */
export function parseQuestionnaireRef(ref: string): { key: string; version?: number } | null {
  const plus = ref.indexOf('+')
  if (plus < 0) return ref === '' ? null : { key: ref }
  const key = ref.slice(0, plus)
  const version = ref.slice(plus + 1)
  return key !== '' && REF_VERSION.test(version) ? { key, version: Number(version) } : null
}

/** The key an owner route names, with its version when it says one; a malformed ref is no attachment (404). */
function attachedRef(ref: string): { key: string; version?: number } {
  const parsed = parseQuestionnaireRef(ref)
  if (!parsed) throw notFound('attached questionnaire', ref)
  return parsed
}

/** The attachment a route names: present, and of the version the ref names, if it names one. */
function checkAttached<Row extends { key: string; version: number }>(
  row: Row | undefined,
  ref: string,
  parsed: { version?: number },
): Row {
  if (!row) throw notFound('attached questionnaire', ref)
  if (parsed.version !== undefined && row.version !== parsed.version) {
    throw new AppError(
      'not_found',
      `attached questionnaire ${ref} was not found: version ${row.version} of "${row.key}" is attached`,
    )
  }
  return row
}

/** Questionnaires one use case, model or vendor may carry: each is read whole with its answers (gates, the dossier). */
export const ATTACHMENTS_PER_RECORD = 20
/** Characters of stored answers one attachment keeps: answers accumulate over many writes, so a write past this is refused. */
export const ANSWERS_MAX_CHARS = 1_000_000
/** Characters of questions and answers the dossier reads whole; past it, each questionnaire is read on its own route. */
export const DOSSIER_QUESTIONNAIRES_CHARS = 8_000_000

/**
 * Makes the questionnaires attached to an owner exactly `refs` ("KEY+version" or "KEY"), inside the caller's
 * transaction: detaches the others, attaches the new ones, and moves a key to another version. Invalid entries are
 * one 422 naming each (`questionnaire_ids/1`). Returns the audit entries of what changed.
 */
export async function replaceAttachedQuestionnaires(
  tx: Tx,
  ctx: Ctx,
  kind: repo.OwnerKind,
  parent: { id: string; name: string },
  refs: readonly string[],
): Promise<AuditEntry[]> {
  const errors: FieldError[] = []
  const wanted = new Map<string, QuestionnaireRow>()
  for (const [i, ref] of refs.entries()) {
    const field = `questionnaire_ids/${i}`
    const parsed = parseQuestionnaireRef(ref)
    const q = parsed ? await repo.findQuestionnaireByKey(tx, ctx.tenantId, parsed.key, parsed.version) : undefined
    if (!q) errors.push({ field, message: `no questionnaire "${ref}" in this tenant` })
    else if (q.target !== kind)
      errors.push({ field, message: `questionnaire "${publicId(q)}" targets ${q.target}, not ${kind}` })
    else if (wanted.has(q.key))
      errors.push({ field, message: `questionnaire "${q.key}" is listed twice; a key is attached once` })
    else wanted.set(q.key, q)
  }
  if (errors.length === 0 && wanted.size > ATTACHMENTS_PER_RECORD) {
    errors.push({
      field: 'questionnaire_ids',
      message: `at most ${ATTACHMENTS_PER_RECORD} questionnaires are attached to one ${repo.OWNERS[kind].label}`,
    })
  }
  if (errors.length > 0) throw invalidFields(errors)
  const audit: AuditEntry[] = []
  for (const current of await repo.allAttached(tx, ctx.tenantId, kind, parent.id)) {
    if (wanted.get(current.key)?.id === current.id) {
      wanted.delete(current.key)
      continue
    }
    await repo.detach(tx, ctx.tenantId, kind, parent.id, current.key)
    audit.push(attachmentAudit('questionnaire.detached', kind, parent, current.id, publicId(current)))
  }
  const at = now()
  for (const q of wanted.values()) {
    await repo.attach(tx, ctx.tenantId, kind, parent.id, q, at)
    audit.push(attachmentAudit('questionnaire.attached', kind, parent, q.id, publicId(q)))
  }
  return audit
}

/**
 * Answers given with a new use case (`questions` on create, as bulk imports send them): each names a
 * questionnaire of its `questionnaire_ids` by "KEY+version", "KEY" or q_ id. One audit record per questionnaire.
 */
export async function answerOnCreate(
  tx: Tx,
  ctx: Ctx,
  parent: { id: string; name: string },
  questions: readonly (AnswerInput & { questionnaire_id: string })[],
): Promise<AuditEntry[]> {
  const attached = await repo.attachmentsWithAnswers(tx, ctx.tenantId, 'use_case', parent.id)
  const errors: FieldError[] = []
  const groups = new Map<string, { row: (typeof attached)[number]; inputs: AnswerInput[]; indices: number[] }>()
  questions.forEach((q, i) => {
    const row = attached.find(
      (a) => a.id === q.questionnaire_id || a.key === q.questionnaire_id || publicId(a) === q.questionnaire_id,
    )
    if (!row) {
      errors.push({
        field: `questions/${i}/questionnaire_id`,
        message: `questionnaire "${q.questionnaire_id}" is not one of questionnaire_ids`,
      })
      return
    }
    const group = groups.get(row.key) ?? { row, inputs: [], indices: [] }
    group.inputs.push(q)
    group.indices.push(i)
    groups.set(row.key, group)
  })
  if (errors.length > 0) throw invalidFields(errors)
  const audit: AuditEntry[] = []
  for (const { row, inputs, indices } of groups.values()) {
    const sections = JSON.parse(row.sections) as Section[]
    const answers = await mergeAnswers(tx, ctx, sections, {}, inputs, (j) => `questions/${indices[j]}`)
    if (Object.keys(answers).length === 0) continue
    const p = progress(sections, answers)
    await repo.updateAnswers(
      tx,
      ctx.tenantId,
      'use_case',
      parent.id,
      row.key,
      JSON.stringify(answers),
      p.required - p.required_answered,
    )
    const changes = Object.fromEntries(
      Object.entries(answers).map(([id, a]) => [id, [null, { value: a.value, evidence_ids: a.evidence_ids }]]),
    ) as Record<string, [unknown, unknown]>
    audit.push({ ...attachmentAudit('questionnaire.answered', 'use_case', parent, row.id, publicId(row)), changes })
  }
  return audit
}

/** Inserts the next version of a questionnaire after checking its content. Shared with the starter library. */
export async function publishQuestionnaireVersion(
  tx: Tx,
  ctx: Ctx,
  input: QuestionnaireCreate,
): Promise<{ row: QuestionnaireRow; audit: AuditEntry }> {
  const sections = checkSections(input.sections)
  const previous = await repo.findQuestionnaireByKey(tx, ctx.tenantId, input.key)
  if (previous && previous.target !== input.target) {
    throw invalid(
      'target',
      `earlier versions of questionnaire "${input.key}" target ${previous.target}; a key keeps its target`,
    )
  }
  const at = now()
  const row: QuestionnaireRow = {
    id: newId('q'),
    tenant_id: ctx.tenantId,
    ...(fields.createColumns({ ...input, sections }, ctx) as Pick<
      QuestionnaireRow,
      'key' | 'latest' | 'name' | 'name_key' | 'description' | 'target' | 'sections'
    >),
    version: (previous?.version ?? 0) + 1,
    created_at: at,
    updated_at: at,
  }
  await repo.insertQuestionnaire(tx, row)
  return {
    row,
    audit: {
      action: 'questionnaire.created',
      resourceType: 'questionnaire',
      resourceId: row.id,
      resourceName: publicId(row),
      changes: createdChanges(toQuestionnaire(row), fields.audited),
      metadata: { sections: sections.length, questions: sections.reduce((n, s) => n + s.questions.length, 0) },
    },
  }
}

/**
 * The rules JSON Schema cannot express: unique ids, select options where (and only where) they belong, the question
 * limit. Ids the client left out are assigned after every given one is known, so an assigned id never takes one given.
 */
function checkSections(input: QuestionnaireCreate['sections']): Section[] {
  const errors: FieldError[] = []
  const sectionIds = new Set<string>()
  const questionIds = new Set<string>()
  input.forEach((section, s) => {
    if (section.id != null) {
      if (sectionIds.has(section.id))
        errors.push({ field: `sections/${s}/id`, message: `section id "${section.id}" is used twice` })
      sectionIds.add(section.id)
    }
    section.questions.forEach((question, i) => {
      if (question.id == null) return
      if (questionIds.has(question.id))
        errors.push({
          field: `sections/${s}/questions/${i}/id`,
          message: `question id "${question.id}" is used twice in this questionnaire`,
        })
      questionIds.add(question.id)
    })
  })
  let count = 0
  const sections = input.map((section, s): Section => {
    const questions = section.questions.map((question, i) => {
      count += 1
      const field = `sections/${s}/questions/${i}`
      const options = question.select_options ?? []
      if (question.evidence_type === 'select' && options.length === 0)
        errors.push({ field: `${field}/select_options`, message: 'a select question needs select_options' })
      if (question.evidence_type !== 'select' && options.length > 0)
        errors.push({ field: `${field}/select_options`, message: 'only select questions take select_options' })
      const id = question.id ?? assignId(question.question, `q-${count}`, questionIds)
      return {
        id,
        question: question.question,
        evidence_type: question.evidence_type,
        multiple: question.multiple ?? false,
        select_options: options,
        required: question.required ?? false,
      }
    })
    const id = section.id ?? assignId(section.title, `section-${s + 1}`, sectionIds)
    return { id, title: section.title, description: section.description ?? null, questions }
  })
  if (count > MAX_QUESTIONS)
    errors.push({ field: 'sections', message: `${count} questions; a questionnaire has at most ${MAX_QUESTIONS}` })
  if (errors.length > 0) throw invalidFields(errors)
  return sections
}

const SLUG_LENGTH = 48

/**
 * A readable id from a text (`Where is data hosted?` → `where-is-data-hosted`), else `fallback` (text without Latin
 * letters or digits); `-2`, `-3`, … when taken. The same content gives the same ids, so a re-sent template keeps them.
 */
function assignId(text: string, fallback: string, taken: Set<string>): string {
  let slug = text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
  if (slug.length > SLUG_LENGTH) {
    const cut = slug.slice(0, SLUG_LENGTH)
    // At a word boundary when there is one in the second half, so ids do not end mid-word.
    slug = (cut.lastIndexOf('-') > SLUG_LENGTH / 2 ? cut.slice(0, cut.lastIndexOf('-')) : cut).replace(/-+$/, '')
  }
  const base = slug === '' ? fallback : slug
  let id = base
  for (let n = 2; taken.has(id); n++) id = `${base}-${n}`
  taken.add(id)
  return id
}

const toQuestionnaire = fields.toItem

function toAnswered(row: Awaited<ReturnType<typeof repo.attachmentsWithAnswers>>[number]): AnsweredQuestionnaire {
  const sections = JSON.parse(row.sections) as Section[]
  const answers = JSON.parse(row.answers) as StoredAnswers
  return { ...toAttached(row), answers: answerList(sections, answers), progress: progress(sections, answers) }
}

const toAttached = attachedFields.toItem
