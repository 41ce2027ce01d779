import { type Static, Type } from 'typebox'
import { Owner } from '../../shared/governed.schemas.js'
import { Nullable } from '../../shared/schemas.js'
import { RiskCategoryLevel } from '../use-cases/use-cases.schemas.js'

const Day = Type.String({ format: 'date', description: 'YYYY-MM-DD', examples: ['2027-08-02'] })
const Count = Type.Integer({ minimum: 0 })

export const GovernanceSummaryQuery = Type.Object(
  {
    as_of: Type.Optional(
      Type.String({
        format: 'date',
        description: 'The day against which due dates are judged overdue (YYYY-MM-DD); today (UTC) when absent.',
      }),
    ),
    overdue_limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 100,
        default: 50,
        description: 'How many use cases with overdue controls to list (1-100).',
      }),
    ),
  },
  { additionalProperties: false },
)
export type GovernanceSummaryQuery = Static<typeof GovernanceSummaryQuery>

export const OverdueUseCase = Type.Object({
  id: Type.String(),
  name: Type.String(),
  risk_category_level: Nullable(RiskCategoryLevel),
  overdue_controls: Count,
  earliest_due_date: Day,
})
export type OverdueUseCase = Static<typeof OverdueUseCase>

export const GovernanceSummary = Type.Object(
  {
    as_of: Day,
    use_cases: Type.Object({
      total: Count,
      by_risk_level: Type.Object({ high: Count, medium: Count, low: Count, none: Count, unset: Count }),
      by_workflow_stage: Type.Array(
        Type.Object({
          stage_id: Nullable(Type.String()),
          stage_name: Nullable(Type.String()),
          position: Nullable(Type.Integer()),
          total: Count,
          by_step: Type.Record(Type.String(), Count, {
            description: 'Use cases in this stage per step (assessment, evidence_collection, clear, rejected).',
          }),
        }),
        { description: 'In workflow order; only stages holding use cases.' },
      ),
    }),
    controls: Type.Object({
      total: Count,
      by_status: Type.Object({ pending: Count, in_progress: Count, implemented: Count, not_applicable: Count }),
      overdue: Type.Integer({
        minimum: 0,
        description:
          'Controls whose due date is before as_of and whose status is neither implemented nor not_applicable.',
      }),
      open_by_assignee: Type.Array(
        Type.Object({ assignee: Nullable(Owner, { description: 'null: not assigned.' }), open: Count, overdue: Count }),
        {
          description:
            'Open (pending or in_progress) controls per assignee, most open first (unassigned after assignees with as many); only assignees holding open controls.',
        },
      ),
      missing_evidence: Type.Integer({
        minimum: 0,
        description:
          'Applicable controls (not not_applicable) with a required evidence requirement that has no evidence linked.',
      }),
    }),
    questionnaires: Type.Object(
      {
        attached: Count,
        complete: Type.Integer({
          minimum: 0,
          description: 'Attachments to use cases whose required questions are all answered.',
        }),
        incomplete: Count,
        use_cases: Type.Object(
          {
            complete: Type.Integer({
              minimum: 0,
              description: 'Use cases with questionnaires attached, the required questions of each all answered.',
            }),
            incomplete: Type.Integer({
              minimum: 0,
              description: 'Use cases with at least one attached questionnaire missing a required answer.',
            }),
            none: Type.Integer({ minimum: 0, description: 'Use cases with no questionnaire attached.' }),
          },
          {
            description:
              'Use cases by the completion of their questionnaires: each figure is the length of the use case list filtered by `questionnaire_completion` with that value.',
          },
        ),
      },
      { description: 'Questionnaires attached to use cases, by completion.' },
    ),
    overdue_use_cases: Type.Array(OverdueUseCase, {
      description: 'Use cases with overdue controls: highest risk level first, then most overdue controls.',
    }),
    overdue_use_cases_total: Count,
  },
  {
    examples: [
      {
        as_of: '2027-09-01',
        use_cases: {
          total: 3,
          by_risk_level: { high: 1, medium: 1, low: 0, none: 0, unset: 1 },
          by_workflow_stage: [
            {
              stage_id: 'ws_01jd3k8m9v4q2w6e8r0t2y4u6i',
              stage_name: 'Intake',
              position: 0,
              total: 3,
              by_step: { assessment: 3 },
            },
          ],
        },
        controls: {
          total: 8,
          by_status: { pending: 5, in_progress: 1, implemented: 2, not_applicable: 0 },
          overdue: 4,
          missing_evidence: 3,
          open_by_assignee: [
            {
              assignee: { owner_id: 'team_01jd3k8m9v4q2w6e8r0t2y4u6i', owner_type: 'team', name: 'Credit risk' },
              open: 4,
              overdue: 3,
            },
            { assignee: null, open: 2, overdue: 1 },
          ],
        },
        questionnaires: { attached: 3, complete: 1, incomplete: 2, use_cases: { complete: 1, incomplete: 1, none: 1 } },
        overdue_use_cases: [
          {
            id: 'uc_01jd3k8m9v4q2w6e8r0t2y4u6i',
            name: 'Credit scoring',
            risk_category_level: 'high',
            overdue_controls: 4,
            earliest_due_date: '2027-08-02',
          },
        ],
        overdue_use_cases_total: 1,
      },
    ],
  },
)
export type GovernanceSummary = Static<typeof GovernanceSummary>
