import { randomUUID } from 'node:crypto'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import cookie from '@fastify/cookie'
import Fastify, { type FastifyInstance, LogController } from 'fastify'
import { sql } from 'kysely'
import { installAuth } from './http/plugins/auth.js'
import { BODY_LIMIT, installBodyParsers } from './http/plugins/body-parsers.js'
import { installOpenApi } from './http/plugins/openapi.js'
import { clientErrorProblem, installProblemHandlers, sendProblem } from './http/plugins/problems.js'
import { AppError } from './http/errors.js'
import { installRateLimit } from './http/plugins/rate-limit.js'
import { installCors } from './http/plugins/cors.js'
import { installHtmlSecurity } from './http/plugins/html-security.js'
import { installObservability } from './http/plugins/observability.js'
import { installIdempotency } from './http/plugins/idempotency.js'
import { installReadCache } from './read-model/index.js'
import { idempotencyStore } from './shared/idempotency.js'
import { installTextChecks, installValidators } from './http/plugins/validation.js'
import { installSerializers } from './http/plugins/serialization.js'
import { apiKeyRoutes } from './modules/api-keys/api-keys.routes.js'
import { auditLogRoutes } from './modules/audit-logs/audit-logs.routes.js'
import { authRoutes } from './modules/auth/auth.routes.js'
import { consoleRoutes } from './modules/console/console.routes.js'
import { sessionRoutes } from './modules/sessions/sessions.routes.js'
import { signInRoutes } from './modules/sessions/sign-in.routes.js'
import { oidcRoutes } from './modules/sso/oidc.routes.js'
import { ssoRoutes } from './modules/sso/sso.routes.js'
import { healthRoutes, type ReadinessCheck, upstreamCheck } from './modules/health/health.routes.js'
import { modelRoutes } from './modules/models/models.routes.js'
import { relationshipRoutes } from './modules/relationships/relationships.routes.js'
import { riskScenarioRoutes } from './modules/risk-scenarios/risk-scenarios.routes.js'
import { riskTypeRoutes } from './modules/risk-types/risk-types.routes.js'
import { policyControlRoutes } from './modules/policy-controls/policy-controls.routes.js'
import { policyPackRoutes } from './modules/policy-packs/policy-packs.routes.js'
import { questionnaireRoutes } from './modules/questionnaires/questionnaires.routes.js'
import { systemRoutes } from './modules/system/system.routes.js'
import { useCasePolicyRoutes } from './modules/use-case-policies/use-case-policies.routes.js'
import { useCaseRoutes } from './modules/use-cases/use-cases.routes.js'
import { vendorRoutes } from './modules/vendors/vendors.routes.js'
import { useCaseWorkflowRoutes } from './modules/workflow-stages/use-case-workflow.routes.js'
import { workflowStageRoutes } from './modules/workflow-stages/workflow-stages.routes.js'
import { governanceSummaryRoutes } from './modules/governance-summary/governance-summary.routes.js'
import { customFieldRoutes } from './modules/custom-fields/custom-fields.routes.js'
import { teamRoutes } from './modules/teams/teams.routes.js'
import { userRoutes } from './modules/users/users.routes.js'
import { dossierRoutes } from './modules/dossier/dossier.routes.js'
import { evidenceRoutes } from './modules/evidence/evidence.routes.js'
import { eventRoutes } from './modules/events/events.routes.js'
import { AuditFeed } from './modules/events/events.feed.js'
import { webhookRoutes } from './modules/webhooks/webhooks.routes.js'
import { configurationRoutes } from './modules/configuration/configuration.routes.js'
import { type CommitFeed, type ResourceResolver, WebhookDispatcher } from './modules/webhooks/webhooks.delivery.js'
import { createDatabase } from './db/create-db.js'
import type { AuditedDatabase } from './shared/audit-append.js'
import { AuditNameIndexer } from './shared/audit-name-search.js'
import type { OAuthServer } from './modules/oauth/oauth.server.js'
import type { Ctx } from './shared/context.js'
import type { Deps } from './shared/deps.js'
import { createServices, type Services } from './services.js'

export const API_PREFIX = '/api/v1/integration'
/** A client gets this long to send its headers, and REQUEST_TIMEOUT_MS for the whole request (408, then closed). */
export const HEADERS_TIMEOUT_MS = 10_000
export const REQUEST_TIMEOUT_MS = 15_000
const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/

/** Builds the whole service as a Fastify instance; it never listens (main does). */
export async function buildApp(deps: Deps): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.log,
    // Fastify's two lines per request are replaced by one access-log line (installObservability).
    logController: new LogController({ requestIdLogLabel: 'request_id', disableRequestLogging: true }),
    bodyLimit: BODY_LIMIT,
    requestTimeout: REQUEST_TIMEOUT_MS,
    connectionTimeout: 60_000,
    // Node checks those timeouts every connectionsCheckingInterval (30 s by default): too coarse to stop slowloris.
    http: { headersTimeout: HEADERS_TIMEOUT_MS, connectionsCheckingInterval: 1000 },
    genReqId: (req) => {
      const given = req.headers['x-request-id']
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID()
    },
    routerOptions: { ignoreTrailingSlash: true },
    clientErrorHandler: clientErrorProblem,
    // A URL that does not decode (e.g. %ff) is refused by the router before any hook: answer it as a problem too.
    frameworkErrors: (err, req, reply) => {
      reply.header('X-Request-ID', req.id)
      return sendProblem(
        req,
        reply,
        new AppError(
          'bad_request',
          err.code === 'FST_ERR_BAD_URL' ? 'the URL is not validly percent-encoded' : err.message,
        ),
      )
    },
  }).withTypeProvider<TypeBoxTypeProvider>()

  installValidators(app)
  installSerializers(app)
  installProblemHandlers(app)
  installBodyParsers(app, BODY_LIMIT)
  await app.register(cookie)
  // Hooks that never wait take fastify's callback form: an async hook costs every request a promise and its turns.
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('X-Request-ID', req.id)
    done()
  })
  installObservability(app, deps)
  installHtmlSecurity(app)
  if (deps.config.corsOrigins.length > 0) await installCors(app, deps.config.corsOrigins)
  await installOpenApi(app)

  const services = createServices(deps)
  // The authorization server of /mcp, loaded (with oidc-provider) only when the MCP server is on.
  const oauth = deps.config.enableMcp ? await loadOAuthServer(deps) : undefined
  const feed = new AuditFeed(deps.database, deps.redis)

  await app.register(healthRoutes(readinessChecks(deps)))
  await app.register(consoleRoutes())
  // People's browser routes (sign-in, sign-out), limited per client address.
  await app.register(async (browser) => {
    await installRateLimit(browser, deps)
    await browser.register(signInRoutes(services.sessions, deps.config))
    await browser.register(oidcRoutes(services.sso, deps.config))
  })
  await app.register(
    async (api) => {
      installAuth(api, { ...deps, sessions: services.sessions, oauth })
      installTextChecks(api)
      await installRateLimit(api, deps)
      installIdempotency(api, idempotencyStore(deps.database, deps.redis, deps.log))
      await api.register(authRoutes(services.auth, deps.config))
      await api.register(sessionRoutes(services.sessions))
      await api.register(systemRoutes(deps))
      await api.register(apiKeyRoutes(services.apiKeys))
      await api.register(webhookRoutes(services.webhooks))
      await api.register(ssoRoutes(services.sso, deps.config))
      await api.register(
        eventRoutes(services.events, feed, deps.keyStatus, deps.metrics, {
          heartbeatMs: deps.config.eventsHeartbeatMs,
          slowClientMs: deps.config.eventsSlowClientMs,
        }),
      )
      // The tenant's records: their GET answers depend only on those records and the URL (ETags, read cache).
      await api.register(async (records) => {
        installReadCache(records, deps.database, deps.readModel.answers, (outcome) =>
          deps.metrics.readCache.inc({ outcome }),
        )
        await records.register(useCaseRoutes(services.useCases))
        await records.register(auditLogRoutes(services.auditLogs))
        await records.register(modelRoutes(services.models))
        await records.register(vendorRoutes(services.vendors))
        await records.register(riskTypeRoutes(services.riskTypes))
        await records.register(riskScenarioRoutes(services.riskScenarios))
        await records.register(relationshipRoutes(services.relationships))
        await records.register(workflowStageRoutes(services.workflowStages))
        await records.register(useCaseWorkflowRoutes(services.useCaseWorkflow))
        await records.register(policyControlRoutes(services.policyControls))
        await records.register(policyPackRoutes(services.policyPacks))
        await records.register(useCasePolicyRoutes(services.useCasePolicies))
        await records.register(questionnaireRoutes(services.questionnaires))
        await records.register(userRoutes(services.users))
        await records.register(teamRoutes(services.teams))
        await records.register(customFieldRoutes(services.customFields))
        await records.register(evidenceRoutes(services.evidence, deps.config.evidenceMaxBytes))
        await records.register(dossierRoutes(services.dossier))
      })
      await api.register(governanceSummaryRoutes(services.governanceSummary))
      await api.register(configurationRoutes(services.configuration, deps.config.configurationBundleMaxBytes))
    },
    { prefix: API_PREFIX },
  )
  const delivery = deps.config.webhookDelivery ? webhookDelivery(deps, feed) : undefined
  const nameIndexer = new AuditNameIndexer(deps.database, (err) =>
    deps.log.warn({ err: err.message }, 'audit name indexing failed; retrying'),
  )
  app.addHook('onReady', async () => {
    if (delivery) delivery.start()
    else deps.log.info('webhook delivery is off here (WEBHOOK_DELIVERY=false): an instance with it on sends the events')
    feed.start()
    nameIndexer.start()
  })
  // preClose: open event streams must end before the server waits for its connections to close.
  app.addHook('preClose', async () => feed.stop())
  app.addHook('onClose', async () => {
    await nameIndexer.stop()
    await delivery?.stop()
  })
  // Off: /mcp is an unknown path like any other (404 problem response), and the MCP SDK is never loaded.
  if (deps.config.enableMcp) {
    const { mcpHttpRoutes } = await import('./mcp/http.js')
    const { oauthRoutes } = await import('./modules/oauth/oauth.routes.js')
    await app.register(oauthRoutes(oauth!, services.sessions, deps))
    await app.register(mcpHttpRoutes(deps, services, oauth!))
  }
  return app
}

async function loadOAuthServer(deps: Deps): Promise<OAuthServer> {
  const { createOAuthServer } = await import('./modules/oauth/oauth.server.js')
  return createOAuthServer({ config: deps.config, database: deps.database, log: deps.log, cookieKey: deps.webhookKey })
}

/** This instance's webhook dispatcher (off with WEBHOOK_DELIVERY=false), with its own pool on PostgreSQL. */
function webhookDelivery(deps: Deps, feed: CommitFeed): { start(): void; stop(): Promise<void> } {
  const database = deps.database.dialect === 'postgres' ? deliveryPool(deps) : deps.database
  const dispatcher = new WebhookDispatcher(
    { ...deps, database },
    resourceResolver(createServices({ ...deps, database })),
    feed,
  )
  return {
    start: () => dispatcher.start(),
    async stop() {
      await dispatcher.stop()
      if (database !== deps.database) await database.close()
    },
  }
}

/**
 * PostgreSQL: webhook delivery queries on a small pool of its own, so that under load neither the API's requests
 * nor the deliveries wait for the other's connections. Its commits wake the same listeners and its audit records
 * are chained with the same keys. Its statements run a few times per turn of the loop, each for a batch, on a queue
 * table that fills from empty and drains: planned once while it was small, a batch's update by ids read the whole
 * table on every turn (PostgreSQL's CPU per event doubled within a minute of a `*` subscriber on new tables, where
 * autovacuum had not analyzed them), so they are planned on every run.
 */
function deliveryPool(deps: Deps): AuditedDatabase {
  const own = createDatabase(deps.config.databaseUrl, {
    poolSize: 4,
    planEveryRun: true,
    onPoolError: (err) => deps.log.warn({ err: err.message }, 'database connection lost'),
  })
  return { ...own, commits: deps.database.commits, audit: deps.database.audit }
}

/** What an event carries as `data.resource`: the audited record as its GET answers now, as JSON text. */
function resourceResolver(services: Services): ResourceResolver {
  // The families whose GET the database renders: one statement for a batch's records, whose text goes into the body as it is.
  const rendered: Record<string, (ctx: Ctx, ids: string[]) => Promise<Map<string, string>>> = {
    use_case: services.useCases.getJsonMany,
    model: services.models.getJsonMany,
    vendor: services.vendors.getJsonMany,
  }
  const getters: Record<string, (ctx: Ctx, id: string) => Promise<unknown>> = {
    risk_type: services.riskTypes.get,
    risk_scenario: services.riskScenarios.get,
    workflow_stage: services.workflowStages.get,
    policy_control_base: services.policyControls.getBase,
    policy_control_version: services.policyControls.getVersion,
    policy_pack: services.policyPacks.get,
    questionnaire: services.questionnaires.get,
    api_key: services.apiKeys.get,
    webhook_endpoint: services.webhooks.get,
  }
  return async (ctx, type, ids) => {
    if (rendered[type]) return rendered[type](ctx, ids)
    const found = new Map<string, string>()
    const get = getters[type]
    if (!get) return found
    for (const id of ids) {
      try {
        found.set(id, JSON.stringify(await get(ctx, id)))
      } catch (err) {
        if (!(err instanceof AppError && err.code === 'not_found')) throw err
      }
    }
    return found
  }
}

function readinessChecks(deps: Deps): Record<string, ReadinessCheck> {
  const checks: Record<string, ReadinessCheck> = {
    database: async () => {
      await sql`select 1`.execute(deps.database.db)
    },
  }
  const { redis } = deps
  if (redis) {
    checks.redis = async () => {
      await redis.ping()
    }
  }
  if (deps.config.upstreamBaseUrl) checks.upstream = upstreamCheck(deps.config.upstreamBaseUrl)
  return checks
}
