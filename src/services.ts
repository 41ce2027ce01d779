import type { Deps } from './shared/deps.js'
import { createApiKeysService } from './modules/api-keys/api-keys.service.js'
import { createAuditLogsService } from './modules/audit-logs/audit-logs.service.js'
import { createAuthService } from './modules/auth/auth.service.js'
import { createModelsService } from './modules/models/models.service.js'
import { createRelationshipsService } from './modules/relationships/relationships.service.js'
import { createRiskScenariosService } from './modules/risk-scenarios/risk-scenarios.service.js'
import { createRiskTypesService } from './modules/risk-types/risk-types.service.js'
import { createPolicyControlsService } from './modules/policy-controls/policy-controls.service.js'
import { createPolicyPacksService } from './modules/policy-packs/policy-packs.service.js'
import { createQuestionnairesService } from './modules/questionnaires/questionnaires.service.js'
import { createUseCasePoliciesService } from './modules/use-case-policies/use-case-policies.service.js'
import { createUseCasesService } from './modules/use-cases/use-cases.service.js'
import { createVendorsService } from './modules/vendors/vendors.service.js'
import { createUseCaseWorkflowService } from './modules/workflow-stages/use-case-workflow.service.js'
import { createWorkflowStagesService } from './modules/workflow-stages/workflow-stages.service.js'
import { createGovernanceSummaryService } from './modules/governance-summary/governance-summary.service.js'
import { createCustomFieldsService } from './modules/custom-fields/custom-fields.service.js'
import { createTeamsService } from './modules/teams/teams.service.js'
import { createSsoService } from './modules/sso/sso.service.js'
import { createUsersService } from './modules/users/users.service.js'
import { createDossierService } from './modules/dossier/dossier.service.js'
import { createEvidenceService } from './modules/evidence/evidence.service.js'
import { createEventsService } from './modules/events/events.service.js'
import { createWebhooksService } from './modules/webhooks/webhooks.service.js'
import { createSessionsService } from './modules/sessions/sessions.service.js'
import { createConfigurationService } from './modules/configuration/configuration.service.js'

export type Services = ReturnType<typeof createServices>

/** Every family's service, built once: the HTTP routes and the MCP tools call these same objects. */
export function createServices(deps: Deps) {
  const services = {
    auth: createAuthService(deps),
    apiKeys: createApiKeysService(deps),
    useCases: createUseCasesService(deps),
    auditLogs: createAuditLogsService(deps),
    models: createModelsService(deps),
    vendors: createVendorsService(deps),
    riskTypes: createRiskTypesService(deps),
    riskScenarios: createRiskScenariosService(deps),
    relationships: createRelationshipsService(deps),
    workflowStages: createWorkflowStagesService(deps),
    useCaseWorkflow: createUseCaseWorkflowService(deps),
    policyControls: createPolicyControlsService(deps),
    policyPacks: createPolicyPacksService(deps),
    useCasePolicies: createUseCasePoliciesService(deps),
    questionnaires: createQuestionnairesService(deps),
    governanceSummary: createGovernanceSummaryService(deps),
    users: createUsersService(deps),
    teams: createTeamsService(deps),
    customFields: createCustomFieldsService(deps),
    evidence: createEvidenceService(deps),
    webhooks: createWebhooksService(deps),
    events: createEventsService(deps),
    sessions: createSessionsService(deps),
  }
  return {
    ...services,
    sso: createSsoService(deps, services.sessions),
    dossier: createDossierService(deps, services),
    configuration: createConfigurationService(deps, services),
  }
}
