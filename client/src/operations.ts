import type { Camelize } from './case.js'
import type { operations } from './generated/openapi.js'

export interface OperationSpec {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  /** Under /api/v1/integration unless `root`; `{name}` segments are filled from the call's path arguments, in order. */
  path: string
  root?: true
  /** No bearer token (health checks and the token exchange itself). */
  public?: true
  /** A POST that changes state: it gets an Idempotency-Key, which also makes it safe to retry. */
  idempotencyKey?: true
  /** A POST that only reads (or only issues a token): safe to retry as it is. */
  readOnly?: true
  /** What a 2xx answers: a JSON record, a JSON page (`items` + `pagination`), text, a byte stream, or nothing (204). */
  response: 'json' | 'page' | 'text' | 'stream' | 'empty'
  /**
   * `wire`: the body and the answer are documents whose keys are data (a configuration document, a JSON Schema),
   * sent and returned exactly as they are, without the camelCase mapping (which would turn `apiVersion` into
   * `api_version` on the way back).
   */
  keys?: 'wire'
}

/** Every operation of the service, by operationId; `satisfies` makes a route missing here a compile error. */
export const OPERATIONS = {
  getLiveness: { method: 'GET', path: '/livez', root: true, public: true, response: 'json' },
  getReadiness: { method: 'GET', path: '/readyz', root: true, public: true, response: 'json' },
  createToken: { method: 'POST', path: '/auth/token', public: true, readOnly: true, response: 'json' },
  logout: { method: 'POST', path: '/auth/logout', root: true, public: true, response: 'empty' },
  getMe: { method: 'GET', path: '/me', response: 'json' },
  listSessions: { method: 'GET', path: '/sessions', response: 'page' },
  deleteSession: { method: 'DELETE', path: '/sessions/{id}', response: 'empty' },
  getSso: { method: 'GET', path: '/sso', response: 'json' },
  setSso: { method: 'PUT', path: '/sso', response: 'json' },
  deleteSso: { method: 'DELETE', path: '/sso', response: 'empty' },
  getSystem: { method: 'GET', path: '/system', response: 'json' },
  ping: { method: 'GET', path: '/system/ping', response: 'json' },

  listApiKeys: { method: 'GET', path: '/api_keys', response: 'page' },
  getApiKey: { method: 'GET', path: '/api_keys/{id}', response: 'json' },
  createApiKey: { method: 'POST', path: '/api_keys', idempotencyKey: true, response: 'json' },
  revokeApiKey: { method: 'DELETE', path: '/api_keys/{id}', response: 'empty' },

  listUseCases: { method: 'GET', path: '/use_cases', response: 'page' },
  getUseCase: { method: 'GET', path: '/use_cases/{id}', response: 'json' },
  createUseCase: { method: 'POST', path: '/use_cases', idempotencyKey: true, response: 'json' },
  updateUseCase: { method: 'PATCH', path: '/use_cases/{id}', response: 'json' },
  deleteUseCase: { method: 'DELETE', path: '/use_cases/{id}', response: 'empty' },
  listUseCaseModels: { method: 'GET', path: '/use_cases/{id}/models', response: 'page' },
  linkUseCaseModel: { method: 'POST', path: '/use_cases/{id}/models', idempotencyKey: true, response: 'json' },
  unlinkUseCaseModel: { method: 'DELETE', path: '/use_cases/{id}/models/{model_id}', response: 'empty' },
  listUseCaseVendors: { method: 'GET', path: '/use_cases/{id}/vendors', response: 'page' },
  linkUseCaseVendor: { method: 'POST', path: '/use_cases/{id}/vendors', idempotencyKey: true, response: 'json' },
  unlinkUseCaseVendor: { method: 'DELETE', path: '/use_cases/{id}/vendors/{vendor_id}', response: 'empty' },
  listUseCaseRiskScenarios: { method: 'GET', path: '/use_cases/{id}/risk_scenarios', response: 'page' },
  linkUseCaseRiskScenario: {
    method: 'POST',
    path: '/use_cases/{id}/risk_scenarios',
    idempotencyKey: true,
    response: 'json',
  },
  unlinkUseCaseRiskScenario: {
    method: 'DELETE',
    path: '/use_cases/{id}/risk_scenarios/{risk_scenario_id}',
    response: 'empty',
  },
  listUseCasePolicyPacks: { method: 'GET', path: '/use_cases/{id}/policy_packs', response: 'page' },
  getUseCasePolicyPack: { method: 'GET', path: '/use_cases/{id}/policy_packs/{key}', response: 'json' },
  applyPolicyPack: { method: 'POST', path: '/use_cases/{id}/policy_packs', idempotencyKey: true, response: 'json' },
  removePolicyPack: { method: 'DELETE', path: '/use_cases/{id}/policy_packs/{key}', response: 'empty' },
  listUseCaseControls: { method: 'GET', path: '/use_cases/{id}/controls', response: 'page' },
  listTenantControls: { method: 'GET', path: '/use_case_controls', response: 'page' },
  getUseCaseControl: { method: 'GET', path: '/use_cases/{id}/controls/{control_id}', response: 'json' },
  updateUseCaseControl: { method: 'PATCH', path: '/use_cases/{id}/controls/{control_id}', response: 'json' },
  listUseCaseQuestionnaires: { method: 'GET', path: '/use_cases/{id}/questionnaires', response: 'page' },
  getUseCaseQuestionnaire: { method: 'GET', path: '/use_cases/{id}/questionnaires/{key}', response: 'json' },
  attachUseCaseQuestionnaire: {
    method: 'POST',
    path: '/use_cases/{id}/questionnaires',
    idempotencyKey: true,
    response: 'json',
  },
  detachUseCaseQuestionnaire: { method: 'DELETE', path: '/use_cases/{id}/questionnaires/{key}', response: 'empty' },
  answerUseCaseQuestionnaire: { method: 'PUT', path: '/use_cases/{id}/questionnaires/{key}/answers', response: 'json' },
  listControlEvidence: { method: 'GET', path: '/use_cases/{id}/controls/{control_id}/evidence', response: 'page' },
  linkControlEvidence: {
    method: 'POST',
    path: '/use_cases/{id}/controls/{control_id}/evidence',
    idempotencyKey: true,
    response: 'json',
  },
  unlinkControlEvidence: {
    method: 'DELETE',
    path: '/use_cases/{id}/controls/{control_id}/evidence/{evidence_id}',
    response: 'empty',
  },
  getUseCaseDossier: { method: 'GET', path: '/use_cases/{id}/dossier', response: 'json' },
  getUseCaseWorkflow: { method: 'GET', path: '/use_cases/{id}/workflow', response: 'json' },
  setUseCaseWorkflowStage: { method: 'PUT', path: '/use_cases/{id}/workflow', response: 'json' },
  advanceUseCaseWorkflow: {
    method: 'POST',
    path: '/use_cases/{id}/workflow/advance',
    idempotencyKey: true,
    response: 'json',
  },
  rejectUseCaseWorkflow: {
    method: 'POST',
    path: '/use_cases/{id}/workflow/reject',
    idempotencyKey: true,
    response: 'json',
  },

  listModels: { method: 'GET', path: '/models', response: 'page' },
  getModel: { method: 'GET', path: '/models/{id}', response: 'json' },
  createModel: { method: 'POST', path: '/models', idempotencyKey: true, response: 'json' },
  updateModel: { method: 'PATCH', path: '/models/{id}', response: 'json' },
  deleteModel: { method: 'DELETE', path: '/models/{id}', response: 'empty' },
  listModelVendors: { method: 'GET', path: '/models/{id}/vendors', response: 'page' },
  linkModelVendor: { method: 'POST', path: '/models/{id}/vendors', idempotencyKey: true, response: 'json' },
  unlinkModelVendor: { method: 'DELETE', path: '/models/{id}/vendors/{vendor_id}', response: 'empty' },
  listModelQuestionnaires: { method: 'GET', path: '/models/{id}/questionnaires', response: 'page' },
  getModelQuestionnaire: { method: 'GET', path: '/models/{id}/questionnaires/{key}', response: 'json' },
  attachModelQuestionnaire: {
    method: 'POST',
    path: '/models/{id}/questionnaires',
    idempotencyKey: true,
    response: 'json',
  },
  detachModelQuestionnaire: { method: 'DELETE', path: '/models/{id}/questionnaires/{key}', response: 'empty' },
  answerModelQuestionnaire: { method: 'PUT', path: '/models/{id}/questionnaires/{key}/answers', response: 'json' },
  listVendorQuestionnaires: { method: 'GET', path: '/vendors/{id}/questionnaires', response: 'page' },
  getVendorQuestionnaire: { method: 'GET', path: '/vendors/{id}/questionnaires/{key}', response: 'json' },
  attachVendorQuestionnaire: {
    method: 'POST',
    path: '/vendors/{id}/questionnaires',
    idempotencyKey: true,
    response: 'json',
  },
  detachVendorQuestionnaire: { method: 'DELETE', path: '/vendors/{id}/questionnaires/{key}', response: 'empty' },
  answerVendorQuestionnaire: { method: 'PUT', path: '/vendors/{id}/questionnaires/{key}/answers', response: 'json' },

  listVendors: { method: 'GET', path: '/vendors', response: 'page' },
  getVendor: { method: 'GET', path: '/vendors/{id}', response: 'json' },
  createVendor: { method: 'POST', path: '/vendors', idempotencyKey: true, response: 'json' },
  updateVendor: { method: 'PATCH', path: '/vendors/{id}', response: 'json' },
  deleteVendor: { method: 'DELETE', path: '/vendors/{id}', response: 'empty' },
  listVendorUseCases: { method: 'GET', path: '/vendors/{id}/use_cases', response: 'page' },
  listVendorModels: { method: 'GET', path: '/vendors/{id}/models', response: 'page' },

  listRiskTypes: { method: 'GET', path: '/risk_types', response: 'page' },
  getRiskType: { method: 'GET', path: '/risk_types/{id}', response: 'json' },
  createRiskType: { method: 'POST', path: '/risk_types', idempotencyKey: true, response: 'json' },
  updateRiskType: { method: 'PATCH', path: '/risk_types/{id}', response: 'json' },
  deleteRiskType: { method: 'DELETE', path: '/risk_types/{id}', response: 'empty' },

  listRiskScenarios: { method: 'GET', path: '/risk_scenarios', response: 'page' },
  getRiskScenario: { method: 'GET', path: '/risk_scenarios/{id}', response: 'json' },
  createRiskScenario: { method: 'POST', path: '/risk_scenarios', idempotencyKey: true, response: 'json' },
  updateRiskScenario: { method: 'PATCH', path: '/risk_scenarios/{id}', response: 'json' },
  deleteRiskScenario: { method: 'DELETE', path: '/risk_scenarios/{id}', response: 'empty' },

  listWorkflowStages: { method: 'GET', path: '/workflow_stages', response: 'page' },
  getWorkflowStage: { method: 'GET', path: '/workflow_stages/{id}', response: 'json' },
  createWorkflowStage: { method: 'POST', path: '/workflow_stages', idempotencyKey: true, response: 'json' },
  updateWorkflowStage: { method: 'PATCH', path: '/workflow_stages/{id}', response: 'json' },
  deleteWorkflowStage: { method: 'DELETE', path: '/workflow_stages/{id}', response: 'empty' },

  listPolicyControlBases: { method: 'GET', path: '/policy_control_bases', response: 'page' },
  getPolicyControlBase: { method: 'GET', path: '/policy_control_bases/{id}', response: 'json' },
  createPolicyControlBase: { method: 'POST', path: '/policy_control_bases', idempotencyKey: true, response: 'json' },
  updatePolicyControlBase: { method: 'PATCH', path: '/policy_control_bases/{id}', response: 'json' },
  listPolicyControlVersions: { method: 'GET', path: '/policy_control_versions', response: 'page' },
  getPolicyControlVersion: { method: 'GET', path: '/policy_control_versions/{id}', response: 'json' },
  createPolicyControlVersion: {
    method: 'POST',
    path: '/policy_control_versions',
    idempotencyKey: true,
    response: 'json',
  },
  updatePolicyControlVersion: { method: 'PATCH', path: '/policy_control_versions/{id}', response: 'json' },
  publishPolicyControlVersion: {
    method: 'POST',
    path: '/policy_control_versions/{id}/publish',
    idempotencyKey: true,
    response: 'json',
  },
  listPolicyControls: { method: 'GET', path: '/policy_controls', response: 'page' },
  getPolicyControl: { method: 'GET', path: '/policy_controls/{id}', response: 'json' },
  listPolicyPacks: { method: 'GET', path: '/policy_packs', response: 'page' },
  getPolicyPack: { method: 'GET', path: '/policy_packs/{key}', response: 'json' },
  createPolicyPack: { method: 'POST', path: '/policy_packs', idempotencyKey: true, response: 'json' },

  listQuestionnaires: { method: 'GET', path: '/questionnaires', response: 'page' },
  getQuestionnaire: { method: 'GET', path: '/questionnaires/{key}', response: 'json' },
  createQuestionnaire: { method: 'POST', path: '/questionnaires', idempotencyKey: true, response: 'json' },

  listEvidence: { method: 'GET', path: '/evidence', response: 'page' },
  getEvidence: { method: 'GET', path: '/evidence/{id}', response: 'json' },
  createEvidence: { method: 'POST', path: '/evidence', idempotencyKey: true, response: 'json' },
  deleteEvidence: { method: 'DELETE', path: '/evidence/{id}', response: 'empty' },
  downloadEvidence: { method: 'GET', path: '/evidence/{id}/content', response: 'stream' },
  getEvidenceUsage: { method: 'GET', path: '/evidence/usage', response: 'json' },

  listAuditLogs: { method: 'GET', path: '/audit_logs', response: 'page' },
  getAuditLog: { method: 'GET', path: '/audit_logs/{id}', response: 'json' },
  queryAuditLogs: { method: 'POST', path: '/audit_logs/query', readOnly: true, response: 'page' },
  exportAuditLogs: { method: 'GET', path: '/audit_logs/export', response: 'text' },
  verifyAuditLogs: { method: 'GET', path: '/audit_logs/verify', response: 'json' },
  getAuditCheckpoint: { method: 'GET', path: '/audit_logs/checkpoint', response: 'json' },
  getAuditCheckpointPublicKey: { method: 'GET', path: '/audit_logs/checkpoint/public_key', response: 'json' },

  getGovernanceSummary: { method: 'GET', path: '/governance_summary', response: 'json' },

  listUsers: { method: 'GET', path: '/users', response: 'page' },
  getUser: { method: 'GET', path: '/users/{id}', response: 'json' },
  createUser: { method: 'POST', path: '/users', idempotencyKey: true, response: 'json' },
  updateUser: { method: 'PATCH', path: '/users/{id}', response: 'json' },
  deleteUser: { method: 'DELETE', path: '/users/{id}', response: 'empty' },

  listTeams: { method: 'GET', path: '/teams', response: 'page' },
  getTeam: { method: 'GET', path: '/teams/{id}', response: 'json' },
  createTeam: { method: 'POST', path: '/teams', idempotencyKey: true, response: 'json' },
  updateTeam: { method: 'PATCH', path: '/teams/{id}', response: 'json' },
  deleteTeam: { method: 'DELETE', path: '/teams/{id}', response: 'empty' },
  listTeamMembers: { method: 'GET', path: '/teams/{id}/members', response: 'page' },
  addTeamMember: { method: 'POST', path: '/teams/{id}/members', idempotencyKey: true, response: 'json' },
  removeTeamMember: { method: 'DELETE', path: '/teams/{id}/members/{user_id}', response: 'empty' },

  listCustomFields: { method: 'GET', path: '/custom_fields', response: 'page' },
  getCustomField: { method: 'GET', path: '/custom_fields/{id}', response: 'json' },
  createCustomField: { method: 'POST', path: '/custom_fields', idempotencyKey: true, response: 'json' },
  updateCustomField: { method: 'PATCH', path: '/custom_fields/{id}', response: 'json' },
  deleteCustomField: { method: 'DELETE', path: '/custom_fields/{id}', response: 'empty' },

  listWebhookEndpoints: { method: 'GET', path: '/webhook_endpoints', response: 'page' },
  getWebhookEndpoint: { method: 'GET', path: '/webhook_endpoints/{id}', response: 'json' },
  // Their answers hold a one-time secret the service never stores for replays: not retried.
  createWebhookEndpoint: { method: 'POST', path: '/webhook_endpoints', response: 'json' },
  updateWebhookEndpoint: { method: 'PATCH', path: '/webhook_endpoints/{id}', response: 'json' },
  deleteWebhookEndpoint: { method: 'DELETE', path: '/webhook_endpoints/{id}', response: 'empty' },
  rotateWebhookEndpointSecret: { method: 'POST', path: '/webhook_endpoints/{id}/rotate_secret', response: 'json' },
  testWebhookEndpoint: { method: 'POST', path: '/webhook_endpoints/{id}/test', idempotencyKey: true, response: 'json' },
  listWebhookDeliveries: { method: 'GET', path: '/webhook_endpoints/{id}/deliveries', response: 'page' },
  retryWebhookDelivery: {
    method: 'POST',
    path: '/webhook_endpoints/{id}/deliveries/{delivery_id}/retry',
    idempotencyKey: true,
    response: 'json',
  },
  streamEvents: { method: 'GET', path: '/events', response: 'text' },
  exportConfiguration: { method: 'GET', path: '/configuration', response: 'json', keys: 'wire' },
  getConfigurationSchema: { method: 'GET', path: '/configuration/schema', response: 'json', keys: 'wire' },
  planConfiguration: { method: 'POST', path: '/configuration/plan', readOnly: true, response: 'json', keys: 'wire' },
  applyConfiguration: {
    method: 'POST',
    path: '/configuration/apply',
    idempotencyKey: true,
    response: 'json',
    keys: 'wire',
  },
  // receiveWebhookEvent is what the service sends to a receiver (the document's `webhooks`), not a call to it.
} as const satisfies { [K in Exclude<keyof operations, 'receiveWebhookEvent'>]: OperationSpec }

export type OperationId = keyof typeof OPERATIONS

type Op<K extends OperationId> = operations[K]
type Content<R> = R extends { content: { 'application/json': infer J } }
  ? J
  : R extends { content: Record<string, infer T> }
    ? T
    : null
type Success<R> = 200 extends keyof R
  ? Content<R[200]>
  : 201 extends keyof R
    ? Content<R[201]>
    : 202 extends keyof R
      ? Content<R[202]>
      : null

/** Wire (snake_case) shapes of an operation. */
export type WireQuery<K extends OperationId> = NonNullable<Op<K>['parameters']['query']>
export type WireBody<K extends OperationId> =
  NonNullable<Op<K>['requestBody']> extends { content: { 'application/json': infer B } } ? B : never
export type WireData<K extends OperationId> = Success<Op<K>['responses']>

/** camelCase shapes of an operation: what the client takes and gives. */
export type Query<K extends OperationId> = Camelize<WireQuery<K>>
type WireKeys<K extends OperationId> = (typeof OPERATIONS)[K] extends { keys: 'wire' } ? true : false
export type Body<K extends OperationId> = WireKeys<K> extends true ? WireBody<K> : Camelize<WireBody<K>>
export type Data<K extends OperationId> = WireKeys<K> extends true ? WireData<K> : Camelize<WireData<K>>
/** The record type of a list operation. */
export type Item<K extends OperationId> = Data<K> extends { items: (infer I)[] } ? I : never
