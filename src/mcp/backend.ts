import type { AuditLog, AuditLogQuery } from '../modules/audit-logs/audit-logs.schemas.js'
import type {
  GovernanceSummary,
  GovernanceSummaryQuery,
} from '../modules/governance-summary/governance-summary.schemas.js'
import type { Model, ModelCreate, ModelListQuery, ModelUpdate } from '../modules/models/models.schemas.js'
import type { PolicyControl, PolicyControlListQuery } from '../modules/policy-controls/policy-controls.schemas.js'
import type { PolicyPack, PolicyPackListQuery } from '../modules/policy-packs/policy-packs.schemas.js'
import type { Dossier } from '../modules/dossier/dossier.schemas.js'
import type {
  AnsweredQuestionnaire,
  AnswersUpdate,
  AttachedQuestionnaire,
  Questionnaire,
  QuestionnaireListQuery,
} from '../modules/questionnaires/questionnaires.schemas.js'
import type { RiskScenarioLinkBody, UseCaseRiskScenario } from '../modules/relationships/relationships.schemas.js'
import type { RiskScenario, RiskScenarioListQuery } from '../modules/risk-scenarios/risk-scenarios.schemas.js'
import type { RiskType, RiskTypeListQuery } from '../modules/risk-types/risk-types.schemas.js'
import type {
  AppliedPolicyPack,
  ApplyPolicyPack,
  ControlEvidence,
  UseCaseControl,
  UseCaseControlListQuery,
  UseCaseControlUpdate,
} from '../modules/use-case-policies/use-case-policies.schemas.js'
import type { UseCase, UseCaseCreate, UseCaseListQuery, UseCaseUpdate } from '../modules/use-cases/use-cases.schemas.js'
import type { Vendor, VendorCreate, VendorListQuery, VendorUpdate } from '../modules/vendors/vendors.schemas.js'
import type { UseCaseWorkflow } from '../modules/workflow-stages/use-case-workflow.schemas.js'
import type { WorkflowStage, WorkflowStageListQuery } from '../modules/workflow-stages/workflow-stages.schemas.js'
import type {
  CustomField,
  CustomFieldCreate,
  CustomFieldListQuery,
} from '../modules/custom-fields/custom-fields.schemas.js'
import type { Team, TeamCreate, TeamListQuery } from '../modules/teams/teams.schemas.js'
import type { User, UserCreate, UserListQuery } from '../modules/users/users.schemas.js'
import type {
  ConfigurationApplied,
  ConfigurationDocument,
  ConfigurationPlan,
} from '../modules/configuration/configuration.schemas.js'
import type { Page } from '../shared/pagination.js'

export type PageArgs = { page_limit?: number; page_after?: string }
export type AnswerTarget = 'use_case' | 'model' | 'vendor'

/**
 * What the MCP tools need from the service, in the wire's shapes (snake_case, as in the HTTP contract),
 * named after the HTTP operationIds. Two implementations: the in-process services (Streamable HTTP at /mcp)
 * and the TypeScript client talking to a running service (stdio mode).
 * Failures are thrown as AppError, or as anything carrying a problem body (see toolError).
 */
export interface GovernanceBackend {
  listUseCases(query: UseCaseListQuery): Promise<Page<UseCase>>
  getUseCase(id: string): Promise<UseCase>
  createUseCase(input: UseCaseCreate): Promise<UseCase>
  updateUseCase(id: string, input: UseCaseUpdate): Promise<UseCase>

  listUseCaseModels(id: string, query: PageArgs): Promise<Page<Model>>
  linkUseCaseModel(id: string, modelId: string): Promise<Model>
  unlinkUseCaseModel(id: string, modelId: string): Promise<void>
  listUseCaseVendors(id: string, query: PageArgs): Promise<Page<Vendor>>
  linkUseCaseVendor(id: string, vendorId: string): Promise<Vendor>
  unlinkUseCaseVendor(id: string, vendorId: string): Promise<void>
  listUseCaseRiskScenarios(id: string, query: PageArgs): Promise<Page<UseCaseRiskScenario>>
  linkUseCaseRiskScenario(id: string, input: RiskScenarioLinkBody): Promise<UseCaseRiskScenario>
  unlinkUseCaseRiskScenario(id: string, riskScenarioId: string): Promise<void>
  listModelVendors(id: string, query: PageArgs): Promise<Page<Vendor>>
  linkModelVendor(id: string, vendorId: string): Promise<Vendor>
  unlinkModelVendor(id: string, vendorId: string): Promise<void>

  listUseCasePolicyPacks(id: string, query: PageArgs): Promise<Page<AppliedPolicyPack>>
  applyPolicyPack(id: string, input: ApplyPolicyPack): Promise<AppliedPolicyPack>
  listUseCaseControls(id: string, query: UseCaseControlListQuery): Promise<Page<UseCaseControl>>
  updateUseCaseControl(id: string, controlId: string, input: UseCaseControlUpdate): Promise<UseCaseControl>
  listUseCaseQuestionnaires(id: string, query: PageArgs): Promise<Page<AttachedQuestionnaire>>
  getQuestionnaireAnswers(target: AnswerTarget, id: string, key: string): Promise<AnsweredQuestionnaire>
  answerQuestionnaire(
    target: AnswerTarget,
    id: string,
    key: string,
    input: AnswersUpdate,
  ): Promise<AnsweredQuestionnaire>
  listControlEvidence(id: string, controlId: string): Promise<Page<ControlEvidence>>
  getUseCaseDossier(id: string): Promise<Dossier>

  getUseCaseWorkflow(id: string): Promise<UseCaseWorkflow>
  advanceUseCaseWorkflow(id: string): Promise<UseCaseWorkflow>

  listModels(query: ModelListQuery): Promise<Page<Model>>
  getModel(id: string): Promise<Model>
  createModel(input: ModelCreate): Promise<Model>
  updateModel(id: string, input: ModelUpdate): Promise<Model>

  listVendors(query: VendorListQuery): Promise<Page<Vendor>>
  getVendor(id: string): Promise<Vendor>
  createVendor(input: VendorCreate): Promise<Vendor>
  updateVendor(id: string, input: VendorUpdate): Promise<Vendor>

  listRiskTypes(query: RiskTypeListQuery): Promise<Page<RiskType>>
  getRiskType(id: string): Promise<RiskType>
  listRiskScenarios(query: RiskScenarioListQuery): Promise<Page<RiskScenario>>
  getRiskScenario(id: string): Promise<RiskScenario>
  listWorkflowStages(query: WorkflowStageListQuery): Promise<Page<WorkflowStage>>
  getWorkflowStage(id: string): Promise<WorkflowStage>
  listPolicyControls(query: PolicyControlListQuery): Promise<Page<PolicyControl>>
  getPolicyControl(id: string): Promise<PolicyControl>
  listPolicyPacks(query: PolicyPackListQuery): Promise<Page<PolicyPack>>
  getPolicyPack(key: string, version?: number): Promise<PolicyPack>
  listQuestionnaires(query: QuestionnaireListQuery): Promise<Page<Questionnaire>>
  getQuestionnaire(key: string, version?: number): Promise<Questionnaire>

  queryAuditLogs(query: AuditLogQuery): Promise<Page<AuditLog>>
  getAuditLog(id: string): Promise<AuditLog>

  getGovernanceSummary(query: GovernanceSummaryQuery): Promise<GovernanceSummary>

  listUsers(query: UserListQuery): Promise<Page<User>>
  getUser(id: string): Promise<User>
  createUser(input: UserCreate): Promise<User>
  listTeams(query: TeamListQuery): Promise<Page<Team>>
  getTeam(id: string): Promise<Team>
  createTeam(input: TeamCreate): Promise<Team>
  listCustomFields(query: CustomFieldListQuery): Promise<Page<CustomField>>
  getCustomField(id: string): Promise<CustomField>
  createCustomField(input: CustomFieldCreate): Promise<CustomField>

  /** Configuration documents: an object (the JSON form) or YAML text, checked by the service. */
  exportConfiguration(): Promise<ConfigurationDocument>
  planConfiguration(document: ConfigurationInput, prune: boolean): Promise<ConfigurationPlan>
  applyConfiguration(document: ConfigurationInput, prune: boolean, planId?: string): Promise<ConfigurationApplied>
}

export type ConfigurationInput = string | Record<string, unknown>

/** A failure reported by a remote service: carries its problem document (code, detail, errors, request_id) as received. */
export class ProblemError extends Error {
  constructor(readonly problem: { code?: string; detail?: string; [field: string]: unknown }) {
    super(problem.detail ?? 'request failed')
  }
}
