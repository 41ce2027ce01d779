import { type CallOptions, type Core, createCore } from './core.js'
import { ClientRequestError, type Result } from './errors.js'
import { type StreamOptions, streamEvents } from './events.js'
import type { Body, Item, OperationId, Query } from './operations.js'

export interface ClientOptions {
  /** The service's address, e.g. http://localhost:8080. Default: SERVICE_API_URL. */
  baseUrl?: string
  /** Exchanged for a token on first use. Default: SERVICE_API_KEY. */
  apiKey?: string
  /** Default: SERVICE_TENANT, else `default` (the service's bootstrap tenant) when an API key is used. */
  tenant?: string
  /** Used as is: no exchange, no refresh. */
  accessToken?: string
  /** Per attempt. Default 30 000. */
  timeoutMs?: number
  /** Retries of transient failures (429, 502, 503, 504, connection errors). Default 2. */
  maxRetries?: number
  /** Default: the global fetch. */
  fetch?: typeof fetch
  /** First backoff delay before a retry, doubling each time, with jitter. Default 500. */
  retryDelayMs?: number
  /** Longest wait before a retry; a longer Retry-After returns the error instead. Default 30 000. */
  maxRetryDelayMs?: number
  /** Sent with every request (e.g. a User-Agent of your integration). */
  headers?: Record<string, string>
  /**
   * A person's browser session instead of a key or token: the session cookie rides along (same-origin
   * credentials), no token is exchanged, and every write carries `X-CSRF-Token` with what `csrfToken()` returns
   * (the `csrf_token` of `GET /api/v1/integration/me`).
   */
  session?: SessionOptions
}

export interface SessionOptions {
  csrfToken: () => string | undefined
  /** Default `same-origin`; `include` when the console is served from another origin that the service allows. */
  credentials?: 'same-origin' | 'include'
}

/** A list operation's query without the cursor, which `listAll()` manages. */
type WalkQuery<K extends OperationId> = Omit<Query<K>, 'pageAfter'>
type Page<T> = { items: T[]; pagination: { hasMore: boolean; nextCursor: string | null } }

/** Yields every record of a list, page after page; throws ClientRequestError when a page fails. */
async function* walk<T>(
  fetchPage: (pageAfter: string | undefined) => Promise<Result<Page<T>>>,
): AsyncGenerator<T, void, undefined> {
  let cursor: string | undefined
  do {
    const page = await fetchPage(cursor)
    if (page.error) throw new ClientRequestError(page.error)
    yield* page.data.items
    cursor = page.data.pagination.hasMore ? (page.data.pagination.nextCursor ?? undefined) : undefined
  } while (cursor !== undefined)
}

const env = (name: string): string | undefined => {
  const value = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.[name]
  return value === '' ? undefined : value
}

/**
 * A client of the integration API. Every call resolves to `{ data, error }`; it never throws for HTTP or
 * network failures. Options fall back to SERVICE_API_URL, SERVICE_API_KEY and SERVICE_TENANT.
 */
export function createClient(options: ClientOptions = {}) {
  const baseUrl = options.baseUrl ?? env('SERVICE_API_URL')
  if (!baseUrl) throw new TypeError('createClient: pass baseUrl or set SERVICE_API_URL')
  const fetchImpl = options.fetch ?? globalThis.fetch
  if (typeof fetchImpl !== 'function') throw new TypeError('createClient: no fetch available; pass options.fetch')
  const core = createCore({
    baseUrl,
    apiKey: options.apiKey ?? env('SERVICE_API_KEY'),
    // A token or a session names its own tenant: no default there, so X-Tenant never contradicts it.
    tenant:
      options.tenant ??
      (options.session
        ? undefined
        : (env('SERVICE_TENANT') ?? (options.accessToken === undefined ? 'default' : undefined))),
    accessToken: options.accessToken,
    timeoutMs: options.timeoutMs ?? 30_000,
    maxRetries: options.maxRetries ?? 2,
    fetch: (input, init) => fetchImpl(input, init),
    retryDelayMs: options.retryDelayMs ?? 500,
    maxRetryDelayMs: options.maxRetryDelayMs ?? 30_000,
    headers: options.headers ?? {},
    session: options.session,
  })
  return namespaces(core)
}

export type Client = ReturnType<typeof createClient>

type O = CallOptions

/** One namespace per family, named after the operationIds' verbs; each method is one `core.invoke`. */
function namespaces(core: Core) {
  const call = core.invoke
  return {
    /**
     * Any operation by its operationId, with path arguments in template order (e.g. for tools generated from
     * the OpenAPI document); the namespaces below are the idiomatic way in.
     */
    invoke: core.invoke,
    health: {
      live: (o?: O) => call('getLiveness', [], {}, o),
      ready: (o?: O) => call('getReadiness', [], {}, o),
    },
    auth: {
      /** Exchanges the API key for a new token now (the client does this by itself when needed). */
      token: () => core.exchangeToken(),
      /** Signs a browser session out (POST /auth/logout, with the session cookie). */
      logout: (o?: O) => call('logout', [], {}, o),
    },
    /** Who is calling: tenant, role, and the person or API key (with a session's csrf_token). */
    me: {
      get: (o?: O) => call('getMe', [], {}, o),
    },
    /** People's signed-in sessions (admin). */
    sessions: {
      list: (query?: Query<'listSessions'>, o?: O) => call('listSessions', [], { query }, o),
      listAll: (query?: WalkQuery<'listSessions'>, o?: O) =>
        walk<Item<'listSessions'>>((pageAfter) => call('listSessions', [], { query: { ...query, pageAfter } }, o)),
      end: (id: string, o?: O) => call('deleteSession', [id], {}, o),
    },
    /** The tenant's single sign-on identity provider (admin); the client secret is sent, never returned. */
    sso: {
      get: (o?: O) => call('getSso', [], {}, o),
      set: (body: Body<'setSso'>, o?: O) => call('setSso', [], { body }, o),
      remove: (o?: O) => call('deleteSso', [], {}, o),
    },
    /** The tenant's configuration as a document: export it, see what applying one would change, apply it (admin). Documents and plans keep the wire's keys (`apiVersion`, `workflow_stages`, `plan_id`): they pass between tenants and services as exported. */
    configuration: {
      export: (o?: O) => call('exportConfiguration', [], {}, o),
      schema: (o?: O) => call('getConfigurationSchema', [], {}, o),
      plan: (document: Body<'planConfiguration'>, query?: Query<'planConfiguration'>, o?: O) =>
        call('planConfiguration', [], { body: document, query }, o),
      apply: (document: Body<'applyConfiguration'>, query?: Query<'applyConfiguration'>, o?: O) =>
        call('applyConfiguration', [], { body: document, query }, o),
      /** The bundle (`include=records`): a tar of the document, the records as NDJSON and the evidence files, as a stream. */
      exportBundle: (o?: O) =>
        call('exportConfiguration', [], { query: { include: 'records' }, stream: true }, o) as unknown as Promise<
          Result<ReadableStream<Uint8Array>>
        >,
      /** The plan of a bundle (its document's changes and its records'); a stream is sent once, not retried. */
      planBundle: (bundle: Bundle, query?: Query<'planConfiguration'>, o?: O) =>
        call('planConfiguration', [], { raw: bundleBody(bundle), query }, o),
      /** Applies a bundle in one transaction (admin); with `planId`, only if nothing changed since that plan. */
      applyBundle: (bundle: Bundle, query?: Query<'applyConfiguration'>, o?: O) =>
        call('applyConfiguration', [], { raw: bundleBody(bundle), query }, o),
    },
    system: {
      get: (o?: O) => call('getSystem', [], {}, o),
      ping: (o?: O) => call('ping', [], {}, o),
    },
    apiKeys: {
      list: (query?: Query<'listApiKeys'>, o?: O) => call('listApiKeys', [], { query }, o),
      listAll: (query?: WalkQuery<'listApiKeys'>, o?: O) =>
        walk<Item<'listApiKeys'>>((pageAfter) => call('listApiKeys', [], { query: { ...query, pageAfter } }, o)),
      get: (id: string, o?: O) => call('getApiKey', [id], {}, o),
      create: (body: Body<'createApiKey'>, o?: O) => call('createApiKey', [], { body }, o),
      revoke: (id: string, o?: O) => call('revokeApiKey', [id], {}, o),
    },
    useCases: {
      list: (query?: Query<'listUseCases'>, o?: O) => call('listUseCases', [], { query }, o),
      listAll: (query?: WalkQuery<'listUseCases'>, o?: O) =>
        walk<Item<'listUseCases'>>((pageAfter) => call('listUseCases', [], { query: { ...query, pageAfter } }, o)),
      get: (id: string, o?: O) => call('getUseCase', [id], {}, o),
      create: (body: Body<'createUseCase'>, o?: O) => call('createUseCase', [], { body }, o),
      /** Everything about the use case in one answer: links, controls with evidence, answers, workflow history, open gaps. */
      dossier: (id: string, o?: O) => call('getUseCaseDossier', [id], {}, o),
      update: (id: string, body: Body<'updateUseCase'>, o?: O) => call('updateUseCase', [id], { body }, o),
      delete: (id: string, o?: O) => call('deleteUseCase', [id], {}, o),
      models: {
        list: (id: string, query?: Query<'listUseCaseModels'>, o?: O) => call('listUseCaseModels', [id], { query }, o),
        listAll: (id: string, query?: WalkQuery<'listUseCaseModels'>, o?: O) =>
          walk<Item<'listUseCaseModels'>>((pageAfter) =>
            call('listUseCaseModels', [id], { query: { ...query, pageAfter } }, o),
          ),
        link: (id: string, modelId: string, o?: O) => call('linkUseCaseModel', [id], { body: { id: modelId } }, o),
        unlink: (id: string, modelId: string, o?: O) => call('unlinkUseCaseModel', [id, modelId], {}, o),
      },
      vendors: {
        list: (id: string, query?: Query<'listUseCaseVendors'>, o?: O) =>
          call('listUseCaseVendors', [id], { query }, o),
        listAll: (id: string, query?: WalkQuery<'listUseCaseVendors'>, o?: O) =>
          walk<Item<'listUseCaseVendors'>>((pageAfter) =>
            call('listUseCaseVendors', [id], { query: { ...query, pageAfter } }, o),
          ),
        link: (id: string, vendorId: string, o?: O) => call('linkUseCaseVendor', [id], { body: { id: vendorId } }, o),
        unlink: (id: string, vendorId: string, o?: O) => call('unlinkUseCaseVendor', [id, vendorId], {}, o),
      },
      riskScenarios: {
        list: (id: string, query?: Query<'listUseCaseRiskScenarios'>, o?: O) =>
          call('listUseCaseRiskScenarios', [id], { query }, o),
        listAll: (id: string, query?: WalkQuery<'listUseCaseRiskScenarios'>, o?: O) =>
          walk<Item<'listUseCaseRiskScenarios'>>((pageAfter) =>
            call('listUseCaseRiskScenarios', [id], { query: { ...query, pageAfter } }, o),
          ),
        link: (id: string, body: Body<'linkUseCaseRiskScenario'>, o?: O) =>
          call('linkUseCaseRiskScenario', [id], { body }, o),
        unlink: (id: string, riskScenarioId: string, o?: O) =>
          call('unlinkUseCaseRiskScenario', [id, riskScenarioId], {}, o),
      },
      policyPacks: {
        list: (id: string, query?: Query<'listUseCasePolicyPacks'>, o?: O) =>
          call('listUseCasePolicyPacks', [id], { query }, o),
        listAll: (id: string, query?: WalkQuery<'listUseCasePolicyPacks'>, o?: O) =>
          walk<Item<'listUseCasePolicyPacks'>>((pageAfter) =>
            call('listUseCasePolicyPacks', [id], { query: { ...query, pageAfter } }, o),
          ),
        get: (id: string, key: string, o?: O) => call('getUseCasePolicyPack', [id, key], {}, o),
        apply: (id: string, body: Body<'applyPolicyPack'>, o?: O) => call('applyPolicyPack', [id], { body }, o),
        remove: (id: string, key: string, o?: O) => call('removePolicyPack', [id, key], {}, o),
      },
      controls: {
        list: (id: string, query?: Query<'listUseCaseControls'>, o?: O) =>
          call('listUseCaseControls', [id], { query }, o),
        listAll: (id: string, query?: WalkQuery<'listUseCaseControls'>, o?: O) =>
          walk<Item<'listUseCaseControls'>>((pageAfter) =>
            call('listUseCaseControls', [id], { query: { ...query, pageAfter } }, o),
          ),
        get: (id: string, controlId: string, o?: O) => call('getUseCaseControl', [id, controlId], {}, o),
        update: (id: string, controlId: string, body: Body<'updateUseCaseControl'>, o?: O) =>
          call('updateUseCaseControl', [id, controlId], { body }, o),
        evidence: {
          list: (id: string, controlId: string, o?: O) => call('listControlEvidence', [id, controlId], {}, o),
          /** Idempotent: linking the same evidence again changes nothing (or only `requirement`). */
          link: (id: string, controlId: string, body: Body<'linkControlEvidence'>, o?: O) =>
            call('linkControlEvidence', [id, controlId], { body }, o),
          unlink: (id: string, controlId: string, evidenceId: string, o?: O) =>
            call('unlinkControlEvidence', [id, controlId, evidenceId], {}, o),
        },
      },
      questionnaires: {
        list: (id: string, query?: Query<'listUseCaseQuestionnaires'>, o?: O) =>
          call('listUseCaseQuestionnaires', [id], { query }, o),
        listAll: (id: string, query?: WalkQuery<'listUseCaseQuestionnaires'>, o?: O) =>
          walk<Item<'listUseCaseQuestionnaires'>>((pageAfter) =>
            call('listUseCaseQuestionnaires', [id], { query: { ...query, pageAfter } }, o),
          ),
        get: (id: string, key: string, o?: O) => call('getUseCaseQuestionnaire', [id, key], {}, o),
        attach: (id: string, body: Body<'attachUseCaseQuestionnaire'>, o?: O) =>
          call('attachUseCaseQuestionnaire', [id], { body }, o),
        detach: (id: string, key: string, o?: O) => call('detachUseCaseQuestionnaire', [id, key], {}, o),
        /** Sets the listed answers (`value: null` clears one); the others stay. */
        answer: (id: string, key: string, body: Body<'answerUseCaseQuestionnaire'>, o?: O) =>
          call('answerUseCaseQuestionnaire', [id, key], { body }, o),
      },
      workflow: {
        get: (id: string, o?: O) => call('getUseCaseWorkflow', [id], {}, o),
        set: (id: string, stageId: string, o?: O) => call('setUseCaseWorkflowStage', [id], { body: { stageId } }, o),
        advance: (id: string, o?: O) => call('advanceUseCaseWorkflow', [id], {}, o),
        reject: (id: string, reason: string, o?: O) => call('rejectUseCaseWorkflow', [id], { body: { reason } }, o),
      },
    },
    models: {
      list: (query?: Query<'listModels'>, o?: O) => call('listModels', [], { query }, o),
      listAll: (query?: WalkQuery<'listModels'>, o?: O) =>
        walk<Item<'listModels'>>((pageAfter) => call('listModels', [], { query: { ...query, pageAfter } }, o)),
      get: (id: string, o?: O) => call('getModel', [id], {}, o),
      create: (body: Body<'createModel'>, o?: O) => call('createModel', [], { body }, o),
      update: (id: string, body: Body<'updateModel'>, o?: O) => call('updateModel', [id], { body }, o),
      delete: (id: string, o?: O) => call('deleteModel', [id], {}, o),
      vendors: {
        list: (id: string, query?: Query<'listModelVendors'>, o?: O) => call('listModelVendors', [id], { query }, o),
        listAll: (id: string, query?: WalkQuery<'listModelVendors'>, o?: O) =>
          walk<Item<'listModelVendors'>>((pageAfter) =>
            call('listModelVendors', [id], { query: { ...query, pageAfter } }, o),
          ),
        link: (id: string, vendorId: string, o?: O) => call('linkModelVendor', [id], { body: { id: vendorId } }, o),
        unlink: (id: string, vendorId: string, o?: O) => call('unlinkModelVendor', [id, vendorId], {}, o),
      },
      questionnaires: {
        list: (id: string, query?: Query<'listModelQuestionnaires'>, o?: O) =>
          call('listModelQuestionnaires', [id], { query }, o),
        listAll: (id: string, query?: WalkQuery<'listModelQuestionnaires'>, o?: O) =>
          walk<Item<'listModelQuestionnaires'>>((pageAfter) =>
            call('listModelQuestionnaires', [id], { query: { ...query, pageAfter } }, o),
          ),
        get: (id: string, key: string, o?: O) => call('getModelQuestionnaire', [id, key], {}, o),
        attach: (id: string, body: Body<'attachModelQuestionnaire'>, o?: O) =>
          call('attachModelQuestionnaire', [id], { body }, o),
        detach: (id: string, key: string, o?: O) => call('detachModelQuestionnaire', [id, key], {}, o),
        answer: (id: string, key: string, body: Body<'answerModelQuestionnaire'>, o?: O) =>
          call('answerModelQuestionnaire', [id, key], { body }, o),
      },
    },
    vendors: {
      list: (query?: Query<'listVendors'>, o?: O) => call('listVendors', [], { query }, o),
      listAll: (query?: WalkQuery<'listVendors'>, o?: O) =>
        walk<Item<'listVendors'>>((pageAfter) => call('listVendors', [], { query: { ...query, pageAfter } }, o)),
      get: (id: string, o?: O) => call('getVendor', [id], {}, o),
      create: (body: Body<'createVendor'>, o?: O) => call('createVendor', [], { body }, o),
      update: (id: string, body: Body<'updateVendor'>, o?: O) => call('updateVendor', [id], { body }, o),
      delete: (id: string, o?: O) => call('deleteVendor', [id], {}, o),
      useCases: {
        list: (id: string, query?: Query<'listVendorUseCases'>, o?: O) =>
          call('listVendorUseCases', [id], { query }, o),
        listAll: (id: string, query?: WalkQuery<'listVendorUseCases'>, o?: O) =>
          walk<Item<'listVendorUseCases'>>((pageAfter) =>
            call('listVendorUseCases', [id], { query: { ...query, pageAfter } }, o),
          ),
      },
      models: {
        list: (id: string, query?: Query<'listVendorModels'>, o?: O) => call('listVendorModels', [id], { query }, o),
        listAll: (id: string, query?: WalkQuery<'listVendorModels'>, o?: O) =>
          walk<Item<'listVendorModels'>>((pageAfter) =>
            call('listVendorModels', [id], { query: { ...query, pageAfter } }, o),
          ),
      },
      questionnaires: {
        list: (id: string, query?: Query<'listVendorQuestionnaires'>, o?: O) =>
          call('listVendorQuestionnaires', [id], { query }, o),
        listAll: (id: string, query?: WalkQuery<'listVendorQuestionnaires'>, o?: O) =>
          walk<Item<'listVendorQuestionnaires'>>((pageAfter) =>
            call('listVendorQuestionnaires', [id], { query: { ...query, pageAfter } }, o),
          ),
        get: (id: string, key: string, o?: O) => call('getVendorQuestionnaire', [id, key], {}, o),
        attach: (id: string, body: Body<'attachVendorQuestionnaire'>, o?: O) =>
          call('attachVendorQuestionnaire', [id], { body }, o),
        detach: (id: string, key: string, o?: O) => call('detachVendorQuestionnaire', [id, key], {}, o),
        answer: (id: string, key: string, body: Body<'answerVendorQuestionnaire'>, o?: O) =>
          call('answerVendorQuestionnaire', [id, key], { body }, o),
      },
    },
    customFields: {
      list: (query?: Query<'listCustomFields'>, o?: O) => call('listCustomFields', [], { query }, o),
      listAll: (query?: WalkQuery<'listCustomFields'>, o?: O) =>
        walk<Item<'listCustomFields'>>((pageAfter) =>
          call('listCustomFields', [], { query: { ...query, pageAfter } }, o),
        ),
      get: (id: string, o?: O) => call('getCustomField', [id], {}, o),
      create: (body: Body<'createCustomField'>, o?: O) => call('createCustomField', [], { body }, o),
      update: (id: string, body: Body<'updateCustomField'>, o?: O) => call('updateCustomField', [id], { body }, o),
      delete: (id: string, o?: O) => call('deleteCustomField', [id], {}, o),
    },
    users: {
      list: (query?: Query<'listUsers'>, o?: O) => call('listUsers', [], { query }, o),
      listAll: (query?: WalkQuery<'listUsers'>, o?: O) =>
        walk<Item<'listUsers'>>((pageAfter) => call('listUsers', [], { query: { ...query, pageAfter } }, o)),
      get: (id: string, o?: O) => call('getUser', [id], {}, o),
      create: (body: Body<'createUser'>, o?: O) => call('createUser', [], { body }, o),
      update: (id: string, body: Body<'updateUser'>, o?: O) => call('updateUser', [id], { body }, o),
      delete: (id: string, o?: O) => call('deleteUser', [id], {}, o),
    },
    teams: {
      list: (query?: Query<'listTeams'>, o?: O) => call('listTeams', [], { query }, o),
      listAll: (query?: WalkQuery<'listTeams'>, o?: O) =>
        walk<Item<'listTeams'>>((pageAfter) => call('listTeams', [], { query: { ...query, pageAfter } }, o)),
      get: (id: string, o?: O) => call('getTeam', [id], {}, o),
      create: (body: Body<'createTeam'>, o?: O) => call('createTeam', [], { body }, o),
      update: (id: string, body: Body<'updateTeam'>, o?: O) => call('updateTeam', [id], { body }, o),
      delete: (id: string, o?: O) => call('deleteTeam', [id], {}, o),
      members: {
        list: (id: string, query?: Query<'listTeamMembers'>, o?: O) => call('listTeamMembers', [id], { query }, o),
        listAll: (id: string, query?: WalkQuery<'listTeamMembers'>, o?: O) =>
          walk<Item<'listTeamMembers'>>((pageAfter) =>
            call('listTeamMembers', [id], { query: { ...query, pageAfter } }, o),
          ),
        add: (id: string, userId: string, o?: O) => call('addTeamMember', [id], { body: { userId } }, o),
        remove: (id: string, userId: string, o?: O) => call('removeTeamMember', [id, userId], {}, o),
      },
    },
    riskTypes: {
      list: (query?: Query<'listRiskTypes'>, o?: O) => call('listRiskTypes', [], { query }, o),
      listAll: (query?: WalkQuery<'listRiskTypes'>, o?: O) =>
        walk<Item<'listRiskTypes'>>((pageAfter) => call('listRiskTypes', [], { query: { ...query, pageAfter } }, o)),
      get: (id: string, o?: O) => call('getRiskType', [id], {}, o),
      create: (body: Body<'createRiskType'>, o?: O) => call('createRiskType', [], { body }, o),
      update: (id: string, body: Body<'updateRiskType'>, o?: O) => call('updateRiskType', [id], { body }, o),
      delete: (id: string, o?: O) => call('deleteRiskType', [id], {}, o),
    },
    riskScenarios: {
      list: (query?: Query<'listRiskScenarios'>, o?: O) => call('listRiskScenarios', [], { query }, o),
      listAll: (query?: WalkQuery<'listRiskScenarios'>, o?: O) =>
        walk<Item<'listRiskScenarios'>>((pageAfter) =>
          call('listRiskScenarios', [], { query: { ...query, pageAfter } }, o),
        ),
      get: (id: string, o?: O) => call('getRiskScenario', [id], {}, o),
      create: (body: Body<'createRiskScenario'>, o?: O) => call('createRiskScenario', [], { body }, o),
      update: (id: string, body: Body<'updateRiskScenario'>, o?: O) => call('updateRiskScenario', [id], { body }, o),
      delete: (id: string, o?: O) => call('deleteRiskScenario', [id], {}, o),
    },
    workflowStages: {
      list: (query?: Query<'listWorkflowStages'>, o?: O) => call('listWorkflowStages', [], { query }, o),
      listAll: (query?: WalkQuery<'listWorkflowStages'>, o?: O) =>
        walk<Item<'listWorkflowStages'>>((pageAfter) =>
          call('listWorkflowStages', [], { query: { ...query, pageAfter } }, o),
        ),
      get: (id: string, o?: O) => call('getWorkflowStage', [id], {}, o),
      create: (body: Body<'createWorkflowStage'>, o?: O) => call('createWorkflowStage', [], { body }, o),
      update: (id: string, body: Body<'updateWorkflowStage'>, o?: O) => call('updateWorkflowStage', [id], { body }, o),
      delete: (id: string, o?: O) => call('deleteWorkflowStage', [id], {}, o),
    },
    policyControlBases: {
      list: (query?: Query<'listPolicyControlBases'>, o?: O) => call('listPolicyControlBases', [], { query }, o),
      listAll: (query?: WalkQuery<'listPolicyControlBases'>, o?: O) =>
        walk<Item<'listPolicyControlBases'>>((pageAfter) =>
          call('listPolicyControlBases', [], { query: { ...query, pageAfter } }, o),
        ),
      get: (id: string, o?: O) => call('getPolicyControlBase', [id], {}, o),
      create: (body: Body<'createPolicyControlBase'>, o?: O) => call('createPolicyControlBase', [], { body }, o),
      update: (id: string, body: Body<'updatePolicyControlBase'>, o?: O) =>
        call('updatePolicyControlBase', [id], { body }, o),
    },
    policyControlVersions: {
      list: (query?: Query<'listPolicyControlVersions'>, o?: O) => call('listPolicyControlVersions', [], { query }, o),
      listAll: (query?: WalkQuery<'listPolicyControlVersions'>, o?: O) =>
        walk<Item<'listPolicyControlVersions'>>((pageAfter) =>
          call('listPolicyControlVersions', [], { query: { ...query, pageAfter } }, o),
        ),
      get: (id: string, o?: O) => call('getPolicyControlVersion', [id], {}, o),
      create: (body: Body<'createPolicyControlVersion'>, o?: O) => call('createPolicyControlVersion', [], { body }, o),
      update: (id: string, body: Body<'updatePolicyControlVersion'>, o?: O) =>
        call('updatePolicyControlVersion', [id], { body }, o),
      publish: (id: string, o?: O) => call('publishPolicyControlVersion', [id], {}, o),
    },
    policyControls: {
      list: (query?: Query<'listPolicyControls'>, o?: O) => call('listPolicyControls', [], { query }, o),
      listAll: (query?: WalkQuery<'listPolicyControls'>, o?: O) =>
        walk<Item<'listPolicyControls'>>((pageAfter) =>
          call('listPolicyControls', [], { query: { ...query, pageAfter } }, o),
        ),
      get: (baseId: string, o?: O) => call('getPolicyControl', [baseId], {}, o),
    },
    policyPacks: {
      list: (query?: Query<'listPolicyPacks'>, o?: O) => call('listPolicyPacks', [], { query }, o),
      listAll: (query?: WalkQuery<'listPolicyPacks'>, o?: O) =>
        walk<Item<'listPolicyPacks'>>((pageAfter) =>
          call('listPolicyPacks', [], { query: { ...query, pageAfter } }, o),
        ),
      /** By key (the latest version, or `{ version }`) or by pp_ id. */
      get: (keyOrId: string, query?: Query<'getPolicyPack'>, o?: O) => call('getPolicyPack', [keyOrId], { query }, o),
      create: (body: Body<'createPolicyPack'>, o?: O) => call('createPolicyPack', [], { body }, o),
    },
    /** Every use case's controls in one list: by assignee, open, overdue (the use case's own list is `useCases.controls`). */
    useCaseControls: {
      list: (query?: Query<'listTenantControls'>, o?: O) => call('listTenantControls', [], { query }, o),
      listAll: (query?: WalkQuery<'listTenantControls'>, o?: O) =>
        walk<Item<'listTenantControls'>>((pageAfter) =>
          call('listTenantControls', [], { query: { ...query, pageAfter } }, o),
        ),
    },
    questionnaires: {
      list: (query?: Query<'listQuestionnaires'>, o?: O) => call('listQuestionnaires', [], { query }, o),
      listAll: (query?: WalkQuery<'listQuestionnaires'>, o?: O) =>
        walk<Item<'listQuestionnaires'>>((pageAfter) =>
          call('listQuestionnaires', [], { query: { ...query, pageAfter } }, o),
        ),
      /** By key (the latest version, or `{ version }`), by "KEY+version", or by q_ id. */
      get: (keyOrId: string, query?: Query<'getQuestionnaire'>, o?: O) =>
        call('getQuestionnaire', [keyOrId], { query }, o),
      create: (body: Body<'createQuestionnaire'>, o?: O) => call('createQuestionnaire', [], { body }, o),
    },
    auditLogs: {
      list: (query?: Query<'listAuditLogs'>, o?: O) => call('listAuditLogs', [], { query }, o),
      listAll: (query?: WalkQuery<'listAuditLogs'>, o?: O) =>
        walk<Item<'listAuditLogs'>>((pageAfter) => call('listAuditLogs', [], { query: { ...query, pageAfter } }, o)),
      get: (id: string, o?: O) => call('getAuditLog', [id], {}, o),
      /** The same filters as `list`, sent as a JSON body (for long filter lists). */
      query: (filter?: Body<'queryAuditLogs'>, o?: O) => call('queryAuditLogs', [], { body: filter ?? {} }, o),
      queryAll: (filter?: Omit<Body<'queryAuditLogs'>, 'pageAfter'>, o?: O) =>
        walk<Item<'queryAuditLogs'>>((pageAfter) => call('queryAuditLogs', [], { body: { ...filter, pageAfter } }, o)),
      /** Every matching record as NDJSON (default) or CSV text. */
      export: (query?: Query<'exportAuditLogs'>, o?: O) => call('exportAuditLogs', [], { query }, o),
      verify: (query?: Query<'verifyAuditLogs'>, o?: O) => call('verifyAuditLogs', [], { query }, o),
      checkpoint: (o?: O) => call('getAuditCheckpoint', [], {}, o),
      checkpointPublicKey: (o?: O) => call('getAuditCheckpointPublicKey', [], {}, o),
    },
    evidence: {
      list: (query?: Query<'listEvidence'>, o?: O) => call('listEvidence', [], { query }, o),
      listAll: (query?: WalkQuery<'listEvidence'>, o?: O) =>
        walk<Item<'listEvidence'>>((pageAfter) => call('listEvidence', [], { query: { ...query, pageAfter } }, o)),
      get: (id: string, o?: O) => call('getEvidence', [id], {}, o),
      /** Registers a link: `{ kind: 'link', url, title }`. */
      createLink: (body: Body<'createEvidence'>, o?: O) => call('createEvidence', [], { body }, o),
      /**
       * Uploads a file as multipart/form-data. A Blob/File/bytes upload is retried like any create (same
       * Idempotency-Key); a ReadableStream is streamed once, never buffered, and not retried.
       */
      upload: (file: Blob | ReadableStream<Uint8Array> | Uint8Array | string, meta: UploadMeta = {}, o?: O) =>
        call('createEvidence', [], { raw: multipartUpload(file, meta) }, o),
      delete: (id: string, o?: O) => call('deleteEvidence', [id], {}, o),
      /** The content as a stream of bytes (read it, or cancel it); errors come back as usual before any byte. */
      download: (id: string, o?: O) =>
        call('downloadEvidence', [id], {}, o) as unknown as Promise<Result<ReadableStream<Uint8Array>>>,
      /** The tenant's stored bytes against its quota, and this key's upload budget this minute. */
      usage: (o?: O) => call('getEvidenceUsage', [], {}, o),
    },
    webhookEndpoints: {
      list: (query?: Query<'listWebhookEndpoints'>, o?: O) => call('listWebhookEndpoints', [], { query }, o),
      listAll: (query?: WalkQuery<'listWebhookEndpoints'>, o?: O) =>
        walk<Item<'listWebhookEndpoints'>>((pageAfter) =>
          call('listWebhookEndpoints', [], { query: { ...query, pageAfter } }, o),
        ),
      get: (id: string, o?: O) => call('getWebhookEndpoint', [id], {}, o),
      /** The result carries the signing `secret`, shown this once. */
      create: (body: Body<'createWebhookEndpoint'>, o?: O) => call('createWebhookEndpoint', [], { body }, o),
      update: (id: string, body: Body<'updateWebhookEndpoint'>, o?: O) =>
        call('updateWebhookEndpoint', [id], { body }, o),
      delete: (id: string, o?: O) => call('deleteWebhookEndpoint', [id], {}, o),
      /** A new secret; the previous one also signs for 24 h. */
      rotateSecret: (id: string, o?: O) => call('rotateWebhookEndpointSecret', [id], {}, o),
      /** Queues a `ping` event. */
      test: (id: string, o?: O) => call('testWebhookEndpoint', [id], {}, o),
      deliveries: {
        list: (id: string, query?: Query<'listWebhookDeliveries'>, o?: O) =>
          call('listWebhookDeliveries', [id], { query }, o),
        listAll: (id: string, query?: WalkQuery<'listWebhookDeliveries'>, o?: O) =>
          walk<Item<'listWebhookDeliveries'>>((pageAfter) =>
            call('listWebhookDeliveries', [id], { query: { ...query, pageAfter } }, o),
          ),
        retry: (id: string, deliveryId: string, o?: O) => call('retryWebhookDelivery', [id, deliveryId], {}, o),
      },
    },
    events: {
      /** The tenant's audit records as they commit, as an endless async iterator that resumes after a disconnect. */
      stream: (query?: Omit<Query<'streamEvents'>, 'after'>, options?: StreamOptions) =>
        streamEvents(core, query, options),
    },
    governanceSummary: {
      /** Use cases by risk level and workflow stage, controls by status, and the use cases with overdue controls. */
      get: (query?: Query<'getGovernanceSummary'>, o?: O) => call('getGovernanceSummary', [], { query }, o),
    },
  }
}

export interface UploadMeta {
  /** The name the service stores and offers on download. Default: the File's name, else "file". */
  fileName?: string
  title?: string
  /** Default: the Blob's type, else application/octet-stream. */
  contentType?: string
}

/** The multipart body of an upload: FormData for what is already in memory, a generated stream for a stream. */
function multipartUpload(
  file: Blob | ReadableStream<Uint8Array> | Uint8Array | string,
  meta: UploadMeta,
): { body: FormData | ReadableStream<Uint8Array>; contentType?: string } {
  const fileName = meta.fileName ?? ((file as { name?: unknown }).name as string | undefined) ?? 'file'
  if (typeof ReadableStream !== 'undefined' && file instanceof ReadableStream) {
    const boundary = `aigov-${Math.random().toString(36).slice(2)}${Date.now().toString(36)}`
    const quoted = (text: string) => text.replace(/["\r\n]/g, '_')
    const encoder = new TextEncoder()
    const head =
      (meta.title === undefined
        ? ''
        : `--${boundary}\r\nContent-Disposition: form-data; name="title"\r\n\r\n${meta.title}\r\n`) +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${quoted(fileName)}"\r\nContent-Type: ${quoted(meta.contentType ?? 'application/octet-stream')}\r\n\r\n`
    const reader = file.getReader()
    let stage: 'head' | 'file' | 'tail' = 'head'
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (stage === 'head') {
          stage = 'file'
          return controller.enqueue(encoder.encode(head))
        }
        if (stage === 'file') {
          const { done, value } = await reader.read()
          if (!done) return controller.enqueue(value)
          stage = 'tail'
        }
        controller.enqueue(encoder.encode(`\r\n--${boundary}--\r\n`))
        controller.close()
      },
      cancel: (reason) => reader.cancel(reason),
    })
    return { body, contentType: `multipart/form-data; boundary=${boundary}` }
  }
  const blob =
    file instanceof Blob
      ? file
      : new Blob([typeof file === 'string' || file instanceof String ? String(file) : (file as BlobPart)], {
          type: meta.contentType ?? 'application/octet-stream',
        })
  const form = new FormData()
  if (meta.title !== undefined) form.append('title', meta.title)
  form.append(
    'file',
    meta.contentType && blob.type !== meta.contentType ? new Blob([blob], { type: meta.contentType }) : blob,
    fileName,
  )
  return { body: form }
}

/** A configuration bundle to send: bytes, a Blob (a file), or a stream (sent once, never retried). */
export type Bundle = Blob | ReadableStream<Uint8Array> | Uint8Array

const BUNDLE_TYPE = 'application/x-tar'

function bundleBody(bundle: Bundle): { body: Blob | ReadableStream<Uint8Array>; contentType: string } {
  const body = bundle instanceof Uint8Array ? new Blob([bundle as Uint8Array<ArrayBuffer>]) : bundle
  return { body, contentType: BUNDLE_TYPE }
}
