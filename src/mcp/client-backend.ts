import { camelize, type Client, type ClientError, type Result, snakify } from '@aigov/client'
import type { ConfigurationInput, GovernanceBackend } from './backend.js'
import { ProblemError } from './backend.js'

/** The problem codes of the client's error kinds that have no problem body (the service never answered). */
const CODE_OF_KIND: Record<string, string> = { timeout: 'unavailable', connection: 'unavailable' }

/** A client failure as the problem document a tool error carries: the service's own when it sent one. */
export function problemOf(error: ClientError): Record<string, unknown> {
  if (typeof error.body === 'object') return error.body as Record<string, unknown>
  return {
    code: CODE_OF_KIND[error.kind] ?? error.kind,
    ...(error.status ? { status: error.status } : {}),
    detail: error.message,
    ...(error.requestId ? { request_id: error.requestId } : {}),
  }
}

/**
 * The tools' backend in stdio mode: the project's TypeScript client calling a running service.
 * Tools speak the wire's snake_case; the client's camelCase is converted at this edge, both ways.
 */
export function clientBackend(client: Client): GovernanceBackend {
  // The client's parameter types are the camelCase view of the same wire schemas the tools validate against.
  const args = (value: unknown) => camelize(value) as never
  const data = async <T>(call: Promise<Result<unknown>>): Promise<T> => {
    const result = await call
    if (result.error) throw new ProblemError(problemOf(result.error))
    return snakify(result.data) as T
  }
  // Configuration documents and plans keep the wire's keys both ways (the client leaves them as they are).
  const wire = async <T>(call: Promise<Result<unknown>>): Promise<T> => {
    const result = await call
    if (result.error) throw new ProblemError(problemOf(result.error))
    return result.data as T
  }
  const configurationCall = (
    operation: 'planConfiguration' | 'applyConfiguration',
    document: ConfigurationInput,
    query: { prune: boolean; planId?: string },
  ) =>
    wire<never>(
      typeof document === 'string'
        ? client.invoke(operation, [], {
            raw: { body: new Blob([document]), contentType: 'application/yaml' },
            query,
          })
        : operation === 'planConfiguration'
          ? client.configuration.plan(document as never, query)
          : client.configuration.apply(document as never, query),
    )
  const done = async (call: Promise<Result<unknown>>): Promise<void> => {
    await data(call)
  }

  const owners = { use_case: client.useCases, model: client.models, vendor: client.vendors }

  return {
    listUseCases: (q) => data(client.useCases.list(args(q))),
    getUseCase: (id) => data(client.useCases.get(id)),
    createUseCase: (input) => data(client.useCases.create(args(input))),
    updateUseCase: (id, input) => data(client.useCases.update(id, args(input))),

    listUseCaseModels: (id, q) => data(client.useCases.models.list(id, args(q))),
    linkUseCaseModel: (id, modelId) => data(client.useCases.models.link(id, modelId)),
    unlinkUseCaseModel: (id, modelId) => done(client.useCases.models.unlink(id, modelId)),
    listUseCaseVendors: (id, q) => data(client.useCases.vendors.list(id, args(q))),
    linkUseCaseVendor: (id, vendorId) => data(client.useCases.vendors.link(id, vendorId)),
    unlinkUseCaseVendor: (id, vendorId) => done(client.useCases.vendors.unlink(id, vendorId)),
    listUseCaseRiskScenarios: (id, q) => data(client.useCases.riskScenarios.list(id, args(q))),
    linkUseCaseRiskScenario: (id, input) => data(client.useCases.riskScenarios.link(id, args(input))),
    unlinkUseCaseRiskScenario: (id, riskScenarioId) => done(client.useCases.riskScenarios.unlink(id, riskScenarioId)),
    listModelVendors: (id, q) => data(client.models.vendors.list(id, args(q))),
    linkModelVendor: (id, vendorId) => data(client.models.vendors.link(id, vendorId)),
    unlinkModelVendor: (id, vendorId) => done(client.models.vendors.unlink(id, vendorId)),

    listUseCasePolicyPacks: (id, q) => data(client.useCases.policyPacks.list(id, args(q))),
    applyPolicyPack: (id, input) => data(client.useCases.policyPacks.apply(id, args(input))),
    listUseCaseControls: (id, q) => data(client.useCases.controls.list(id, args(q))),
    updateUseCaseControl: (id, controlId, input) => data(client.useCases.controls.update(id, controlId, args(input))),
    listUseCaseQuestionnaires: (id, q) => data(client.useCases.questionnaires.list(id, args(q))),
    getQuestionnaireAnswers: (target, id, key) => data(owners[target].questionnaires.get(id, key)),
    answerQuestionnaire: (target, id, key, input) => data(owners[target].questionnaires.answer(id, key, args(input))),
    listControlEvidence: (id, controlId) => data(client.useCases.controls.evidence.list(id, controlId)),
    getUseCaseDossier: (id) => data(client.useCases.dossier(id)),

    getUseCaseWorkflow: (id) => data(client.useCases.workflow.get(id)),
    advanceUseCaseWorkflow: (id) => data(client.useCases.workflow.advance(id)),

    listModels: (q) => data(client.models.list(args(q))),
    getModel: (id) => data(client.models.get(id)),
    createModel: (input) => data(client.models.create(args(input))),
    updateModel: (id, input) => data(client.models.update(id, args(input))),

    listVendors: (q) => data(client.vendors.list(args(q))),
    getVendor: (id) => data(client.vendors.get(id)),
    createVendor: (input) => data(client.vendors.create(args(input))),
    updateVendor: (id, input) => data(client.vendors.update(id, args(input))),

    listRiskTypes: (q) => data(client.riskTypes.list(args(q))),
    getRiskType: (id) => data(client.riskTypes.get(id)),
    listRiskScenarios: (q) => data(client.riskScenarios.list(args(q))),
    getRiskScenario: (id) => data(client.riskScenarios.get(id)),
    listWorkflowStages: (q) => data(client.workflowStages.list(args(q))),
    getWorkflowStage: (id) => data(client.workflowStages.get(id)),
    listPolicyControls: (q) => data(client.policyControls.list(args(q))),
    getPolicyControl: (id) => data(client.policyControls.get(id)),
    listPolicyPacks: (q) => data(client.policyPacks.list(args(q))),
    getPolicyPack: (key, version) => data(client.policyPacks.get(key, version === undefined ? undefined : { version })),
    listQuestionnaires: (q) => data(client.questionnaires.list(args(q))),
    getQuestionnaire: (key, version) =>
      data(client.questionnaires.get(key, version === undefined ? undefined : { version })),

    queryAuditLogs: (q) => data(client.auditLogs.query(args(q))),
    getAuditLog: (id) => data(client.auditLogs.get(id)),

    getGovernanceSummary: (q) => data(client.governanceSummary.get(args(q))),

    listUsers: (q) => data(client.users.list(args(q))),
    getUser: (id) => data(client.users.get(id)),
    createUser: (input) => data(client.users.create(args(input))),
    listTeams: (q) => data(client.teams.list(args(q))),
    getTeam: (id) => data(client.teams.get(id)),
    createTeam: (input) => data(client.teams.create(args(input))),
    listCustomFields: (q) => data(client.customFields.list(args(q))),
    getCustomField: (id) => data(client.customFields.get(id)),
    createCustomField: (input) => data(client.customFields.create(args(input))),

    exportConfiguration: () => wire(client.configuration.export()),
    planConfiguration: (document, prune) => configurationCall('planConfiguration', document, { prune }),
    applyConfiguration: (document, prune, planId) =>
      configurationCall('applyConfiguration', document, { prune, ...(planId !== undefined && { planId }) }),
  }
}
