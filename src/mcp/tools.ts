import type { OperationId } from '@aigov/client'
import { type Static, type TObject, type TProperties, Type } from 'typebox'
import { AuditLogQuery } from '../modules/audit-logs/audit-logs.schemas.js'
import { GovernanceSummaryQuery } from '../modules/governance-summary/governance-summary.schemas.js'
import { ModelCreate, ModelListQuery, ModelUpdate } from '../modules/models/models.schemas.js'
import { PolicyControlListQuery } from '../modules/policy-controls/policy-controls.schemas.js'
import { PolicyPackListQuery } from '../modules/policy-packs/policy-packs.schemas.js'
import {
  AnswersUpdate,
  QUESTIONNAIRE_REF_MAX,
  QuestionnaireListQuery,
  QuestionnaireParams,
} from '../modules/questionnaires/questionnaires.schemas.js'
import {
  LinkListQuery,
  ModelVendorParams,
  RiskScenarioLinkBody,
  UseCaseModelParams,
  UseCaseRiskScenarioParams,
  UseCaseVendorParams,
} from '../modules/relationships/relationships.schemas.js'
import { RiskScenarioListQuery } from '../modules/risk-scenarios/risk-scenarios.schemas.js'
import { RiskTypeListQuery } from '../modules/risk-types/risk-types.schemas.js'
import {
  ApplyPolicyPack,
  ControlEvidenceParams,
  TenantControlListQuery,
  UseCaseControlListQuery,
  UseCaseControlParams,
  UseCaseControlUpdate,
  UseCasePageQuery,
} from '../modules/use-case-policies/use-case-policies.schemas.js'
import { UseCaseCreate, UseCaseListQuery, UseCaseUpdate } from '../modules/use-cases/use-cases.schemas.js'
import { VendorCreate, VendorListQuery, VendorUpdate } from '../modules/vendors/vendors.schemas.js'
import { WorkflowStageListQuery } from '../modules/workflow-stages/workflow-stages.schemas.js'
import { CustomFieldCreate, CustomFieldListQuery } from '../modules/custom-fields/custom-fields.schemas.js'
import { TeamCreate, TeamListQuery } from '../modules/teams/teams.schemas.js'
import { UserCreate, UserListQuery } from '../modules/users/users.schemas.js'
import { canonicalYaml, parsedJson, parseYaml } from '../modules/configuration/configuration.document.js'
import type { ConfigurationDocument } from '../modules/configuration/configuration.schemas.js'
import type { Services } from '../services.js'
import type { Ctx } from '../shared/context.js'
import type { Page } from '../shared/pagination.js'
import { IdParam, KeyParam, VersionQuery } from '../shared/schemas.js'

/** What every tool declares: the text an assistant reads, its argument schema and the role it needs. */
interface ToolText<T extends TObject> {
  title: string
  description: string
  input: T
  /** Changes data: hidden when MCP_READ_ONLY, refused for a read key. */
  write: boolean
  /** A role above the one `write` implies (defining custom fields is an admin's act, as over HTTP). */
  role?: 'admin'
}

/** Argument names of a tool's input. */
type Arg<A> = keyof A & string

/**
 * How a tool's arguments travel on its route, for the HTTP-client backend. Arguments not named here go to the
 * query of a GET or DELETE, and to the JSON body otherwise (no body when the tool has no such argument).
 */
export interface HttpCall<A = Record<string, unknown>> {
  /** The route's operationId, or one per value of argument `by` (which then selects the route and is not sent). */
  operationId: OperationId | { by: Arg<A>; ids: Record<string, OperationId> }
  /** The arguments filling the route's path parameters, in the template's order. */
  path?: Arg<A>[]
  /** Arguments sent as query parameters of a route whose other arguments make its body. */
  query?: Arg<A>[]
  /** The argument that is the whole body (a configuration document: an object as JSON, a string as YAML). */
  body?: Arg<A>
  /** Body fields named differently from their arguments: argument → field. */
  rename?: Partial<Record<Arg<A>, string>>
  /** Arguments that only shape the answer and are never sent. */
  local?: Arg<A>[]
}

/** A tool that is one operation of the service: its route for the HTTP client, the service call the route makes. */
export interface OperationTool<T extends TObject = TObject, R = unknown> extends ToolText<T> {
  http: HttpCall<Static<T>>
  /** The in-process call: the same service method, with the MCP caller's context. */
  service(s: Services, ctx: Ctx, args: Static<T>): Promise<R>
  /** The tool's answer from the operation's data, whichever backend fetched it (default: the data itself). */
  answer?(data: R, args: Static<T>): object
}

/** A tool made of several operations, called through the backend. */
interface ComposedTool<T extends TObject = TObject> extends ToolText<T> {
  run(api: GovernanceBackend, args: Static<T>): Promise<object>
}

// Identity helpers so each entry keeps its own argument and data types.
const operation = <T extends TObject, R>(def: OperationTool<T, R>) => def
const composed = <T extends TObject>(def: ComposedTool<T>) => def

/** Arguments are one flat object: path ids and body/query fields side by side, unknown fields refused. */
const args = <A extends TProperties, B extends TProperties = Record<never, never>>(a: TObject<A>, b?: TObject<B>) =>
  Type.Object({ ...a.properties, ...((b?.properties ?? {}) as B) }, { additionalProperties: false })

const PAGED =
  'Returns {items, pagination: {has_more, next_cursor}}; to get the next page call again with page_after = next_cursor.'

const unlinked = (what: string, ids: Record<string, string>) => ({ unlinked: true, what, ...ids })
// A link route answers the linked record; the service also says whether the link is new.
const record = async <T>(linked: Promise<{ record: T }>) => (await linked).record
const parsed = (document: string | Record<string, unknown>) =>
  typeof document === 'string' ? parseYaml(document) : parsedJson(document)

export const TOOL_TABLE = {
  // --- overview ---
  governance_summary: operation({
    title: 'Governance summary',
    write: false,
    description:
      'Tenant-wide overview: use cases by risk level and by workflow stage/step, use-case controls by status and open controls by assignee, the number of overdue controls (due date before as_of, status pending or in_progress), and the use cases with overdue controls (id, name, risk level, overdue count, earliest due date; highest risk first). Start here for questions like "which high-risk use cases have controls overdue?".',
    input: args(GovernanceSummaryQuery),
    http: { operationId: 'getGovernanceSummary' },
    service: (s, ctx, a) => s.governanceSummary.get(ctx, a),
  }),

  // --- use cases ---
  list_use_cases: operation({
    title: 'List use cases',
    write: false,
    description: `List AI use cases (name, description, risk_category_level high/medium/low/none, owner, custom_fields, workflow stage and step, …). Filter by q (name substring), risk_category_level, workflow_stage_id, workflow_stage_step (assessment/evidence_collection/clear/rejected), created_after/created_before, owner_id, or custom_field_id + custom_field_value (exact value); sort by name/created_at/updated_at ("-" for descending). ${PAGED}`,
    input: args(UseCaseListQuery),
    http: { operationId: 'listUseCases' },
    service: (s, ctx, a) => s.useCases.list(ctx, a),
  }),
  get_use_case: operation({
    title: 'Get a use case',
    write: false,
    description: 'Get one use case by its uc_… id.',
    input: args(IdParam('uc')),
    http: { operationId: 'getUseCase', path: ['id'] },
    service: (s, ctx, a) => s.useCases.get(ctx, a.id),
  }),
  get_use_case_overview: composed({
    title: 'Use case overview',
    write: false,
    description:
      'One use case with everything attached to it: linked models, vendors and risk scenarios (with likelihood/impact), applied policy packs, its controls with their status and due dates (and counts by status), and its workflow position. Same content as the resource governance://use_cases/{id}.',
    input: args(IdParam('uc')),
    run: (api, a): Promise<object> => useCaseOverview(api, a.id),
  }),
  create_use_case: operation({
    title: 'Create a use case',
    write: true,
    description:
      'Register a new AI use case. Only name is required (unique per tenant, case-insensitive: a duplicate is an already_exists error with existing_id), plus any required custom fields. Optional owner ({owner_id: usr_… or team_…}, null clears) and custom_fields ([{custom_field_id, value}], null value clears; see list_custom_fields). It starts in the first workflow stage. Returns the created use case with its uc_… id.',
    input: args(UseCaseCreate),
    http: { operationId: 'createUseCase' },
    service: (s, ctx, a) => s.useCases.create(ctx, a),
  }),
  update_use_case: operation({
    title: 'Update a use case',
    write: true,
    description:
      'Change fields of a use case by id, including owner ({owner_id: usr_… or team_…}, null clears) and custom_fields ([{custom_field_id, value}], null value clears; see list_custom_fields). Only the fields given change; null clears a field. Returns the updated use case.',
    input: args(IdParam('uc'), UseCaseUpdate),
    http: { operationId: 'updateUseCase', path: ['id'] },
    service: (s, ctx, { id, ...changes }) => s.useCases.update(ctx, id, changes),
  }),

  // --- use case links ---
  list_use_case_models: operation({
    title: 'Models of a use case',
    write: false,
    description: `List the models linked to use case id. ${PAGED}`,
    input: args(IdParam('uc'), LinkListQuery),
    http: { operationId: 'listUseCaseModels', path: ['id'] },
    service: (s, ctx, { id, ...q }) => s.relationships.listUseCaseModels(ctx, id, q),
  }),
  link_use_case_model: operation({
    title: 'Link a model to a use case',
    write: true,
    description: 'Link model model_id (mdl_…) to use case id (uc_…). Linking twice is harmless. Returns the model.',
    input: args(UseCaseModelParams),
    http: { operationId: 'linkUseCaseModel', path: ['id'], rename: { model_id: 'id' } },
    service: (s, ctx, a) => record(s.relationships.linkUseCaseModel(ctx, a.id, a.model_id)),
  }),
  unlink_use_case_model: operation({
    title: 'Unlink a model from a use case',
    write: true,
    description: 'Remove the link between use case id and model model_id.',
    input: args(UseCaseModelParams),
    http: { operationId: 'unlinkUseCaseModel', path: ['id', 'model_id'] },
    service: (s, ctx, a) => s.relationships.unlink(ctx, 'use_case_models', a.id, a.model_id),
    answer: (_, a) => unlinked('model', { use_case_id: a.id, model_id: a.model_id }),
  }),
  list_use_case_vendors: operation({
    title: 'Vendors of a use case',
    write: false,
    description: `List the vendors linked to use case id. ${PAGED}`,
    input: args(IdParam('uc'), LinkListQuery),
    http: { operationId: 'listUseCaseVendors', path: ['id'] },
    service: (s, ctx, { id, ...q }) => s.relationships.listUseCaseVendors(ctx, id, q),
  }),
  link_use_case_vendor: operation({
    title: 'Link a vendor to a use case',
    write: true,
    description: 'Link vendor vendor_id (vnd_…) to use case id (uc_…). Linking twice is harmless. Returns the vendor.',
    input: args(UseCaseVendorParams),
    http: { operationId: 'linkUseCaseVendor', path: ['id'], rename: { vendor_id: 'id' } },
    service: (s, ctx, a) => record(s.relationships.linkUseCaseVendor(ctx, a.id, a.vendor_id)),
  }),
  unlink_use_case_vendor: operation({
    title: 'Unlink a vendor from a use case',
    write: true,
    description: 'Remove the link between use case id and vendor vendor_id.',
    input: args(UseCaseVendorParams),
    http: { operationId: 'unlinkUseCaseVendor', path: ['id', 'vendor_id'] },
    service: (s, ctx, a) => s.relationships.unlink(ctx, 'use_case_vendors', a.id, a.vendor_id),
    answer: (_, a) => unlinked('vendor', { use_case_id: a.id, vendor_id: a.vendor_id }),
  }),
  list_use_case_risk_scenarios: operation({
    title: 'Risk scenarios of a use case',
    write: false,
    description: `List the risk scenarios linked to use case id, each with this use case's likelihood and impact (1-5). ${PAGED}`,
    input: args(IdParam('uc'), LinkListQuery),
    http: { operationId: 'listUseCaseRiskScenarios', path: ['id'] },
    service: (s, ctx, { id, ...q }) => s.relationships.listUseCaseRiskScenarios(ctx, id, q),
  }),
  link_use_case_risk_scenario: operation({
    title: 'Link a risk scenario to a use case',
    write: true,
    description:
      'Link risk scenario risk_scenario_id (rs_…) to use case id, optionally with likelihood and impact (1-5). Linking again updates the scores given. Returns the scenario with its scores.',
    input: args(IdParam('uc'), RiskScenarioLinkBody),
    http: { operationId: 'linkUseCaseRiskScenario', path: ['id'] },
    service: (s, ctx, { id, ...body }) => record(s.relationships.linkUseCaseRiskScenario(ctx, id, body)),
  }),
  unlink_use_case_risk_scenario: operation({
    title: 'Unlink a risk scenario from a use case',
    write: true,
    description: 'Remove the link between use case id and risk scenario risk_scenario_id.',
    input: args(UseCaseRiskScenarioParams),
    http: { operationId: 'unlinkUseCaseRiskScenario', path: ['id', 'risk_scenario_id'] },
    service: (s, ctx, a) => s.relationships.unlink(ctx, 'use_case_risk_scenarios', a.id, a.risk_scenario_id),
    answer: (_, a) => unlinked('risk_scenario', { use_case_id: a.id, risk_scenario_id: a.risk_scenario_id }),
  }),

  // --- use case policies and workflow ---
  list_use_case_policy_packs: operation({
    title: 'Policy packs applied to a use case',
    write: false,
    description: `List the policy packs applied to use case id (key, version, due_date). ${PAGED}`,
    input: args(IdParam('uc'), UseCasePageQuery),
    http: { operationId: 'listUseCasePolicyPacks', path: ['id'] },
    service: (s, ctx, { id, ...q }) => s.useCasePolicies.listPacks(ctx, id, q),
  }),
  apply_policy_pack: operation({
    title: 'Apply a policy pack to a use case',
    write: true,
    description:
      'Apply policy pack key (latest version unless version is given) to use case id: creates one pending control per control of the pack, each with due_date if given (YYYY-MM-DD). Applying a key that is already applied is a conflict. Find pack keys with list_policy_packs.',
    input: args(IdParam('uc'), ApplyPolicyPack),
    http: { operationId: 'applyPolicyPack', path: ['id'] },
    service: (s, ctx, { id, ...body }) => s.useCasePolicies.applyPack(ctx, id, body),
  }),
  list_use_case_controls: operation({
    title: 'Controls of a use case',
    write: false,
    description: `List the controls of use case id (from its applied packs) with status (pending/in_progress/implemented/not_applicable), due_date and notes. Filter by status or policy_pack_key. ${PAGED}`,
    input: args(IdParam('uc'), UseCaseControlListQuery),
    http: { operationId: 'listUseCaseControls', path: ['id'] },
    service: (s, ctx, { id, ...q }) => s.useCasePolicies.listControls(ctx, id, q),
  }),
  list_controls: operation({
    title: "The tenant's controls",
    write: false,
    description: `List the controls of every use case, each with its use_case_id and use_case_name: filter by assignee_id (usr_… or team_…: what someone has to do), status, open (true: pending or in_progress), overdue (true: open and due before today) or policy_pack_key. ${PAGED}`,
    input: args(TenantControlListQuery),
    http: { operationId: 'listTenantControls' },
    service: (s, ctx, q) => s.useCasePolicies.listTenantControls(ctx, q),
  }),
  update_control_status: operation({
    title: 'Update a use-case control',
    write: true,
    description:
      'Set the status (pending, in_progress, implemented, not_applicable), notes, due_date (YYYY-MM-DD; null clears) and/or assignee ({owner_id: usr_… or team_…}; null clears) of control control_id (ucc_…) of use case id. Returns the control.',
    input: args(UseCaseControlParams, UseCaseControlUpdate),
    http: { operationId: 'updateUseCaseControl', path: ['id', 'control_id'] },
    service: (s, ctx, { id, control_id, ...body }) => s.useCasePolicies.updateControl(ctx, id, control_id, body),
  }),
  get_use_case_workflow: operation({
    title: 'Workflow position of a use case',
    write: false,
    description:
      'Where use case id is in the governance workflow: its stage and step (assessment, evidence_collection, clear or rejected) and any rejection reason.',
    input: args(IdParam('uc')),
    http: { operationId: 'getUseCaseWorkflow', path: ['id'] },
    service: (s, ctx, a) => s.useCaseWorkflow.get(ctx, a.id),
  }),
  advance_workflow: operation({
    title: 'Advance a use case in the workflow',
    write: true,
    description:
      'Move use case id one step forward: assessment → evidence_collection → clear, then to the next stage. Refused (conflict) when rejected or already clear in the final stage. Returns the new position.',
    input: args(IdParam('uc')),
    http: { operationId: 'advanceUseCaseWorkflow', path: ['id'] },
    service: (s, ctx, a) => s.useCaseWorkflow.advance(ctx, a.id),
  }),
  list_use_case_questionnaires: operation({
    title: 'Questionnaires of a use case',
    write: false,
    description: `List the questionnaires attached to use case id. ${PAGED}`,
    input: args(IdParam('uc'), UseCasePageQuery),
    http: { operationId: 'listUseCaseQuestionnaires', path: ['id'] },
    service: (s, ctx, { id, ...q }) => s.questionnaires.listAttached(ctx, 'use_case', id, q),
  }),

  get_questionnaire_answers: operation({
    title: 'Answers of an attached questionnaire',
    write: false,
    description:
      'The questionnaire with key attached to a use case, model or vendor (target + its id): answers[] (question_id, section_id, value, evidence_ids, answered_by, answered_at) and progress (questions, answered, required, required_answered, complete). Get the questions themselves with get_questionnaire.',
    input: Type.Object(
      {
        target: Type.Enum(['use_case', 'model', 'vendor']),
        id: Type.String({ maxLength: 64, description: 'The uc_…, mdl_… or vnd_… id.' }),
        key: Type.String({ maxLength: QUESTIONNAIRE_REF_MAX, description: 'The questionnaire key, or KEY+version.' }),
      },
      { additionalProperties: false },
    ),
    http: {
      operationId: {
        by: 'target',
        ids: { use_case: 'getUseCaseQuestionnaire', model: 'getModelQuestionnaire', vendor: 'getVendorQuestionnaire' },
      },
      path: ['id', 'key'],
    },
    service: (s, ctx, a) => s.questionnaires.getAttached(ctx, a.target, a.id, a.key),
  }),
  answer_questionnaire: operation({
    title: 'Answer questions of an attached questionnaire',
    write: true,
    description:
      'Sets the listed answers of the questionnaire with key attached to a use case, model or vendor; the others stay; value null clears one. Values must fit the question: text a string, number, boolean, select one of select_options (a list when multiple), file evidence ids (ev_…). Returns the answers and progress. Files are uploaded over HTTP (POST /evidence), not through MCP.',
    input: Type.Object(
      {
        target: Type.Enum(['use_case', 'model', 'vendor']),
        id: Type.String({ maxLength: 64 }),
        key: Type.String({ maxLength: QUESTIONNAIRE_REF_MAX, description: 'The questionnaire key, or KEY+version.' }),
        ...AnswersUpdate.properties,
      },
      { additionalProperties: false },
    ),
    http: {
      operationId: {
        by: 'target',
        ids: {
          use_case: 'answerUseCaseQuestionnaire',
          model: 'answerModelQuestionnaire',
          vendor: 'answerVendorQuestionnaire',
        },
      },
      path: ['id', 'key'],
    },
    service: (s, ctx, { target, id, key, ...body }) => s.questionnaires.answer(ctx, target, id, key, body),
  }),
  list_control_evidence: operation({
    title: 'Evidence of a use-case control',
    write: false,
    description:
      'The evidence linked to control control_id (ucc_…) of use case id: each with the requirement it satisfies and the evidence metadata (title, kind, url or file name, size, sha256, content_path for download over HTTP).',
    input: Type.Object(
      { id: ControlEvidenceParams.properties.id, control_id: ControlEvidenceParams.properties.control_id },
      { additionalProperties: false },
    ),
    http: { operationId: 'listControlEvidence', path: ['id', 'control_id'] },
    service: (s, ctx, a) => s.useCasePolicies.listControlEvidence(ctx, a.id, a.control_id),
  }),
  get_use_case_dossier: operation({
    title: 'Use case dossier',
    write: false,
    description:
      'Everything an auditor asks about one use case: the use case, workflow position and history, models, vendors, risk scenarios, applied packs, controls with status and evidence, questionnaire answers with their questions, the evidence index, and gaps (required answers and evidence still missing, which the workflow gates would refuse).',
    input: args(IdParam('uc')),
    http: { operationId: 'getUseCaseDossier', path: ['id'] },
    service: (s, ctx, a) => s.dossier.get(ctx, a.id),
  }),

  // --- models ---
  list_models: operation({
    title: 'List models',
    write: false,
    description: `List AI models (name, provider, model_type, version, status none/in_development/in_production/retired, owner, custom_fields). Filter by q (name substring), status, owner_id, or custom_field_id + custom_field_value (exact value, e.g. a cloud resource id). ${PAGED}`,
    input: args(ModelListQuery),
    http: { operationId: 'listModels' },
    service: (s, ctx, a) => s.models.list(ctx, a),
  }),
  get_model: operation({
    title: 'Get a model',
    write: false,
    description: 'Get one model by its mdl_… id.',
    input: args(IdParam('mdl')),
    http: { operationId: 'getModel', path: ['id'] },
    service: (s, ctx, a) => s.models.get(ctx, a.id),
  }),
  create_model: operation({
    title: 'Register a model',
    write: true,
    description:
      'Register a new AI model. Only name is required (unique per tenant, case-insensitive: a duplicate is an already_exists error with existing_id), plus any required custom fields. Optional owner ({owner_id: usr_… or team_…}, null clears) and custom_fields ([{custom_field_id, value}], null value clears; see list_custom_fields). Returns the model with its mdl_… id; link it to a use case with link_use_case_model.',
    input: args(ModelCreate),
    http: { operationId: 'createModel' },
    service: (s, ctx, a) => s.models.create(ctx, a),
  }),
  update_model: operation({
    title: 'Update a model',
    write: true,
    description:
      'Change fields of model id, including owner ({owner_id: usr_… or team_…}, null clears) and custom_fields ([{custom_field_id, value}], null value clears; see list_custom_fields). Only the fields given change; null clears a field.',
    input: args(IdParam('mdl'), ModelUpdate),
    http: { operationId: 'updateModel', path: ['id'] },
    service: (s, ctx, { id, ...changes }) => s.models.update(ctx, id, changes),
  }),
  list_model_vendors: operation({
    title: 'Vendors of a model',
    write: false,
    description: `List the vendors linked to model id. ${PAGED}`,
    input: args(IdParam('mdl'), LinkListQuery),
    http: { operationId: 'listModelVendors', path: ['id'] },
    service: (s, ctx, { id, ...q }) => s.relationships.listModelVendors(ctx, id, q),
  }),
  link_model_vendor: operation({
    title: 'Link a vendor to a model',
    write: true,
    description: 'Link vendor vendor_id (vnd_…) to model id (mdl_…). Linking twice is harmless. Returns the vendor.',
    input: args(ModelVendorParams),
    http: { operationId: 'linkModelVendor', path: ['id'], rename: { vendor_id: 'id' } },
    service: (s, ctx, a) => record(s.relationships.linkModelVendor(ctx, a.id, a.vendor_id)),
  }),
  unlink_model_vendor: operation({
    title: 'Unlink a vendor from a model',
    write: true,
    description: 'Remove the link between model id and vendor vendor_id.',
    input: args(ModelVendorParams),
    http: { operationId: 'unlinkModelVendor', path: ['id', 'vendor_id'] },
    service: (s, ctx, a) => s.relationships.unlink(ctx, 'model_vendors', a.id, a.vendor_id),
    answer: (_, a) => unlinked('vendor', { model_id: a.id, vendor_id: a.vendor_id }),
  }),

  // --- vendors ---
  list_vendors: operation({
    title: 'List vendors',
    write: false,
    description: `List vendors (name, website, status active/under_review/inactive, owner, custom_fields). Filter by q (name substring), status, owner_id, or custom_field_id + custom_field_value (exact value). ${PAGED}`,
    input: args(VendorListQuery),
    http: { operationId: 'listVendors' },
    service: (s, ctx, a) => s.vendors.list(ctx, a),
  }),
  get_vendor: operation({
    title: 'Get a vendor',
    write: false,
    description: 'Get one vendor by its vnd_… id.',
    input: args(IdParam('vnd')),
    http: { operationId: 'getVendor', path: ['id'] },
    service: (s, ctx, a) => s.vendors.get(ctx, a.id),
  }),
  create_vendor: operation({
    title: 'Register a vendor',
    write: true,
    description:
      'Register a new vendor. Only name is required (unique per tenant, case-insensitive: a duplicate is an already_exists error with existing_id), plus any required custom fields. Optional owner ({owner_id: usr_… or team_…}, null clears) and custom_fields ([{custom_field_id, value}], null value clears; see list_custom_fields). Returns the vendor with its vnd_… id.',
    input: args(VendorCreate),
    http: { operationId: 'createVendor' },
    service: (s, ctx, a) => s.vendors.create(ctx, a),
  }),
  update_vendor: operation({
    title: 'Update a vendor',
    write: true,
    description:
      'Change fields of vendor id, including owner ({owner_id: usr_… or team_…}, null clears) and custom_fields ([{custom_field_id, value}], null value clears; see list_custom_fields). Only the fields given change; null clears a field.',
    input: args(IdParam('vnd'), VendorUpdate),
    http: { operationId: 'updateVendor', path: ['id'] },
    service: (s, ctx, { id, ...changes }) => s.vendors.update(ctx, id, changes),
  }),

  // --- people and custom fields ---
  list_users: operation({
    title: 'List users',
    write: false,
    description: `List the people records can be owned by or assigned to (email, name, title, active). Filter by email (exact), q (name or email substring) or active. ${PAGED}`,
    input: args(UserListQuery),
    http: { operationId: 'listUsers' },
    service: (s, ctx, a) => s.users.list(ctx, a),
  }),
  get_user: operation({
    title: 'Get a user',
    write: false,
    description: 'Get one user by its usr_… id.',
    input: args(IdParam('usr')),
    http: { operationId: 'getUser', path: ['id'] },
    service: (s, ctx, a) => s.users.get(ctx, a.id),
  }),
  create_user: operation({
    title: 'Add a user',
    write: true,
    description:
      'Add a person to the directory (email required, unique per tenant). Not a login: use the returned usr_… id as an owner or assignee.',
    input: args(UserCreate),
    http: { operationId: 'createUser' },
    service: (s, ctx, a) => s.users.create(ctx, a),
  }),
  list_teams: operation({
    title: 'List teams',
    write: false,
    description: `List teams (groups that can own records or be assigned controls). Filter by q (name substring). ${PAGED}`,
    input: args(TeamListQuery),
    http: { operationId: 'listTeams' },
    service: (s, ctx, a) => s.teams.list(ctx, a),
  }),
  get_team: operation({
    title: 'Get a team',
    write: false,
    description: 'Get one team by its team_… id.',
    input: args(IdParam('team')),
    http: { operationId: 'getTeam', path: ['id'] },
    service: (s, ctx, a) => s.teams.get(ctx, a.id),
  }),
  create_team: operation({
    title: 'Create a team',
    write: true,
    description:
      'Create a team (name unique per tenant, case-insensitive). Use the returned team_… id as an owner or assignee.',
    input: args(TeamCreate),
    http: { operationId: 'createTeam' },
    service: (s, ctx, a) => s.teams.create(ctx, a),
  }),
  list_custom_fields: operation({
    title: 'List custom fields',
    write: false,
    description: `List the tenant's custom fields (name, type string/number/boolean/datetime/user, options, multiple, required, entity_types use_case/model/vendor with [] meaning all, archived). Their ids go in custom_fields of create/update tools and in custom_field_id filters. ${PAGED}`,
    input: args(CustomFieldListQuery),
    http: { operationId: 'listCustomFields' },
    service: (s, ctx, a) => s.customFields.list(ctx, a),
  }),
  get_custom_field: operation({
    title: 'Get a custom field',
    write: false,
    description: 'Get one custom field by its cf_… id.',
    input: args(IdParam('cf')),
    http: { operationId: 'getCustomField', path: ['id'] },
    service: (s, ctx, a) => s.customFields.get(ctx, a.id),
  }),
  create_custom_field: operation({
    title: 'Create a custom field',
    write: true,
    role: 'admin',
    description:
      'Define a custom field (name unique per tenant; needs an admin key, as it changes what every record of the tenant may or must carry). type defaults to string; a select (element_type select) of strings or numbers needs options; entity_types limits it to use_case, model or vendor.',
    input: args(CustomFieldCreate),
    http: { operationId: 'createCustomField' },
    service: (s, ctx, a) => s.customFields.create(ctx, a),
  }),

  // --- catalog: risk types, risk scenarios, workflow stages ---
  list_risk_types: operation({
    title: 'List risk types',
    write: false,
    description: `List risk types (categories of AI risk). Filter by q (name substring). ${PAGED}`,
    input: args(RiskTypeListQuery),
    http: { operationId: 'listRiskTypes' },
    service: (s, ctx, a) => s.riskTypes.list(ctx, a),
  }),
  get_risk_type: operation({
    title: 'Get a risk type',
    write: false,
    description: 'Get one risk type by its rt_… id.',
    input: args(IdParam('rt')),
    http: { operationId: 'getRiskType', path: ['id'] },
    service: (s, ctx, a) => s.riskTypes.get(ctx, a.id),
  }),
  list_risk_scenarios: operation({
    title: 'List risk scenarios',
    write: false,
    description: `List risk scenarios (concrete ways an AI system can cause harm), with their risk_type_ids. Filter by q, risk_type_id or archived. ${PAGED}`,
    input: args(RiskScenarioListQuery),
    http: { operationId: 'listRiskScenarios' },
    service: (s, ctx, a) => s.riskScenarios.list(ctx, a),
  }),
  get_risk_scenario: operation({
    title: 'Get a risk scenario',
    write: false,
    description: 'Get one risk scenario by its rs_… id.',
    input: args(IdParam('rs')),
    http: { operationId: 'getRiskScenario', path: ['id'] },
    service: (s, ctx, a) => s.riskScenarios.get(ctx, a.id),
  }),
  list_workflow_stages: operation({
    title: 'List workflow stages',
    write: false,
    description: `List the governance workflow stages in order (start first, end last), with the steps each requires. ${PAGED}`,
    input: args(WorkflowStageListQuery),
    http: { operationId: 'listWorkflowStages' },
    service: (s, ctx, a) => s.workflowStages.list(ctx, a),
  }),
  get_workflow_stage: operation({
    title: 'Get a workflow stage',
    write: false,
    description: 'Get one workflow stage by its ws_… id.',
    input: args(IdParam('ws')),
    http: { operationId: 'getWorkflowStage', path: ['id'] },
    service: (s, ctx, a) => s.workflowStages.get(ctx, a.id),
  }),

  // --- policy library ---
  list_policy_controls: operation({
    title: 'List policy controls',
    write: false,
    description: `List published policy controls (latest version of each): key, name, description, evidence requirements, risk types. Filter by q, key or risk_type_id. ${PAGED}`,
    input: args(PolicyControlListQuery),
    http: { operationId: 'listPolicyControls' },
    service: (s, ctx, a) => s.policyControls.listControls(ctx, a),
  }),
  get_policy_control: operation({
    title: 'Get a policy control',
    write: false,
    description: 'Get the latest published version of a policy control by its base id (pcb_…).',
    input: args(IdParam('pcb')),
    http: { operationId: 'getPolicyControl', path: ['id'] },
    service: (s, ctx, a) => s.policyControls.getControl(ctx, a.id),
  }),
  list_policy_packs: operation({
    title: 'List policy packs',
    write: false,
    description: `List policy packs (named sets of controls, e.g. a regulation's obligations), latest version of each key unless all_versions. Use a pack's key with apply_policy_pack. ${PAGED}`,
    input: args(PolicyPackListQuery),
    http: { operationId: 'listPolicyPacks' },
    service: (s, ctx, a) => s.policyPacks.list(ctx, a),
  }),
  get_policy_pack: operation({
    title: 'Get a policy pack',
    write: false,
    description: 'Get a policy pack by key (or pp_… id) with its controls; the latest version unless version is given.',
    input: args(KeyParam('policy pack'), VersionQuery),
    http: { operationId: 'getPolicyPack', path: ['key'] },
    service: (s, ctx, a) => s.policyPacks.get(ctx, a.key, a.version),
  }),
  list_questionnaires: operation({
    title: 'List questionnaires',
    write: false,
    description: `List questionnaires (assessment forms for use cases, models or vendors), latest version of each key unless all_versions. Filter by key, target or q. ${PAGED}`,
    input: args(QuestionnaireListQuery),
    http: { operationId: 'listQuestionnaires' },
    service: (s, ctx, a) => s.questionnaires.list(ctx, a),
  }),
  get_questionnaire: operation({
    title: 'Get a questionnaire',
    write: false,
    description:
      'Get a questionnaire by key, KEY+version (as questionnaire_ids lists it) or q_… id, with its sections and questions; the latest version unless version is given.',
    input: args(QuestionnaireParams, VersionQuery),
    http: { operationId: 'getQuestionnaire', path: ['key'] },
    service: (s, ctx, a) => s.questionnaires.get(ctx, a.key, a.version),
  }),

  // --- configuration as code ---
  configuration_export: operation({
    title: "Export the tenant's configuration",
    write: false,
    description:
      "The tenant's configuration as code: workflow stages, risk types and scenarios, custom fields, policy controls with their versions, packs, questionnaires, users, teams and webhook endpoints (no secrets), matched by natural keys (names, keys, emails, KEY+version), never ids. format json (default) returns {format, document}; yaml returns {format, text}, the canonical YAML. Edit it and pass it to configuration_plan.",
    input: Type.Object(
      { format: Type.Optional(Type.Union([Type.Literal('json'), Type.Literal('yaml')], { default: 'json' })) },
      { additionalProperties: false },
    ),
    http: { operationId: 'exportConfiguration', local: ['format'] },
    service: async (s, ctx) => JSON.parse(await s.configuration.export(ctx, 'json')) as ConfigurationDocument,
    answer: (document, a) =>
      a.format === 'yaml' ? { format: 'yaml', text: canonicalYaml(document) } : { format: 'json', document },
  }),
  configuration_plan: operation({
    title: 'Plan a configuration document',
    write: false,
    description:
      "What applying a configuration document (an object as configuration_export returns it, or YAML text) would change, object by object: create, update (each field's before and after), unchanged, and with prune=true delete (what a section the document carries leaves out). A changed published control, pack or questionnaire version plans a new version. Returns {plan_id, summary, changes}; changes nothing. Errors name each field's JSON pointer (and, in YAML, line and column).",
    input: Type.Object(
      {
        document: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.String({ minLength: 1 })], {
          description: 'The configuration document: its JSON form (an object), or YAML text.',
        }),
        prune: Type.Optional(Type.Boolean({ default: false })),
      },
      { additionalProperties: false },
    ),
    http: { operationId: 'planConfiguration', query: ['prune'], body: 'document' },
    service: (s, ctx, a) => s.configuration.plan(ctx, parsed(a.document), a.prune ?? false),
  }),
  configuration_apply: operation({
    title: 'Apply a configuration document',
    write: true,
    role: 'admin',
    description:
      'Apply a configuration document (as for configuration_plan) in one transaction, or nothing; needs an admin key, as POST /configuration/apply does (it may change users, teams and webhooks). Pass the plan_id of the configuration_plan you showed: if the tenant changed since, it answers a conflict and applies nothing. Returns the plan applied and applied (the number of changes).',
    input: Type.Object(
      {
        document: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.String({ minLength: 1 })], {
          description: 'The configuration document: its JSON form (an object), or YAML text.',
        }),
        prune: Type.Optional(Type.Boolean({ default: false })),
        plan_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
      },
      { additionalProperties: false },
    ),
    http: { operationId: 'applyConfiguration', query: ['prune', 'plan_id'], body: 'document' },
    service: (s, ctx, a) =>
      s.configuration.apply(ctx, parsed(a.document), { prune: a.prune ?? false, planId: a.plan_id }),
  }),

  // --- audit ---
  query_audit_logs: operation({
    title: 'Query the audit log',
    write: false,
    description: `Search the append-only audit log of every change: filter by action (e.g. use_case.created, model.linked; one or a list), resource_type, resource_id, use_case_id, actor_id, source (api/mcp/cli/system), start_time/end_time (RFC 3339), q (resource name substring); sort created_at or -created_at. Each record has who (actor), when, what changed ({field: [before, after]}). ${PAGED}`,
    input: args(AuditLogQuery),
    http: { operationId: 'queryAuditLogs' },
    service: (s, ctx, a) => s.auditLogs.list(ctx, a),
  }),
  get_audit_log: operation({
    title: 'Get an audit record',
    write: false,
    description: 'Get one audit record by its al_… id.',
    input: args(IdParam('al')),
    http: { operationId: 'getAuditLog', path: ['id'] },
    service: (s, ctx, a) => s.auditLogs.get(ctx, a.id),
  }),
}

type Table = typeof TOOL_TABLE
/** The tools that are one operation each: what a backend runs. */
export type OperationName = { [N in keyof Table]: Table[N] extends { service: unknown } ? N : never }[keyof Table]
type ArgsOf<N extends OperationName> = Static<Table[N]['input']>
type DataOf<N extends OperationName> = Awaited<ReturnType<Table[N]['service']>>

/**
 * Runs a tool's operation with its checked arguments, in the wire's shapes (snake_case, as in the HTTP contract).
 * Two implementations derive from TOOL_TABLE: the in-process services (Streamable HTTP at /mcp) and the TypeScript
 * client talking to a running service (stdio mode). Failures are thrown as AppError, or as ProblemError.
 */
export interface GovernanceBackend {
  call<N extends OperationName>(name: N, args: ArgsOf<N>): Promise<DataOf<N>>
}

/** One MCP tool as the server offers and runs it. */
export interface ToolDef extends ToolText<TObject> {
  name: string
  run(api: GovernanceBackend, args: object): Promise<object>
}

/** Every tool, in the order tools/list shows them. */
export const TOOLS: ToolDef[] = Object.entries(TOOL_TABLE as Record<string, OperationTool | ComposedTool>).map(
  ([name, tool]) => ({
    ...tool,
    name,
    run:
      'run' in tool
        ? tool.run
        : async (api, a) => {
            const data = await api.call(name as OperationName, a as never)
            return tool.answer ? tool.answer(data, a as never) : (data as object)
          },
  }),
)

const OVERVIEW_MAX_PAGES = 10

/** Walks a list to its end (at most OVERVIEW_MAX_PAGES pages of 100). */
async function collect<T>(
  fetchPage: (q: { page_limit: number; page_after?: string }) => Promise<Page<T>>,
): Promise<{ items: T[]; truncated: boolean }> {
  const items: T[] = []
  let after: string | undefined
  for (let i = 0; i < OVERVIEW_MAX_PAGES; i++) {
    const page = await fetchPage({ page_limit: 100, ...(after ? { page_after: after } : {}) })
    items.push(...page.items)
    if (!page.pagination.next_cursor) return { items, truncated: false }
    after = page.pagination.next_cursor
  }
  return { items, truncated: true }
}

/** A use case with everything attached to it: what the resource governance://use_cases/{id} shows. */
export async function useCaseOverview(api: GovernanceBackend, id: string) {
  const useCase = await api.call('get_use_case', { id })
  const [models, vendors, riskScenarios, packs, controls, workflow] = await Promise.all([
    collect((q) => api.call('list_use_case_models', { id, ...q })),
    collect((q) => api.call('list_use_case_vendors', { id, ...q })),
    collect((q) => api.call('list_use_case_risk_scenarios', { id, ...q })),
    collect((q) => api.call('list_use_case_policy_packs', { id, ...q })),
    collect((q) => api.call('list_use_case_controls', { id, ...q })),
    api.call('get_use_case_workflow', { id }),
  ])
  const byStatus: Record<string, number> = { pending: 0, in_progress: 0, implemented: 0, not_applicable: 0 }
  for (const control of controls.items) byStatus[control.status] = (byStatus[control.status] ?? 0) + 1
  return {
    use_case: useCase,
    workflow,
    models: models.items,
    vendors: vendors.items,
    risk_scenarios: riskScenarios.items,
    policy_packs: packs.items,
    controls: { total: controls.items.length, by_status: byStatus, items: controls.items },
    truncated: [models, vendors, riskScenarios, packs, controls].some((list) => list.truncated),
  }
}
