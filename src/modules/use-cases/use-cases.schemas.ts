import { type Static, Type } from 'typebox'
import { NamedListQuery, PageOf } from '../../shared/pagination.js'
import { governedEditable, governedFilters, governedRead } from '../../shared/governed.schemas.js'
import { Description, Id, Name, Nullable, StringList, Text, Timestamps } from '../../shared/schemas.js'
import { WorkflowStep } from '../workflow-stages/workflow-steps.js'

export { WorkflowStep }

export const RiskCategoryLevel = Type.Enum(['high', 'medium', 'low', 'none'])

const editable = {
  description: Type.Optional(
    Description({ examples: ['Scores retail credit applications with a gradient-boosted model.'] }),
  ),
  ai_type: Type.Optional(Nullable(Text(100), { examples: ['machine_learning'] })),
  system_type: Type.Optional(Nullable(Text(100), { examples: ['decision_support'] })),
  risk_category_level: Type.Optional(Nullable(RiskCategoryLevel)),
  regions: Type.Optional(Nullable(StringList(50, 100), { examples: [['EU', 'US']] })),
  industries: Type.Optional(Nullable(StringList(50, 100), { examples: [['financial_services']] })),
  source: Type.Optional(Nullable(Text(200), { examples: ['jira'] })),
  creator_id: Type.Optional(Nullable(Text(200))),
  questionnaire_ids: Type.Optional(
    Type.Array(
      Type.String({
        minLength: 1,
        maxLength: 120,
        pattern: '^[A-Za-z0-9][A-Za-z0-9._:-]*(\\+[1-9][0-9]*)?$',
        description: '"KEY+version", or "KEY" for the latest version.',
      }),
      {
        maxItems: 50,
        description:
          'The questionnaires to attach, in the same transaction; on update the list replaces the attached set. Omit it to keep them (null is refused).',
        examples: [['AI-INTAKE+1']],
      },
    ),
  ),
  ...governedEditable,
}

export const UseCase = Type.Object({
  id: Id('uc'),
  name: Name,
  description: Type.Union([Type.String(), Type.Null()]),
  ai_type: Type.Union([Type.String(), Type.Null()]),
  system_type: Type.Union([Type.String(), Type.Null()]),
  risk_category_level: Type.Union([RiskCategoryLevel, Type.Null()]),
  regions: Type.Array(Type.String()),
  industries: Type.Array(Type.String()),
  source: Type.Union([Type.String(), Type.Null()]),
  ...governedRead,
  workflow_stage_id: Type.Union([Type.String(), Type.Null()]),
  workflow_stage_step: Type.Union([WorkflowStep, Type.Null()]),
  questionnaire_ids: Type.Array(Type.String({ description: 'KEY+version' })),
  creator_id: Type.Union([Type.String(), Type.Null()]),
  ...Timestamps,
})
export type UseCase = Static<typeof UseCase>

const QuestionOnCreate = Type.Object(
  {
    question_id: Type.String({ minLength: 1, maxLength: 100 }),
    questionnaire_id: Type.String({
      minLength: 1,
      maxLength: 120,
      description: 'One of questionnaire_ids: "KEY+version", "KEY" or the q_ id.',
    }),
    section_id: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
    value: Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Array(Type.String()), Type.Null()], {
      description: 'As for PUT …/questionnaires/{key}/answers.',
    }),
    evidence_ids: Type.Optional(
      Nullable(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 50, uniqueItems: true })),
    ),
  },
  { additionalProperties: false },
)

export const UseCaseCreate = Type.Object(
  {
    name: Name,
    ...editable,
    questions: Type.Optional(
      Type.Array(QuestionOnCreate, {
        maxItems: 1000,
        description:
          'Answers to questions of the questionnaires in questionnaire_ids, saved in the same transaction (as bulk imports send them). Each value must fit its question (422 naming `questions/<i>/…`).',
      }),
    ),
  },
  {
    additionalProperties: false,
    examples: [
      { name: 'Credit scoring', description: 'Scores retail credit applications.', risk_category_level: 'high' },
    ],
  },
)
export type UseCaseCreate = Static<typeof UseCaseCreate>

export const UseCaseUpdate = Type.Object(
  { name: Type.Optional(Name), ...editable },
  { additionalProperties: false, examples: [{ risk_category_level: 'medium', owner: null }] },
)
export type UseCaseUpdate = Static<typeof UseCaseUpdate>

export const UseCaseListQuery = NamedListQuery({
  risk_category_level: Type.Optional(RiskCategoryLevel),
  workflow_stage_id: Type.Optional(Type.String({ maxLength: 64, description: 'Use cases in this workflow stage.' })),
  workflow_stage_step: Type.Optional(WorkflowStep),
  control_status: Type.Optional(
    Type.Enum(['pending', 'in_progress', 'implemented', 'not_applicable'], {
      description: 'Use cases with at least one control in this status.',
    }),
  ),
  overdue_controls: Type.Optional(
    Type.Boolean({
      description:
        'true: use cases with an overdue control (open, due before today, as the governance summary counts them); false: those without.',
    }),
  ),
  questionnaire_completion: Type.Optional(
    Type.Enum(['complete', 'incomplete', 'none'], {
      description:
        'complete: use cases with questionnaires attached, every required question of each answered; incomplete: with at least one attached questionnaire missing a required answer; none: with no questionnaire attached (as the governance summary counts `questionnaires.use_cases`).',
    }),
  ),
  created_after: Type.Optional(Type.String({ format: 'date-time' })),
  created_before: Type.Optional(Type.String({ format: 'date-time' })),
  ...governedFilters,
})
export type UseCaseListQuery = Static<typeof UseCaseListQuery>

export const UseCasePage = PageOf(UseCase)
