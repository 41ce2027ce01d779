import { parsedJson, parseYaml } from '../modules/configuration/configuration.document.js'
import type { Services } from '../services.js'
import type { Ctx } from '../shared/context.js'
import type { ConfigurationInput, GovernanceBackend } from './backend.js'

const parsed = (document: ConfigurationInput) =>
  typeof document === 'string' ? parseYaml(document) : parsedJson(document)

/** The tools' backend inside the service: the very service objects the HTTP routes call, with the MCP caller's context. */
export function inProcessBackend(s: Services, ctx: Ctx): GovernanceBackend {
  const record = async <T>(linked: Promise<{ record: T }>) => (await linked).record
  return {
    listUseCases: (q) => s.useCases.list(ctx, q),
    getUseCase: (id) => s.useCases.get(ctx, id),
    createUseCase: (input) => s.useCases.create(ctx, input),
    updateUseCase: (id, input) => s.useCases.update(ctx, id, input),

    listUseCaseModels: (id, q) => s.relationships.listUseCaseModels(ctx, id, q),
    linkUseCaseModel: (id, modelId) => record(s.relationships.linkUseCaseModel(ctx, id, modelId)),
    unlinkUseCaseModel: (id, modelId) => s.relationships.unlink(ctx, 'use_case_models', id, modelId),
    listUseCaseVendors: (id, q) => s.relationships.listUseCaseVendors(ctx, id, q),
    linkUseCaseVendor: (id, vendorId) => record(s.relationships.linkUseCaseVendor(ctx, id, vendorId)),
    unlinkUseCaseVendor: (id, vendorId) => s.relationships.unlink(ctx, 'use_case_vendors', id, vendorId),
    listUseCaseRiskScenarios: (id, q) => s.relationships.listUseCaseRiskScenarios(ctx, id, q),
    linkUseCaseRiskScenario: (id, input) => record(s.relationships.linkUseCaseRiskScenario(ctx, id, input)),
    unlinkUseCaseRiskScenario: (id, riskScenarioId) =>
      s.relationships.unlink(ctx, 'use_case_risk_scenarios', id, riskScenarioId),
    listModelVendors: (id, q) => s.relationships.listModelVendors(ctx, id, q),
    linkModelVendor: (id, vendorId) => record(s.relationships.linkModelVendor(ctx, id, vendorId)),
    unlinkModelVendor: (id, vendorId) => s.relationships.unlink(ctx, 'model_vendors', id, vendorId),

    listUseCasePolicyPacks: (id, q) => s.useCasePolicies.listPacks(ctx, id, q),
    applyPolicyPack: (id, input) => s.useCasePolicies.applyPack(ctx, id, input),
    listUseCaseControls: (id, q) => s.useCasePolicies.listControls(ctx, id, q),
    updateUseCaseControl: (id, controlId, input) => s.useCasePolicies.updateControl(ctx, id, controlId, input),
    listUseCaseQuestionnaires: (id, q) => s.questionnaires.listAttached(ctx, 'use_case', id, q),
    getQuestionnaireAnswers: (target, id, key) => s.questionnaires.getAttached(ctx, target, id, key),
    answerQuestionnaire: (target, id, key, input) => s.questionnaires.answer(ctx, target, id, key, input),
    listControlEvidence: (id, controlId) => s.useCasePolicies.listControlEvidence(ctx, id, controlId),
    getUseCaseDossier: (id) => s.dossier.get(ctx, id),

    getUseCaseWorkflow: (id) => s.useCaseWorkflow.get(ctx, id),
    advanceUseCaseWorkflow: (id) => s.useCaseWorkflow.advance(ctx, id),

    listModels: (q) => s.models.list(ctx, q),
    getModel: (id) => s.models.get(ctx, id),
    createModel: (input) => s.models.create(ctx, input),
    updateModel: (id, input) => s.models.update(ctx, id, input),

    listVendors: (q) => s.vendors.list(ctx, q),
    getVendor: (id) => s.vendors.get(ctx, id),
    createVendor: (input) => s.vendors.create(ctx, input),
    updateVendor: (id, input) => s.vendors.update(ctx, id, input),

    listRiskTypes: (q) => s.riskTypes.list(ctx, q),
    getRiskType: (id) => s.riskTypes.get(ctx, id),
    listRiskScenarios: (q) => s.riskScenarios.list(ctx, q),
    getRiskScenario: (id) => s.riskScenarios.get(ctx, id),
    listWorkflowStages: (q) => s.workflowStages.list(ctx, q),
    getWorkflowStage: (id) => s.workflowStages.get(ctx, id),
    listPolicyControls: (q) => s.policyControls.listControls(ctx, q),
    getPolicyControl: (id) => s.policyControls.getControl(ctx, id),
    listPolicyPacks: (q) => s.policyPacks.list(ctx, q),
    getPolicyPack: (key, version) => s.policyPacks.get(ctx, key, version),
    listQuestionnaires: (q) => s.questionnaires.list(ctx, q),
    getQuestionnaire: (key, version) => s.questionnaires.get(ctx, key, version),

    queryAuditLogs: (q) => s.auditLogs.list(ctx, q),
    getAuditLog: (id) => s.auditLogs.get(ctx, id),

    getGovernanceSummary: (q) => s.governanceSummary.get(ctx, q),

    listUsers: (q) => s.users.list(ctx, q),
    getUser: (id) => s.users.get(ctx, id),
    createUser: (input) => s.users.create(ctx, input),
    listTeams: (q) => s.teams.list(ctx, q),
    getTeam: (id) => s.teams.get(ctx, id),
    createTeam: (input) => s.teams.create(ctx, input),
    listCustomFields: (q) => s.customFields.list(ctx, q),
    getCustomField: (id) => s.customFields.get(ctx, id),
    createCustomField: (input) => s.customFields.create(ctx, input),

    exportConfiguration: async () => JSON.parse(await s.configuration.export(ctx, 'json')),
    planConfiguration: (document, prune) => s.configuration.plan(ctx, parsed(document), prune),
    applyConfiguration: (document, prune, planId) => s.configuration.apply(ctx, parsed(document), { prune, planId }),
  }
}
