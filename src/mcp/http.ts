import { randomUUID } from 'node:crypto'
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js'
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Services } from '../app.js'
import { AppError } from '../http/errors.js'
import { authenticateBearer } from '../http/plugins/auth.js'
import { installRateLimit } from '../http/plugins/rate-limit.js'
import type { Ctx } from '../shared/context.js'
import type { Deps } from '../shared/deps.js'
import { inProcessBackend } from './in-process.js'
import { createMcpServer } from './server.js'

export const MCP_PATH = '/mcp'
/** A session nobody has used for this long is closed (its client re-initializes). */
const SESSION_IDLE_MS = 30 * 60_000

interface Session {
  transport: StreamableHTTPServerTransport
  server: Server
  /** The credential the session was opened with: every later request must present the same key. */
  owner: Pick<Ctx, 'tenantId' | 'role'> & { keyId: string | null }
  lastSeen: number
}

/**
 * The Streamable HTTP transport at /mcp: POST carries messages, GET opens the server's SSE stream, DELETE ends the session.
 * Authentication runs before any MCP message is read; tools call the same service objects as the HTTP routes.
 * Sessions live in this instance's memory, so several instances need sticky sessions on mcp-session-id.
 */
export function mcpHttpRoutes(deps: Deps, services: Services) {
  return async (app: FastifyInstance) => {
    const sessions = new Map<string, Session>()
    const log = app.log.child({ component: 'mcp' })

    app.decorateRequest('ctx', null as unknown as Ctx)
    app.addHook('onRequest', async (req) => {
      req.ctx = await authenticate(req, deps, services)
      const sessionId = sessionIdOf(req)
      const session = sessionId ? sessions.get(sessionId) : undefined
      if (session && !sameCaller(session, req.ctx)) {
        throw new AppError('forbidden', 'this MCP session was opened with another API key; use that credential or initialize a new session')
      }
    })
    // After authentication, so the limit counts per API key as on the API routes.
    await installRateLimit(app, deps)

    const sweep = setInterval(() => {
      const cutoff = Date.now() - SESSION_IDLE_MS
      for (const session of sessions.values()) if (session.lastSeen < cutoff) void session.transport.close()
    }, 60_000)
    sweep.unref()
    // Before the server stops listening: open SSE streams would otherwise keep it waiting.
    app.addHook('preClose', async () => {
      clearInterval(sweep)
      await Promise.allSettled([...sessions.values()].map((s) => s.transport.close()))
    })

    async function openSession(ctx: Ctx): Promise<Session> {
      const server = createMcpServer({
        readOnly: deps.config.mcpReadOnly,
        caller: (authInfo) => {
          const caller = (authInfo?.extra as { ctx?: Ctx } | undefined)?.ctx
          if (!caller) throw new AppError('unauthorized', 'no credential reached the MCP request')
          return { backend: inProcessBackend(services, caller), role: caller.role, requestId: caller.requestId }
        },
        onUnexpectedError: (err, tool) => log.error({ err, tool }, 'MCP tool failed'),
      })
      const session: Session = {
        server,
        owner: { tenantId: ctx.tenantId, role: ctx.role, keyId: ctx.actor.id },
        lastSeen: Date.now(),
        transport: new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => {
            sessions.set(id, session)
          },
          onsessionclosed: (id) => {
            sessions.delete(id)
          },
        }),
      }
      session.transport.onclose = () => {
        if (session.transport.sessionId) sessions.delete(session.transport.sessionId)
      }
      await server.connect(session.transport)
      return session
    }

    const handle = async (req: FastifyRequest, reply: FastifyReply) => {
      const sessionId = sessionIdOf(req)
      let session: Session
      if (sessionId) {
        const found = sessions.get(sessionId)
        if (!found) throw new AppError('not_found', `MCP session ${sessionId} was not found (it ended or expired); initialize a new session`)
        session = found
      } else if (req.method === 'POST' && isInitializeRequest(req.body)) {
        session = await openSession(req.ctx)
      } else {
        throw new AppError('bad_request', 'send the mcp-session-id header of an initialized session, or POST an initialize request to start one')
      }
      session.lastSeen = Date.now()
      await serveRaw(req, reply, session.transport, log)
    }

    const schema = { hide: true }
    app.post(MCP_PATH, { schema }, handle)
    app.get(MCP_PATH, { schema }, handle)
    app.delete(MCP_PATH, { schema }, handle)
  }
}

/** Bearer token (verified exactly like the API routes), or X-API-Key + X-Tenant (checked like the token exchange). */
async function authenticate(req: FastifyRequest, deps: Deps, services: Services): Promise<Ctx> {
  const apiKey = req.headers['x-api-key']
  if (req.headers.authorization === undefined && apiKey !== undefined) {
    const tenant = req.headers['x-tenant']
    return services.auth.checkApiKey(
      { apiKey: typeof apiKey === 'string' ? apiKey : undefined, tenant: typeof tenant === 'string' ? tenant : undefined },
      { requestId: req.id, source: 'mcp' },
    )
  }
  if (req.headers.authorization === undefined) {
    throw new AppError('unauthorized', 'send Authorization: Bearer <access token>, or X-API-Key and X-Tenant headers')
  }
  return { ...(await authenticateBearer(req, deps)), source: 'mcp' }
}

function sessionIdOf(req: FastifyRequest): string | undefined {
  const value = req.headers['mcp-session-id']
  return typeof value === 'string' && value !== '' ? value : undefined
}

function sameCaller(session: Session, ctx: Ctx): boolean {
  return session.owner.tenantId === ctx.tenantId && session.owner.keyId === ctx.actor.id && session.owner.role === ctx.role
}

/** Hands the raw request to the SDK's transport, keeping the headers Fastify's hooks set (request id, rate limits). */
async function serveRaw(req: FastifyRequest, reply: FastifyReply, transport: StreamableHTTPServerTransport, log: FastifyInstance['log']) {
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value !== undefined) reply.raw.setHeader(name, value)
    if (name.startsWith('ratelimit-') && value !== undefined) reply.raw.setHeader(`x-${name}`, value)
  }
  const authInfo: AuthInfo = { token: '', clientId: req.ctx.actor.id ?? 'unknown', scopes: [req.ctx.role], extra: { ctx: req.ctx } }
  const raw = Object.assign(req.raw, { auth: authInfo })
  reply.hijack()
  try {
    await transport.handleRequest(raw, reply.raw, req.body)
  } catch (err) {
    log.error({ err }, 'MCP transport failed')
    if (!reply.raw.headersSent) {
      reply.raw.writeHead(500, { 'content-type': 'application/problem+json' })
      reply.raw.end(JSON.stringify({ status: 500, code: 'internal', detail: 'the MCP request failed', request_id: req.id }))
    } else reply.raw.end()
  }
}
