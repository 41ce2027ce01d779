import type { FieldError } from '../../http/errors.js'
import type { Tx } from '../../shared/mutation.js'
import { missingRequired, type StoredAnswers } from '../questionnaires/questionnaire-answers.js'
import { attachmentsWithAnswers } from '../questionnaires/questionnaires.service.js'
import type { Section } from '../questionnaires/questionnaires.schemas.js'
import { allControls } from '../use-case-policies/use-case-policies.service.js'
import { controlsWithEvidence } from '../use-case-policies/use-case-policies.service.js'

/** What still blocks a use case's assessment and evidence collection: the gates of the workflow. */

export interface MissingAnswer {
  questionnaire_key: string
  section_id: string
  question_id: string
  question: string
}

export interface MissingEvidence {
  use_case_control_id: string
  control_key: string
  requirement: number
  description: string
}

/** Required questions of the use case's attached questionnaires that have no answer. */
export async function missingAnswers(db: Tx, tenantId: string, useCaseId: string): Promise<MissingAnswer[]> {
  const attachments = await attachmentsWithAnswers(db, tenantId, 'use_case', useCaseId)
  return attachments.flatMap((a) =>
    missingRequired(JSON.parse(a.sections) as Section[], JSON.parse(a.answers) as StoredAnswers).map((m) => ({
      questionnaire_key: a.key,
      ...m,
    })),
  )
}

/** Required evidence requirements without evidence, over every applied control that is not `not_applicable`. */
export async function missingEvidence(db: Tx, tenantId: string, useCaseId: string): Promise<MissingEvidence[]> {
  const rows = (await allControls(db, tenantId, useCaseId))
    .filter((c) => c.status !== 'not_applicable')
    .sort((a, b) => a.control_key.localeCompare(b.control_key))
  const controls = await controlsWithEvidence(db, tenantId, rows)
  return controls.flatMap((c) =>
    c.evidence_requirements
      .filter((r) => r.required && !r.met)
      .map((r) => ({
        use_case_control_id: c.id,
        control_key: c.control_key,
        requirement: r.requirement,
        description: r.description,
      })),
  )
}

export function answerErrors(missing: MissingAnswer[]): FieldError[] {
  return missing.map((m) => ({
    field: `questionnaires/${m.questionnaire_key}/${m.question_id}`,
    message: `required question "${m.question}" is not answered`,
  }))
}

export function evidenceErrors(missing: MissingEvidence[]): FieldError[] {
  return missing.map((m) => ({
    field: `controls/${m.use_case_control_id}/evidence_requirements/${m.requirement}`,
    message: `control ${m.control_key}: required evidence "${m.description}" has none linked`,
  }))
}
