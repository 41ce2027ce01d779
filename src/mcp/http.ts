import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Services } from '../services.js'
import { AppError } from '../http/errors.js'
import { authenticateBearer, authenticateOAuth, serviceOrigin } from '../http/plugins/auth.js'
import type { OAuthServer } from '../modules/oauth/oauth.server.js'
import { bearerChallenge } from '../modules/oauth/oauth.routes.js'
import { credentialFailureGuard, installRateLimit } from '../http/plugins/rate-limit.js'
import type { Ctx } from '../shared/context.js'
import type { Deps } from '../shared/deps.js'
import { inProcessBackend } from './in-process.js'
import { createMcpServer } from './server.js'

export const MCP_PATH = '/mcp'

/**
 * The Streamable HTTP transport at /mcp, stateless: every POST carries its own credential and is served by a
 * server and transport made for that request and dropped when it is answered. Nothing outlives a request, so a
 * caller opening "sessions" in a loop costs no memory (stateful sessions let one read key exhaust the heap), and
 * any instance can answer any request behind a load balancer. GET (a server-initiated event stream) and DELETE
 * (ending a session) have no meaning without sessions: 405.
 * Authentication runs before any MCP message is read; tools call the same service objects as the HTTP routes.
 */
export function mcpHttpRoutes(deps: Deps, services: Services, oauth: OAuthServer) {
  return async (app: FastifyInstance) => {
    const log = app.log.child({ component: 'mcp' })

    const guard = credentialFailureGuard(deps.config, deps.redis, log)
    app.decorateRequest('ctx', null as unknown as Ctx)
    app.addHook('onRequest', async (req, reply) => {
      const tenant = req.headers['x-tenant']
      try {
        req.ctx = await guard(typeof tenant === 'string' ? tenant : '', req.ip, () =>
          authenticate(req, deps, services, oauth),
        )
      } catch (err) {
        // The MCP authorization specification: a 401 says where to find the authorization server.
        if (err instanceof AppError && err.code === 'unauthorized') {
          const origin = serviceOrigin(req, deps.config)
          reply.header(
            'www-authenticate',
            bearerChallenge(origin, req.headers.authorization === undefined ? undefined : 'invalid_token'),
          )
        }
        throw err
      }
    })
    // After authentication, so the limit counts per API key as on the API routes.
    await installRateLimit(app, deps)

    const serverOptions = {
      readOnly: deps.config.mcpReadOnly,
      caller: (authInfo: AuthInfo | undefined) => {
        const caller = (authInfo?.extra as { ctx?: Ctx } | undefined)?.ctx
        if (!caller) throw new AppError('unauthorized', 'no credential reached the MCP request')
        return { backend: inProcessBackend(services, caller), role: caller.role, requestId: caller.requestId }
      },
      onUnexpectedError: (err: unknown, tool: string) => log.error({ err, tool }, 'MCP tool failed'),
    }

    app.post(MCP_PATH, { schema: { hide: true } }, async (req, reply) => {
      const server = createMcpServer(serverOptions)
      // JSON responses: one answer per POST, no stream left open after it.
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
      reply.raw.once('close', () => {
        void server.close()
      })
      await server.connect(transport)
      await serveRaw(req, reply, transport, log)
    })
    const notAllowed = async (_req: FastifyRequest, reply: FastifyReply) => {
      reply.header('allow', 'POST')
      throw new AppError(
        'method_not_allowed',
        'this MCP server is stateless: send every message as a POST; there is no session to stream from or end',
      )
    }
    app.get(MCP_PATH, { schema: { hide: true } }, notAllowed)
    app.delete(MCP_PATH, { schema: { hide: true } }, notAllowed)
  }
}

/** An assistant's OAuth token, a bearer token (verified exactly like the API routes), or X-API-Key + X-Tenant. */
async function authenticate(req: FastifyRequest, deps: Deps, services: Services, oauth: OAuthServer): Promise<Ctx> {
  const apiKey = req.headers['x-api-key']
  if (req.headers.authorization === undefined && apiKey !== undefined) {
    const tenant = req.headers['x-tenant']
    return services.auth.checkApiKey(
      {
        apiKey: typeof apiKey === 'string' ? apiKey : undefined,
        tenant: typeof tenant === 'string' ? tenant : undefined,
      },
      { requestId: req.id, source: 'mcp' },
    )
  }
  if (req.headers.authorization === undefined) {
    throw new AppError('unauthorized', 'send Authorization: Bearer <access token>, or X-API-Key and X-Tenant headers')
  }
  return (
    (await authenticateOAuth(req, oauth, deps.config, 'mcp')) ?? {
      ...(await authenticateBearer(req, deps)),
      source: 'mcp',
    }
  )
}

/** Hands the raw request to the SDK's transport, keeping the headers Fastify's hooks set (request id, rate limits). */
async function serveRaw(
  req: FastifyRequest,
  reply: FastifyReply,
  transport: StreamableHTTPServerTransport,
  log: FastifyInstance['log'],
) {
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value !== undefined) reply.raw.setHeader(name, value)
    if (name.startsWith('ratelimit-') && value !== undefined) reply.raw.setHeader(`x-${name}`, value)
  }
  const authInfo: AuthInfo = {
    token: '',
    clientId: req.ctx.actor.id ?? 'unknown',
    scopes: [req.ctx.role],
    extra: { ctx: req.ctx },
  }
  const raw = Object.assign(req.raw, { auth: authInfo })
  reply.hijack()
  try {
    await transport.handleRequest(raw, reply.raw, req.body)
  } catch (err) {
    log.error({ err }, 'MCP transport failed')
    if (!reply.raw.headersSent) {
      reply.raw.writeHead(500, { 'content-type': 'application/problem+json' })
      reply.raw.end(
        JSON.stringify({ status: 500, code: 'internal', detail: 'the MCP request failed', request_id: req.id }),
      )
    } else reply.raw.end()
  }
}
