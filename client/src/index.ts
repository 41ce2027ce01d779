export {
  type Bundle,
  type Client,
  type ClientOptions,
  createClient,
  type SessionOptions,
  type UploadMeta,
} from './client.js'
export type { CallOptions } from './core.js'
export {
  type ClientError,
  ClientRequestError,
  type ErrorKind,
  type Problem,
  type ProblemBody,
  type Result,
} from './errors.js'
export { type Camelize, camelize, snakify, type Snakify } from './case.js'
export type { Body, Data, Item, OperationId, Query } from './operations.js'
export { OPERATIONS } from './operations.js'
export type { AuditEvent, StreamOptions } from './events.js'
export { verifyWebhook, type WebhookEvent, WebhookVerificationError } from './webhooks.js'
export type { components, operations, paths } from './generated/openapi.js'

import type { Data, Item } from './operations.js'

/** The records of the service, in camelCase. */
export type UseCase = Data<'getUseCase'>
export type Model = Data<'getModel'>
export type Vendor = Data<'getVendor'>
export type RiskType = Data<'getRiskType'>
export type RiskScenario = Data<'getRiskScenario'>
export type WorkflowStage = Data<'getWorkflowStage'>
export type UseCaseWorkflow = Data<'getUseCaseWorkflow'>
export type PolicyControlBase = Data<'getPolicyControlBase'>
export type PolicyControlVersion = Data<'getPolicyControlVersion'>
export type PolicyControl = Data<'getPolicyControl'>
export type PolicyPack = Data<'getPolicyPack'>
export type AppliedPolicyPack = Data<'getUseCasePolicyPack'>
export type UseCaseControl = Data<'getUseCaseControl'>
export type UseCaseRiskScenario = Item<'listUseCaseRiskScenarios'>
export type Questionnaire = Data<'getQuestionnaire'>
export type AttachedQuestionnaire = Item<'listUseCaseQuestionnaires'>
export type AnsweredQuestionnaire = Data<'getUseCaseQuestionnaire'>
export type Evidence = Data<'getEvidence'>
export type ControlEvidence = Item<'listControlEvidence'>
export type Dossier = Data<'getUseCaseDossier'>
export type AuditLog = Data<'getAuditLog'>
export type ApiKey = Data<'getApiKey'>
export type ApiKeyCreated = Data<'createApiKey'>
export type SystemInfo = Data<'getSystem'>
export type WebhookEndpoint = Data<'getWebhookEndpoint'>
export type WebhookEndpointCreated = Data<'createWebhookEndpoint'>
export type WebhookDelivery = Item<'listWebhookDeliveries'>
export type Page<T> = { items: T[]; pagination: { hasMore: boolean; nextCursor: string | null } }
