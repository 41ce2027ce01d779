import type { FieldError } from '../../http/errors.js'
import type { Question, Section } from './questionnaires.schemas.js'

/** One stored answer, keyed by question id in the attachment's `answers` JSON. */
export interface StoredAnswer {
  section_id: string
  value: AnswerValue
  evidence_ids: string[]
  answered_by: string | null
  answered_at: string
}

export type AnswerValue = string | number | boolean | string[]
export type StoredAnswers = Record<string, StoredAnswer>

export interface AnswerInput {
  question_id: string
  value: unknown
  evidence_ids?: string[] | null
  section_id?: string | null
}

const MAX_TEXT = 20_000

/** Every question of a questionnaire version with its section, by question id. */
export function questionIndex(sections: Section[]): Map<string, { question: Question; sectionId: string }> {
  const index = new Map<string, { question: Question; sectionId: string }>()
  for (const section of sections)
    for (const question of section.questions) index.set(question.id, { question, sectionId: section.id })
  return index
}

/**
 * Checks answers against their questions and merges them into `current`; `null` clears. Returns the merged
 * answers, the evidence ids they name (for the caller to check exist), and the field errors, at `pathOf(i)`.
 */
export function applyAnswers(
  sections: Section[],
  current: StoredAnswers,
  inputs: AnswerInput[],
  by: { actor: string | null; at: string },
  pathOf: (i: number) => string,
): { answers: StoredAnswers; evidenceIds: Map<string, string>; errors: FieldError[] } {
  const index = questionIndex(sections)
  const answers: StoredAnswers = { ...current }
  const evidenceIds = new Map<string, string>()
  const errors: FieldError[] = []
  const seen = new Set<string>()
  inputs.forEach((input, i) => {
    const at = pathOf(i)
    const entry = index.get(input.question_id)
    if (!entry) {
      errors.push({
        field: `${at}/question_id`,
        message: `question "${input.question_id}" is not in this questionnaire version`,
      })
      return
    }
    if (input.section_id != null && input.section_id !== entry.sectionId) {
      errors.push({
        field: `${at}/section_id`,
        message: `question "${input.question_id}" is in section "${entry.sectionId}"`,
      })
      return
    }
    if (seen.has(input.question_id)) {
      errors.push({ field: `${at}/question_id`, message: `question "${input.question_id}" is answered twice` })
      return
    }
    seen.add(input.question_id)
    if (input.value === null) {
      delete answers[input.question_id]
      return
    }
    const checked = checkValue(entry.question, input.value)
    if (typeof checked === 'object' && 'error' in checked) {
      errors.push({ field: `${at}/value`, message: checked.error })
      return
    }
    const supporting = input.evidence_ids ?? []
    const evidence = [
      ...new Set([...(entry.question.evidence_type === 'file' ? (checked as string[]) : []), ...supporting]),
    ]
    for (const [j, id] of supporting.entries()) evidenceIds.set(id, `${at}/evidence_ids/${j}`)
    if (entry.question.evidence_type === 'file')
      for (const [j, id] of (checked as string[]).entries())
        evidenceIds.set(id, `${at}/value${Array.isArray(input.value) ? `/${j}` : ''}`)
    answers[input.question_id] = {
      section_id: entry.sectionId,
      value: checked as AnswerValue,
      evidence_ids: evidence,
      answered_by: by.actor,
      answered_at: by.at,
    }
  })
  return { answers, evidenceIds, errors }
}

/** The value in its stored form, or why it does not fit the question. */
function checkValue(question: Question, value: unknown): AnswerValue | { error: string } {
  switch (question.evidence_type) {
    case 'text':
      if (typeof value !== 'string') return { error: 'must be a string (a text question)' }
      if (value.trim() === '') return { error: 'must not be blank; send null to clear the answer' }
      if (value.length > MAX_TEXT) return { error: `must be at most ${MAX_TEXT} characters` }
      return value
    case 'number':
      return typeof value === 'number' && Number.isFinite(value)
        ? value
        : { error: 'must be a number (a number question)' }
    case 'boolean':
      return typeof value === 'boolean' ? value : { error: 'must be true or false (a boolean question)' }
    case 'select': {
      const options = question.select_options
      if (!question.multiple) {
        return typeof value === 'string' && options.includes(value)
          ? value
          : { error: `must be one of ${options.map((o) => JSON.stringify(o)).join(', ')}` }
      }
      if (
        !Array.isArray(value) ||
        value.length === 0 ||
        value.some((v) => typeof v !== 'string' || !options.includes(v))
      ) {
        return {
          error: `must be a non-empty list of ${options.map((o) => JSON.stringify(o)).join(', ')} (a multiple-choice question)`,
        }
      }
      if (new Set(value).size !== value.length) return { error: 'lists an option twice' }
      return value as string[]
    }
    case 'file': {
      const ids = typeof value === 'string' ? [value] : value
      if (!Array.isArray(ids) || ids.length === 0 || ids.some((v) => typeof v !== 'string'))
        return { error: 'must be an evidence id (ev_…) or a list of them (a file question)' }
      if (!question.multiple && ids.length > 1) return { error: 'takes one evidence id (the question is not multiple)' }
      return [...new Set(ids as string[])]
    }
  }
}

export interface Progress {
  questions: number
  answered: number
  required: number
  required_answered: number
  complete: boolean
}

export function progress(sections: Section[], answers: StoredAnswers): Progress {
  const p = { questions: 0, answered: 0, required: 0, required_answered: 0 }
  for (const section of sections) {
    for (const question of section.questions) {
      const answered = answers[question.id] !== undefined
      p.questions += 1
      if (answered) p.answered += 1
      if (question.required) p.required += 1
      if (question.required && answered) p.required_answered += 1
    }
  }
  return { ...p, complete: p.required_answered === p.required }
}

/** Required questions left unanswered, in questionnaire order. */
export function missingRequired(
  sections: Section[],
  answers: StoredAnswers,
): { section_id: string; question_id: string; question: string }[] {
  return sections.flatMap((section) =>
    section.questions
      .filter((q) => q.required && answers[q.id] === undefined)
      .map((q) => ({ section_id: section.id, question_id: q.id, question: q.question })),
  )
}

/** Answers in questionnaire order, as the API shows them. */
export function answerList(sections: Section[], answers: StoredAnswers) {
  return sections.flatMap((section) =>
    section.questions.filter((q) => answers[q.id] !== undefined).map((q) => ({ question_id: q.id, ...answers[q.id] })),
  )
}
