import { RecordsPlan } from './records.schemas.js'
import { type Static, Type } from 'typebox'
import { Key, Name } from '../../shared/schemas.js'
import { CustomFieldCreate } from '../custom-fields/custom-fields.schemas.js'
import { PolicyControlBaseCreate, PolicyControlVersionCreate } from '../policy-controls/policy-controls.schemas.js'
import { PolicyPackCreate } from '../policy-packs/policy-packs.schemas.js'
import { QuestionnaireCreate } from '../questionnaires/questionnaires.schemas.js'
import { RiskScenarioCreate } from '../risk-scenarios/risk-scenarios.schemas.js'
import { RiskTypeCreate } from '../risk-types/risk-types.schemas.js'
import { TeamCreate } from '../teams/teams.schemas.js'
import { UserCreate } from '../users/users.schemas.js'
import { WebhookEndpointCreate } from '../webhooks/webhooks.schemas.js'
import { WorkflowStageCreate } from '../workflow-stages/workflow-stages.schemas.js'

/** The document format's version: a reader refuses any other, so a format change is a new apiVersion. */
export const API_VERSION = 'aigov/v1'

const strict = { additionalProperties: false } as const
const names = (what: string) => Type.Optional(Type.Array(Name, { maxItems: 100, description: `${what} names.` }))

// Each object takes the fields of its family's create body (validated like it); references are natural keys.
const stage = WorkflowStageCreate.properties
export const ConfigWorkflowStage = Type.Object(
  {
    name: stage.name,
    description: stage.description,
    assessment_required: stage.assessment_required,
    evidence_collection_required: stage.evidence_collection_required,
  },
  { ...strict, description: 'An intermediate stage; the list order is the stages’ order between start and end.' },
)

const riskType = RiskTypeCreate.properties
export const ConfigRiskType = Type.Object(
  { name: riskType.name, description: riskType.description, custom: riskType.custom, hidden: riskType.hidden },
  strict,
)

const scenario = RiskScenarioCreate.properties
export const ConfigRiskScenario = Type.Object(
  {
    name: scenario.name,
    description: scenario.description,
    risk_types: names('Risk type'),
    domains: scenario.domains,
    industries: scenario.industries,
    regions: scenario.regions,
    archived: scenario.archived,
  },
  strict,
)

const { entity_type_ids: _alias, ...customField } = CustomFieldCreate.properties
export const ConfigCustomField = Type.Object(customField, strict)

const version = PolicyControlVersionCreate.properties
export const ConfigControlVersion = Type.Object(
  {
    version: Type.Integer({ minimum: 1 }),
    status: Type.Optional(Type.Enum(['draft', 'published'], { description: 'Default published.' })),
    name: Name,
    description: version.description,
    evidence_requirements: version.evidence_requirements,
    risk_types: names('Risk type'),
  },
  strict,
)

const base = PolicyControlBaseCreate.properties
export const ConfigControl = Type.Object(
  {
    key: base.key,
    name: base.name,
    archived: Type.Optional(Type.Boolean()),
    deprecated: Type.Optional(Type.Boolean()),
    versions: Type.Array(ConfigControlVersion, { maxItems: 1000 }),
  },
  strict,
)

const pack = PolicyPackCreate.properties
export const ConfigPackVersion = Type.Object(
  {
    version: Type.Integer({ minimum: 1 }),
    name: pack.name,
    description: pack.description,
    controls: Type.Array(Type.Object({ key: Key, version: Type.Integer({ minimum: 1 }) }, strict), { maxItems: 1000 }),
  },
  strict,
)

export const ConfigPack = Type.Object(
  { key: pack.key, versions: Type.Array(ConfigPackVersion, { minItems: 1, maxItems: 1000 }) },
  strict,
)

const questionnaire = QuestionnaireCreate.properties
export const ConfigQuestionnaireVersion = Type.Object(
  {
    version: Type.Integer({ minimum: 1 }),
    name: questionnaire.name,
    description: questionnaire.description,
    target: questionnaire.target,
    sections: questionnaire.sections,
  },
  strict,
)

export const ConfigQuestionnaire = Type.Object(
  { key: questionnaire.key, versions: Type.Array(ConfigQuestionnaireVersion, { minItems: 1, maxItems: 1000 }) },
  strict,
)

const user = UserCreate.properties
export const ConfigUser = Type.Object(
  {
    email: user.email,
    name: user.name,
    title: user.title,
    active: user.active,
    role: Type.Optional(
      Type.Enum(['read', 'write', 'admin'], { description: 'Kept once users carry a role (default read).' }),
    ),
  },
  strict,
)

const team = TeamCreate.properties
export const ConfigTeam = Type.Object(
  {
    name: team.name,
    description: team.description,
    members: Type.Optional(
      Type.Array(Type.String({ maxLength: 320 }), { maxItems: 10_000, description: 'Member emails.' }),
    ),
  },
  strict,
)

const endpoint = WebhookEndpointCreate.properties
export const ConfigWebhookEndpoint = Type.Object(
  { url: endpoint.url, description: endpoint.description, events: endpoint.events, enabled: endpoint.enabled },
  { ...strict, description: 'Without its secret: applying creates one; rotate_secret shows a new one.' },
)

/** A tenant's configuration as code; every section is optional, and a section absent is left alone. */
export const ConfigurationDocument = Type.Object(
  {
    apiVersion: Type.String({ description: `The format version: \`${API_VERSION}\`.`, examples: [API_VERSION] }),
    workflow_stages: Type.Optional(Type.Array(ConfigWorkflowStage, { maxItems: 1000 })),
    risk_types: Type.Optional(Type.Array(ConfigRiskType, { maxItems: 10_000 })),
    risk_scenarios: Type.Optional(Type.Array(ConfigRiskScenario, { maxItems: 10_000 })),
    custom_fields: Type.Optional(Type.Array(ConfigCustomField, { maxItems: 1000 })),
    policy_controls: Type.Optional(Type.Array(ConfigControl, { maxItems: 10_000 })),
    policy_packs: Type.Optional(Type.Array(ConfigPack, { maxItems: 10_000 })),
    questionnaires: Type.Optional(Type.Array(ConfigQuestionnaire, { maxItems: 10_000 })),
    users: Type.Optional(Type.Array(ConfigUser, { maxItems: 100_000 })),
    teams: Type.Optional(Type.Array(ConfigTeam, { maxItems: 10_000 })),
    webhook_endpoints: Type.Optional(Type.Array(ConfigWebhookEndpoint, { maxItems: 50 })),
  },
  {
    ...strict,
    title: 'AI governance tenant configuration',
    examples: [
      {
        apiVersion: API_VERSION,
        risk_types: [{ name: 'Bias', description: 'Unfair outcomes for a group' }],
        workflow_stages: [{ name: 'Legal review', assessment_required: true }],
        teams: [{ name: 'Model risk', members: ['ada@example.com'] }],
        users: [{ email: 'ada@example.com', name: 'Ada Lovelace' }],
      },
    ],
  },
)
export type ConfigurationDocument = Static<typeof ConfigurationDocument>
export type SectionName = Exclude<keyof ConfigurationDocument, 'apiVersion'>

export const ConfigurationQuery = Type.Object(
  {
    prune: Type.Optional(
      Type.Boolean({ default: false, description: 'Plan deletes of what the document’s sections leave out.' }),
    ),
  },
  strict,
)

export const ExportQuery = Type.Object(
  {
    include: Type.Optional(
      Type.Literal('records', {
        description:
          'Answer a bundle (`application/x-tar`): the document, the records as NDJSON and the evidence files.',
      }),
    ),
  },
  strict,
)

export const ApplyQuery = Type.Object(
  {
    prune: Type.Optional(Type.Boolean({ default: false })),
    plan_id: Type.Optional(
      Type.String({ maxLength: 200, description: 'From the plan: 409 if the tenant changed since.' }),
    ),
  },
  strict,
)

export const ConfigurationJsonSchema = Type.Object(
  {},
  { additionalProperties: true, description: 'The JSON Schema (draft 2020-12) of configuration documents.' },
)

export const FieldChange = Type.Object({
  before: Type.Optional(Type.Unknown({ description: 'Absent on a create.' })),
  after: Type.Optional(Type.Unknown({ description: 'Absent on a delete.' })),
})

export const PlanChange = Type.Object({
  section: Type.String({ examples: ['risk_types'] }),
  key: Type.String({ description: 'The natural key: a name, key, email, url or `KEY+version`.' }),
  action: Type.Enum(['create', 'update', 'unchanged', 'delete']),
  changes: Type.Optional(Type.Record(Type.String(), FieldChange)),
  document_version: Type.Optional(
    Type.Integer({ description: 'A new version: the version in the document it is made from.' }),
  ),
  note: Type.Optional(Type.String()),
})
export type PlanChange = Static<typeof PlanChange>

export const ConfigurationPlan = Type.Object({
  plan_id: Type.String(),
  summary: Type.Object({
    create: Type.Integer(),
    update: Type.Integer(),
    unchanged: Type.Integer(),
    delete: Type.Integer(),
  }),
  changes: Type.Array(PlanChange),
  records: Type.Optional(RecordsPlan),
})
export type ConfigurationPlan = Static<typeof ConfigurationPlan>

export const ConfigurationApplied = Type.Object({
  plan_id: Type.String(),
  applied: Type.Integer({ description: 'Changes made (creates, updates, deletes).' }),
  summary: ConfigurationPlan.properties.summary,
  changes: Type.Array(PlanChange),
  records: Type.Optional(RecordsPlan),
})
export type ConfigurationApplied = Static<typeof ConfigurationApplied>
