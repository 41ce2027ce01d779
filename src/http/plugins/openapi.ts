import swagger from '@fastify/swagger'
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, type RouteOptions } from 'fastify'
import { Type } from 'typebox'
import { SERVICE_VERSION } from '../../version.js'
import { NoQuery } from '../../shared/schemas.js'
import { ERROR_CODES } from '../errors.js'
import { webhooksDocument } from '../../modules/webhooks/webhooks.schemas.js'

export const Problem = Type.Object(
  {
    type: Type.String({ examples: ['https://aigov.dev/problems/not-found'] }),
    title: Type.String({ examples: ['Not Found'] }),
    status: Type.Integer({ examples: [404] }),
    code: Type.Enum(Object.keys(ERROR_CODES)),
    detail: Type.String({ examples: ['use case uc_01jd3k8m9v4q2w6e8r0t2y4u6i was not found'] }),
    instance: Type.String({ examples: ['/api/v1/integration/use_cases/uc_01jd3k8m9v4q2w6e8r0t2y4u6i'] }),
    request_id: Type.String(),
    errors: Type.Optional(Type.Array(Type.Object({ field: Type.String(), message: Type.String() }))),
    retry_after: Type.Optional(Type.Integer({ description: '429 only: seconds to wait.' })),
    limit: Type.Optional(Type.Integer({ description: '429 only: requests allowed per window.' })),
    remaining: Type.Optional(Type.Integer({ description: '429 only: requests left in the window.' })),
    reset_time: Type.Optional(Type.String({ format: 'date-time', description: '429 only: when the window resets.' })),
    existing_id: Type.Optional(Type.String({ description: '`already_exists` only: the id of the record that already has this name or key.' })),
  },
  { description: 'RFC 9457 problem details.' },
)

const IdempotencyHeader = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({ minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$', description: 'Retries with the same key and body within 24 h return the first response (Idempotent-Replayed: true) and create nothing.' }),
  ),
})

const problem = (description: string) => ({ description, content: { 'application/problem+json': { schema: Problem } } })

/** Declares on every route the error responses it can give, so the document is complete without repeating them. */
function addErrorResponses(route: RouteOptions): void {
  const schema = (route.schema ??= {}) as Record<string, unknown> & { response?: Record<string, unknown>; body?: unknown }
  const response = (schema.response ??= {})
  const isPublic = route.config?.public === true
  const hasBody = schema.body !== undefined
  if (route.method === 'POST' && !isPublic) schema.headers ??= IdempotencyHeader
  // A route that declares no query parameters takes none: an unknown one is a 400, as on lists.
  schema.querystring ??= NoQuery
  const add = (status: number, description: string) => {
    response[status] ??= problem(description)
  }
  add(400, 'Bad request: malformed JSON, invalid query or path parameter, unknown query parameter or bad cursor.')
  if (!isPublic || route.url.endsWith('/auth/token')) add(401, 'Missing, invalid, expired or revoked credentials.')
  if (!isPublic) add(403, 'The API key role is too low, or X-Tenant does not match the token.')
  if (!isPublic) add(404, 'No such record in this tenant.')
  if (hasBody) {
    add(409, 'Conflict with the current state (record in use, published version, system-managed stage, end of the workflow).')
    add(413, 'The body is larger than 1 MiB.')
    add(415, 'The body is not empty and not application/json.')
    add(422, 'The body is missing or failed validation (`errors` names each field), or the name or key already exists: `code: already_exists` with `existing_id`.')
  } else if (route.method !== 'GET') {
    add(409, 'Conflict with the current state.')
    // A body sent anyway is still read: too large or not JSON is refused before the route runs.
    add(413, 'The body is larger than 1 MiB.')
    add(415, 'The body is not empty and not application/json.')
  }
  // An Idempotency-Key already used with another body answers 422 on bodiless POSTs too.
  if (route.method === 'POST' && !isPublic) add(422, 'The body failed validation, or the Idempotency-Key was used with another request.')
  if (!isPublic || route.url.endsWith('/auth/token')) add(429, 'Rate limited; see Retry-After.')
  add(500, 'Unexpected server error (no details are disclosed).')
  add(503, 'A dependency (database) is unavailable; retry later.')
}

export async function installOpenApi(app: FastifyInstance): Promise<void> {
  app.addHook('onRoute', (route) => {
    if ((route.schema as { hide?: boolean } | undefined)?.hide) return
    // The HEAD twin of a GET shares its schema object; treating it as a bodiless non-GET gave every GET a 409.
    if (route.method === 'HEAD') return
    addErrorResponses(route)
  })
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'AI Governance Integration API',
        version: SERVICE_VERSION,
        description:
          'The integration door to the AI-governance registry: use cases, models, vendors, policies, questionnaires, workflow and audit logs. ' +
          'Exchange an API key for a token at POST /api/v1/integration/auth/token, then send `Authorization: Bearer <token>`.',
      },
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'Access token from POST /api/v1/integration/auth/token.' },
        },
      },
      security: [{ bearerAuth: [] }],
      // TypeBox schemas are JSON Schema objects carrying symbols the OpenAPI types do not declare.
      webhooks: webhooksDocument as unknown as Record<string, object>,
    },
  })
  app.get('/openapi.json', { schema: { hide: true }, config: { public: true } }, async () => app.swagger())
  installDocs(app)
}

/**
 * GET /docs: the interactive reference (Scalar). Its code is ~4 MB, so it is loaded on the first visit in a
 * small Fastify instance of its own that /docs requests are handed to, instead of at every start (it was a
 * quarter of the start time and ~40 MB of memory).
 */
function installDocs(app: FastifyInstance): void {
  let docs: Promise<FastifyInstance> | undefined
  const load = async () => {
    const { default: scalar } = await import('@scalar/fastify-api-reference')
    const sub = Fastify({ logger: false })
    await sub.register(scalar, {
      routePrefix: '/docs',
      // Self-contained: no web fonts, "try it" requests go straight to this service (not through Scalar's
      // public proxy, which would see the bearer token), and the hosted AI agent and MCP buttons are off.
      configuration: {
        url: '/openapi.json',
        title: 'AI Governance Integration API',
        withDefaultFonts: false,
        proxyUrl: '',
        agent: { disabled: true },
        mcp: { disabled: true },
        telemetry: false,
      },
    })
    await sub.ready()
    return sub
  }
  const forward = async (req: FastifyRequest, reply: FastifyReply) => {
    docs ??= load().catch((err: unknown) => {
      docs = undefined
      throw err
    })
    const res = await (await docs).inject({ method: req.method as 'GET', url: req.url, headers: req.headers })
    for (const [name, value] of Object.entries(res.headers)) {
      if (value !== undefined && !HOP_BY_HOP.has(name)) reply.header(name, value)
    }
    return reply.code(res.statusCode).send(res.rawPayload)
  }
  app.get('/docs', { schema: { hide: true }, config: { public: true } }, forward)
  app.get('/docs/*', { schema: { hide: true }, config: { public: true } }, forward)
}

const HOP_BY_HOP = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'date'])
