import { type Static, Type } from 'typebox'
import { AuditLog } from '../audit-logs/audit-logs.schemas.js'
import { Evidence } from '../evidence/evidence.schemas.js'
import { Model } from '../models/models.schemas.js'
import { AnsweredQuestionnaire, Section } from '../questionnaires/questionnaires.schemas.js'
import { UseCaseRiskScenario } from '../relationships/relationships.schemas.js'
import { AppliedPolicyPack, UseCaseControl } from '../use-case-policies/use-case-policies.schemas.js'
import { UseCase } from '../use-cases/use-cases.schemas.js'
import { Vendor } from '../vendors/vendors.schemas.js'
import { UseCaseWorkflow } from '../workflow-stages/use-case-workflow.schemas.js'

export const DossierQuery = Type.Object(
  {
    format: Type.Optional(
      Type.Enum(['json', 'html'], { default: 'json', description: '`html`: one self-contained printable page.' }),
    ),
  },
  { additionalProperties: false },
)
export type DossierQuery = Static<typeof DossierQuery>

export const DossierControl = Type.Object({
  ...UseCaseControl.properties,
  evidence: Type.Array(
    Type.Object({
      requirement: Type.Union([Type.Integer(), Type.Null()]),
      linked_at: Type.String({ format: 'date-time' }),
      evidence: Evidence,
    }),
  ),
})
export type DossierControl = Static<typeof DossierControl>

export const DossierQuestionnaire = Type.Object({ ...AnsweredQuestionnaire.properties, sections: Type.Array(Section) })
export type DossierQuestionnaire = Static<typeof DossierQuestionnaire>

export const Dossier = Type.Object({
  generated_at: Type.String({ format: 'date-time' }),
  use_case: UseCase,
  workflow: UseCaseWorkflow,
  workflow_history: Type.Array(AuditLog, {
    description: "The use case's creation and every workflow move, oldest first, from the audit log.",
  }),
  workflow_stage_names: Type.Record(Type.String(), Type.String(), {
    description:
      'The current name of each workflow stage the history refers to, by id (a stage deleted since is absent: its history record keeps the name it had).',
  }),
  models: Type.Array(Model),
  vendors: Type.Array(Vendor),
  risk_scenarios: Type.Array(UseCaseRiskScenario),
  policy_packs: Type.Array(AppliedPolicyPack),
  controls: Type.Array(DossierControl),
  questionnaires: Type.Array(DossierQuestionnaire),
  evidence: Type.Array(Evidence, { description: 'Every piece of evidence the controls and answers use, once each.' }),
  gaps: Type.Object(
    {
      missing_answers: Type.Array(
        Type.Object({
          questionnaire_key: Type.String(),
          section_id: Type.String(),
          question_id: Type.String(),
          question: Type.String(),
        }),
      ),
      missing_evidence: Type.Array(
        Type.Object({
          use_case_control_id: Type.String(),
          control_key: Type.String(),
          requirement: Type.Integer(),
          description: Type.String(),
        }),
      ),
    },
    { description: 'What the workflow gates would still refuse.' },
  ),
})
export type Dossier = Static<typeof Dossier>
