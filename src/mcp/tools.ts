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
import { canonicalYaml } from '../modules/configuration/configuration.document.js'
import type { Page } from '../shared/pagination.js'
import { IdParam, KeyParam, VersionQuery } from '../shared/schemas.js'
import type { GovernanceBackend } from './backend.js'

/** One MCP tool: its argument schema (built from the families' TypeBox schemas) and the backend call it makes. */
export interface ToolDef<T extends TObject = TObject> {
  name: string
  title: string
  description: string
  input: T
  /** Changes data: hidden when MCP_READ_ONLY, refused for a read key. */
  write: boolean
  /** A role above the one `write` implies (defining custom fields is an admin's act, as over HTTP). */
  role?: 'admin'
  run(api: GovernanceBackend, args: Static<T>): Promise<object>
}

/** Arguments are one flat object: path ids and body/query fields side by side, unknown fields refused. */
const args = <A extends TProperties, B extends TProperties = Record<never, never>>(a: TObject<A>, b?: TObject<B>) =>
  Type.Object({ ...a.properties, ...((b?.properties ?? {}) as B) }, { additionalProperties: false })

const PAGED =
  'Returns {items, pagination: {has_more, next_cursor}}; to get the next page call again with page_after = next_cursor.'

// `as const`-free helper so each entry keeps its own argument type.
const tool = <T extends TObject>(def: ToolDef<T>) => def as unknown as ToolDef

const unlinked = (what: string, ids: Record<string, string>) => ({ unlinked: true, what, ...ids })

export const TOOLS: ToolDef[] = [
  // --- overview ---
  tool({
    name: 'governance_summary',
    title: 'Governance summary',
    write: false,
    description:
      'Tenant-wide overview: use cases by risk level and by workflow stage/step, use-case controls by status and open controls by assignee, the number of overdue controls (due date before as_of, status pending or in_progress), and the use cases with overdue controls (id, name, risk level, overdue count, earliest due date; highest risk first). Start here for questions like "which high-risk use cases have controls overdue?".',
    input: args(GovernanceSummaryQuery),
    run: (api, a) => api.getGovernanceSummary(a),
  }),

  // --- use cases ---
  tool({
    name: 'list_use_cases',
    title: 'List use cases',
    write: false,
    description: `List AI use cases (name, description, risk_category_level high/medium/low/none, owner, custom_fields, workflow stage and step, …). Filter by q (name substring), risk_category_level, workflow_stage_id, workflow_stage_step (assessment/evidence_collection/clear/rejected), created_after/created_before, owner_id, or custom_field_id + custom_field_value (exact value); sort by name/created_at/updated_at ("-" for descending). ${PAGED}`,
    input: args(UseCaseListQuery),
    run: (api, a) => api.listUseCases(a),
  }),
  tool({
    name: 'get_use_case',
    title: 'Get a use case',
    write: false,
    description: 'Get one use case by its uc_… id.',
    input: args(IdParam('uc')),
    run: (api, a) => api.getUseCase(a.id),
  }),
  tool({
    name: 'get_use_case_overview',
    title: 'Use case overview',
    write: false,
    description:
      'One use case with everything attached to it: linked models, vendors and risk scenarios (with likelihood/impact), applied policy packs, its controls with their status and due dates (and counts by status), and its workflow position. Same content as the resource governance://use_cases/{id}.',
    input: args(IdParam('uc')),
    run: (api, a) => useCaseOverview(api, a.id),
  }),
  tool({
    name: 'create_use_case',
    title: 'Create a use case',
    write: true,
    description:
      'Register a new AI use case. Only name is required (unique per tenant, case-insensitive: a duplicate is an already_exists error with existing_id), plus any required custom fields. Optional owner ({owner_id: usr_… or team_…}, null clears) and custom_fields ([{custom_field_id, value}], null value clears; see list_custom_fields). It starts in the first workflow stage. Returns the created use case with its uc_… id.',
    input: args(UseCaseCreate),
    run: (api, a) => api.createUseCase(a),
  }),
  tool({
    name: 'update_use_case',
    title: 'Update a use case',
    write: true,
    description:
      'Change fields of a use case by id, including owner ({owner_id: usr_… or team_…}, null clears) and custom_fields ([{custom_field_id, value}], null value clears; see list_custom_fields). Only the fields given change; null clears a field. Returns the updated use case.',
    input: args(IdParam('uc'), UseCaseUpdate),
    run: (api, { id, ...changes }) => api.updateUseCase(id, changes),
  }),

  // --- use case links ---
  tool({
    name: 'list_use_case_models',
    title: 'Models of a use case',
    write: false,
    description: `List the models linked to use case id. ${PAGED}`,
    input: args(IdParam('uc'), LinkListQuery),
    run: (api, { id, ...q }) => api.listUseCaseModels(id, q),
  }),
  tool({
    name: 'link_use_case_model',
    title: 'Link a model to a use case',
    write: true,
    description: 'Link model model_id (mdl_…) to use case id (uc_…). Linking twice is harmless. Returns the model.',
    input: args(UseCaseModelParams),
    run: (api, a) => api.linkUseCaseModel(a.id, a.model_id),
  }),
  tool({
    name: 'unlink_use_case_model',
    title: 'Unlink a model from a use case',
    write: true,
    description: 'Remove the link between use case id and model model_id.',
    input: args(UseCaseModelParams),
    run: async (api, a) => (
      await api.unlinkUseCaseModel(a.id, a.model_id), unlinked('model', { use_case_id: a.id, model_id: a.model_id })
    ),
  }),
  tool({
    name: 'list_use_case_vendors',
    title: 'Vendors of a use case',
    write: false,
    description: `List the vendors linked to use case id. ${PAGED}`,
    input: args(IdParam('uc'), LinkListQuery),
    run: (api, { id, ...q }) => api.listUseCaseVendors(id, q),
  }),
  tool({
    name: 'link_use_case_vendor',
    title: 'Link a vendor to a use case',
    write: true,
    description: 'Link vendor vendor_id (vnd_…) to use case id (uc_…). Linking twice is harmless. Returns the vendor.',
    input: args(UseCaseVendorParams),
    run: (api, a) => api.linkUseCaseVendor(a.id, a.vendor_id),
  }),
  tool({
    name: 'unlink_use_case_vendor',
    title: 'Unlink a vendor from a use case',
    write: true,
    description: 'Remove the link between use case id and vendor vendor_id.',
    input: args(UseCaseVendorParams),
    run: async (api, a) => (
      await api.unlinkUseCaseVendor(a.id, a.vendor_id),
      unlinked('vendor', { use_case_id: a.id, vendor_id: a.vendor_id })
    ),
  }),
  tool({
    name: 'list_use_case_risk_scenarios',
    title: 'Risk scenarios of a use case',
    write: false,
    description: `List the risk scenarios linked to use case id, each with this use case's likelihood and impact (1-5). ${PAGED}`,
    input: args(IdParam('uc'), LinkListQuery),
    run: (api, { id, ...q }) => api.listUseCaseRiskScenarios(id, q),
  }),
  tool({
    name: 'link_use_case_risk_scenario',
    title: 'Link a risk scenario to a use case',
    write: true,
    description:
      'Link risk scenario risk_scenario_id (rs_…) to use case id, optionally with likelihood and impact (1-5). Linking again updates the scores given. Returns the scenario with its scores.',
    input: args(IdParam('uc'), RiskScenarioLinkBody),
    run: (api, { id, ...body }) => api.linkUseCaseRiskScenario(id, body),
  }),
  tool({
    name: 'unlink_use_case_risk_scenario',
    title: 'Unlink a risk scenario from a use case',
    write: true,
    description: 'Remove the link between use case id and risk scenario risk_scenario_id.',
    input: args(UseCaseRiskScenarioParams),
    run: async (api, a) => (
      await api.unlinkUseCaseRiskScenario(a.id, a.risk_scenario_id),
      unlinked('risk_scenario', { use_case_id: a.id, risk_scenario_id: a.risk_scenario_id })
    ),
  }),

  // --- use case policies and workflow ---
  tool({
    name: 'list_use_case_policy_packs',
    title: 'Policy packs applied to a use case',
    write: false,
    description: `List the policy packs applied to use case id (key, version, due_date). ${PAGED}`,
    input: args(IdParam('uc'), UseCasePageQuery),
    run: (api, { id, ...q }) => api.listUseCasePolicyPacks(id, q),
  }),
  tool({
    name: 'apply_policy_pack',
    title: 'Apply a policy pack to a use case',
    write: true,
    description:
      'Apply policy pack key (latest version unless version is given) to use case id: creates one pending control per control of the pack, each with due_date if given (YYYY-MM-DD). Applying a key that is already applied is a conflict. Find pack keys with list_policy_packs.',
    input: args(IdParam('uc'), ApplyPolicyPack),
    run: (api, { id, ...body }) => api.applyPolicyPack(id, body),
  }),
  tool({
    name: 'list_use_case_controls',
    title: 'Controls of a use case',
    write: false,
    description: `List the controls of use case id (from its applied packs) with status (pending/in_progress/implemented/not_applicable), due_date and notes. Filter by status or policy_pack_key. ${PAGED}`,
    input: args(IdParam('uc'), UseCaseControlListQuery),
    run: (api, { id, ...q }) => api.listUseCaseControls(id, q),
  }),
  tool({
    name: 'update_control_status',
    title: 'Update a use-case control',
    write: true,
    description:
      'Set the status (pending, in_progress, implemented, not_applicable), notes, due_date (YYYY-MM-DD; null clears) and/or assignee ({owner_id: usr_… or team_…}; null clears) of control control_id (ucc_…) of use case id. Returns the control.',
    input: args(UseCaseControlParams, UseCaseControlUpdate),
    run: (api, { id, control_id, ...body }) => api.updateUseCaseControl(id, control_id, body),
  }),
  tool({
    name: 'get_use_case_workflow',
    title: 'Workflow position of a use case',
    write: false,
    description:
      'Where use case id is in the governance workflow: its stage and step (assessment, evidence_collection, clear or rejected) and any rejection reason.',
    input: args(IdParam('uc')),
    run: (api, a) => api.getUseCaseWorkflow(a.id),
  }),
  tool({
    name: 'advance_workflow',
    title: 'Advance a use case in the workflow',
    write: true,
    description:
      'Move use case id one step forward: assessment → evidence_collection → clear, then to the next stage. Refused (conflict) when rejected or already clear in the final stage. Returns the new position.',
    input: args(IdParam('uc')),
    run: (api, a) => api.advanceUseCaseWorkflow(a.id),
  }),
  tool({
    name: 'list_use_case_questionnaires',
    title: 'Questionnaires of a use case',
    write: false,
    description: `List the questionnaires attached to use case id. ${PAGED}`,
    input: args(IdParam('uc'), UseCasePageQuery),
    run: (api, { id, ...q }) => api.listUseCaseQuestionnaires(id, q),
  }),

  tool({
    name: 'get_questionnaire_answers',
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
    run: (api, a) => api.getQuestionnaireAnswers(a.target, a.id, a.key),
  }),
  tool({
    name: 'answer_questionnaire',
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
    run: (api, { target, id, key, ...body }) => api.answerQuestionnaire(target, id, key, body),
  }),
  tool({
    name: 'list_control_evidence',
    title: 'Evidence of a use-case control',
    write: false,
    description:
      'The evidence linked to control control_id (ucc_…) of use case id: each with the requirement it satisfies and the evidence metadata (title, kind, url or file name, size, sha256, content_path for download over HTTP).',
    input: Type.Object(
      { id: ControlEvidenceParams.properties.id, control_id: ControlEvidenceParams.properties.control_id },
      { additionalProperties: false },
    ),
    run: (api, a) => api.listControlEvidence(a.id, a.control_id),
  }),
  tool({
    name: 'get_use_case_dossier',
    title: 'Use case dossier',
    write: false,
    description:
      'Everything an auditor asks about one use case: the use case, workflow position and history, models, vendors, risk scenarios, applied packs, controls with status and evidence, questionnaire answers with their questions, the evidence index, and gaps (required answers and evidence still missing, which the workflow gates would refuse).',
    input: args(IdParam('uc')),
    run: (api, a) => api.getUseCaseDossier(a.id),
  }),

  // --- models ---
  tool({
    name: 'list_models',
    title: 'List models',
    write: false,
    description: `List AI models (name, provider, model_type, version, status none/in_development/in_production/retired, owner, custom_fields). Filter by q (name substring), status, owner_id, or custom_field_id + custom_field_value (exact value, e.g. a cloud resource id). ${PAGED}`,
    input: args(ModelListQuery),
    run: (api, a) => api.listModels(a),
  }),
  tool({
    name: 'get_model',
    title: 'Get a model',
    write: false,
    description: 'Get one model by its mdl_… id.',
    input: args(IdParam('mdl')),
    run: (api, a) => api.getModel(a.id),
  }),
  tool({
    name: 'create_model',
    title: 'Register a model',
    write: true,
    description:
      'Register a new AI model. Only name is required (unique per tenant, case-insensitive: a duplicate is an already_exists error with existing_id), plus any required custom fields. Optional owner ({owner_id: usr_… or team_…}, null clears) and custom_fields ([{custom_field_id, value}], null value clears; see list_custom_fields). Returns the model with its mdl_… id; link it to a use case with link_use_case_model.',
    input: args(ModelCreate),
    run: (api, a) => api.createModel(a),
  }),
  tool({
    name: 'update_model',
    title: 'Update a model',
    write: true,
    description:
      'Change fields of model id, including owner ({owner_id: usr_… or team_…}, null clears) and custom_fields ([{custom_field_id, value}], null value clears; see list_custom_fields). Only the fields given change; null clears a field.',
    input: args(IdParam('mdl'), ModelUpdate),
    run: (api, { id, ...changes }) => api.updateModel(id, changes),
  }),
  tool({
    name: 'list_model_vendors',
    title: 'Vendors of a model',
    write: false,
    description: `List the vendors linked to model id. ${PAGED}`,
    input: args(IdParam('mdl'), LinkListQuery),
    run: (api, { id, ...q }) => api.listModelVendors(id, q),
  }),
  tool({
    name: 'link_model_vendor',
    title: 'Link a vendor to a model',
    write: true,
    description: 'Link vendor vendor_id (vnd_…) to model id (mdl_…). Linking twice is harmless. Returns the vendor.',
    input: args(ModelVendorParams),
    run: (api, a) => api.linkModelVendor(a.id, a.vendor_id),
  }),
  tool({
    name: 'unlink_model_vendor',
    title: 'Unlink a vendor from a model',
    write: true,
    description: 'Remove the link between model id and vendor vendor_id.',
    input: args(ModelVendorParams),
    run: async (api, a) => (
      await api.unlinkModelVendor(a.id, a.vendor_id), unlinked('vendor', { model_id: a.id, vendor_id: a.vendor_id })
    ),
  }),

  // --- vendors ---
  tool({
    name: 'list_vendors',
    title: 'List vendors',
    write: false,
    description: `List vendors (name, website, status active/under_review/inactive, owner, custom_fields). Filter by q (name substring), status, owner_id, or custom_field_id + custom_field_value (exact value). ${PAGED}`,
    input: args(VendorListQuery),
    run: (api, a) => api.listVendors(a),
  }),
  tool({
    name: 'get_vendor',
    title: 'Get a vendor',
    write: false,
    description: 'Get one vendor by its vnd_… id.',
    input: args(IdParam('vnd')),
    run: (api, a) => api.getVendor(a.id),
  }),
  tool({
    name: 'create_vendor',
    title: 'Register a vendor',
    write: true,
    description:
      'Register a new vendor. Only name is required (unique per tenant, case-insensitive: a duplicate is an already_exists error with existing_id), plus any required custom fields. Optional owner ({owner_id: usr_… or team_…}, null clears) and custom_fields ([{custom_field_id, value}], null value clears; see list_custom_fields). Returns the vendor with its vnd_… id.',
    input: args(VendorCreate),
    run: (api, a) => api.createVendor(a),
  }),
  tool({
    name: 'update_vendor',
    title: 'Update a vendor',
    write: true,
    description:
      'Change fields of vendor id, including owner ({owner_id: usr_… or team_…}, null clears) and custom_fields ([{custom_field_id, value}], null value clears; see list_custom_fields). Only the fields given change; null clears a field.',
    input: args(IdParam('vnd'), VendorUpdate),
    run: (api, { id, ...changes }) => api.updateVendor(id, changes),
  }),

  // --- people and custom fields ---
  tool({
    name: 'list_users',
    title: 'List users',
    write: false,
    description: `List the people records can be owned by or assigned to (email, name, title, active). Filter by email (exact), q (name or email substring) or active. ${PAGED}`,
    input: args(UserListQuery),
    run: (api, a) => api.listUsers(a),
  }),
  tool({
    name: 'get_user',
    title: 'Get a user',
    write: false,
    description: 'Get one user by its usr_… id.',
    input: args(IdParam('usr')),
    run: (api, a) => api.getUser(a.id),
  }),
  tool({
    name: 'create_user',
    title: 'Add a user',
    write: true,
    description:
      'Add a person to the directory (email required, unique per tenant). Not a login: use the returned usr_… id as an owner or assignee.',
    input: args(UserCreate),
    run: (api, a) => api.createUser(a),
  }),
  tool({
    name: 'list_teams',
    title: 'List teams',
    write: false,
    description: `List teams (groups that can own records or be assigned controls). Filter by q (name substring). ${PAGED}`,
    input: args(TeamListQuery),
    run: (api, a) => api.listTeams(a),
  }),
  tool({
    name: 'get_team',
    title: 'Get a team',
    write: false,
    description: 'Get one team by its team_… id.',
    input: args(IdParam('team')),
    run: (api, a) => api.getTeam(a.id),
  }),
  tool({
    name: 'create_team',
    title: 'Create a team',
    write: true,
    description:
      'Create a team (name unique per tenant, case-insensitive). Use the returned team_… id as an owner or assignee.',
    input: args(TeamCreate),
    run: (api, a) => api.createTeam(a),
  }),
  tool({
    name: 'list_custom_fields',
    title: 'List custom fields',
    write: false,
    description: `List the tenant's custom fields (name, type string/number/boolean/datetime/user, options, multiple, required, entity_types use_case/model/vendor with [] meaning all, archived). Their ids go in custom_fields of create/update tools and in custom_field_id filters. ${PAGED}`,
    input: args(CustomFieldListQuery),
    run: (api, a) => api.listCustomFields(a),
  }),
  tool({
    name: 'get_custom_field',
    title: 'Get a custom field',
    write: false,
    description: 'Get one custom field by its cf_… id.',
    input: args(IdParam('cf')),
    run: (api, a) => api.getCustomField(a.id),
  }),
  tool({
    name: 'create_custom_field',
    title: 'Create a custom field',
    write: true,
    role: 'admin',
    description:
      'Define a custom field (name unique per tenant; needs an admin key, as it changes what every record of the tenant may or must carry). type defaults to string; a select (element_type select) of strings or numbers needs options; entity_types limits it to use_case, model or vendor.',
    input: args(CustomFieldCreate),
    run: (api, a) => api.createCustomField(a),
  }),

  // --- catalog: risk types, risk scenarios, workflow stages ---
  tool({
    name: 'list_risk_types',
    title: 'List risk types',
    write: false,
    description: `List risk types (categories of AI risk). Filter by q (name substring). ${PAGED}`,
    input: args(RiskTypeListQuery),
    run: (api, a) => api.listRiskTypes(a),
  }),
  tool({
    name: 'get_risk_type',
    title: 'Get a risk type',
    write: false,
    description: 'Get one risk type by its rt_… id.',
    input: args(IdParam('rt')),
    run: (api, a) => api.getRiskType(a.id),
  }),
  tool({
    name: 'list_risk_scenarios',
    title: 'List risk scenarios',
    write: false,
    description: `List risk scenarios (concrete ways an AI system can cause harm), with their risk_type_ids. Filter by q, risk_type_id or archived. ${PAGED}`,
    input: args(RiskScenarioListQuery),
    run: (api, a) => api.listRiskScenarios(a),
  }),
  tool({
    name: 'get_risk_scenario',
    title: 'Get a risk scenario',
    write: false,
    description: 'Get one risk scenario by its rs_… id.',
    input: args(IdParam('rs')),
    run: (api, a) => api.getRiskScenario(a.id),
  }),
  tool({
    name: 'list_workflow_stages',
    title: 'List workflow stages',
    write: false,
    description: `List the governance workflow stages in order (start first, end last), with the steps each requires. ${PAGED}`,
    input: args(WorkflowStageListQuery),
    run: (api, a) => api.listWorkflowStages(a),
  }),
  tool({
    name: 'get_workflow_stage',
    title: 'Get a workflow stage',
    write: false,
    description: 'Get one workflow stage by its ws_… id.',
    input: args(IdParam('ws')),
    run: (api, a) => api.getWorkflowStage(a.id),
  }),

  // --- policy library ---
  tool({
    name: 'list_policy_controls',
    title: 'List policy controls',
    write: false,
    description: `List published policy controls (latest version of each): key, name, description, evidence requirements, risk types. Filter by q, key or risk_type_id. ${PAGED}`,
    input: args(PolicyControlListQuery),
    run: (api, a) => api.listPolicyControls(a),
  }),
  tool({
    name: 'get_policy_control',
    title: 'Get a policy control',
    write: false,
    description: 'Get the latest published version of a policy control by its base id (pcb_…).',
    input: args(IdParam('pcb')),
    run: (api, a) => api.getPolicyControl(a.id),
  }),
  tool({
    name: 'list_policy_packs',
    title: 'List policy packs',
    write: false,
    description: `List policy packs (named sets of controls, e.g. a regulation's obligations), latest version of each key unless all_versions. Use a pack's key with apply_policy_pack. ${PAGED}`,
    input: args(PolicyPackListQuery),
    run: (api, a) => api.listPolicyPacks(a),
  }),
  tool({
    name: 'get_policy_pack',
    title: 'Get a policy pack',
    write: false,
    description: 'Get a policy pack by key (or pp_… id) with its controls; the latest version unless version is given.',
    input: args(KeyParam('policy pack'), VersionQuery),
    run: (api, a) => api.getPolicyPack(a.key, a.version),
  }),
  tool({
    name: 'list_questionnaires',
    title: 'List questionnaires',
    write: false,
    description: `List questionnaires (assessment forms for use cases, models or vendors), latest version of each key unless all_versions. Filter by key, target or q. ${PAGED}`,
    input: args(QuestionnaireListQuery),
    run: (api, a) => api.listQuestionnaires(a),
  }),
  tool({
    name: 'get_questionnaire',
    title: 'Get a questionnaire',
    write: false,
    description:
      'Get a questionnaire by key, KEY+version (as questionnaire_ids lists it) or q_… id, with its sections and questions; the latest version unless version is given.',
    input: args(QuestionnaireParams, VersionQuery),
    run: (api, a) => api.getQuestionnaire(a.key, a.version),
  }),

  // --- configuration as code ---
  tool({
    name: 'configuration_export',
    title: "Export the tenant's configuration",
    write: false,
    description:
      "The tenant's configuration as code: workflow stages, risk types and scenarios, custom fields, policy controls with their versions, packs, questionnaires, users, teams and webhook endpoints (no secrets), matched by natural keys (names, keys, emails, KEY+version), never ids. format json (default) returns {format, document}; yaml returns {format, text}, the canonical YAML. Edit it and pass it to configuration_plan.",
    input: Type.Object(
      { format: Type.Optional(Type.Union([Type.Literal('json'), Type.Literal('yaml')], { default: 'json' })) },
      { additionalProperties: false },
    ),
    run: async (api, a) => {
      const document = await api.exportConfiguration()
      return a.format === 'yaml' ? { format: 'yaml', text: canonicalYaml(document) } : { format: 'json', document }
    },
  }),
  tool({
    name: 'configuration_plan',
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
    run: (api, a) => api.planConfiguration(a.document, a.prune ?? false),
  }),
  tool({
    name: 'configuration_apply',
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
    run: (api, a) => api.applyConfiguration(a.document, a.prune ?? false, a.plan_id),
  }),

  // --- audit ---
  tool({
    name: 'query_audit_logs',
    title: 'Query the audit log',
    write: false,
    description: `Search the append-only audit log of every change: filter by action (e.g. use_case.created, model.linked; one or a list), resource_type, resource_id, use_case_id, actor_id, source (api/mcp/cli/system), start_time/end_time (RFC 3339), q (resource name substring); sort created_at or -created_at. Each record has who (actor), when, what changed ({field: [before, after]}). ${PAGED}`,
    input: args(AuditLogQuery),
    run: (api, a) => api.queryAuditLogs(a),
  }),
  tool({
    name: 'get_audit_log',
    title: 'Get an audit record',
    write: false,
    description: 'Get one audit record by its al_… id.',
    input: args(IdParam('al')),
    run: (api, a) => api.getAuditLog(a.id),
  }),
]

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
  const useCase = await api.getUseCase(id)
  const [models, vendors, riskScenarios, packs, controls, workflow] = await Promise.all([
    collect((q) => api.listUseCaseModels(id, q)),
    collect((q) => api.listUseCaseVendors(id, q)),
    collect((q) => api.listUseCaseRiskScenarios(id, q)),
    collect((q) => api.listUseCasePolicyPacks(id, q)),
    collect((q) => api.listUseCaseControls(id, q)),
    api.getUseCaseWorkflow(id),
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
