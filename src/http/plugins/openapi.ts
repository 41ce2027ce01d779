import swagger from '@fastify/swagger'
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, type RouteOptions } from 'fastify'
import { Type } from 'typebox'
import { SERVICE_VERSION } from '../../version.js'
import { NoQuery } from '../../shared/schemas.js'
import { ERROR_CODES } from '../errors.js'
import { webhooksDocument } from '../../modules/webhooks/webhooks.schemas.js'
import { buildComponents, type Components } from '../openapi-components.js'
import { inlineScriptHashes } from './html-security.js'

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
    limit_name: Type.Optional(
      Type.String({
        description:
          'Byte limits only (`quota_exceeded`, and `rate_limited` by the upload budget): which limit, e.g. `evidence_tenant_quota`, `evidence_upload_budget`.',
      }),
    ),
    limit_bytes: Type.Optional(
      Type.Integer({ description: 'Byte limits only: the limit, bytes (per minute for the upload budget).' }),
    ),
    used_bytes: Type.Optional(Type.Integer({ description: 'Byte limits only: bytes counted against it now.' })),
    remaining_bytes: Type.Optional(Type.Integer({ description: 'Byte limits only: bytes left under it now.' })),
    existing_id: Type.Optional(
      Type.String({ description: '`already_exists` only: the id of the record that already has this name or key.' }),
    ),
    role: Type.Optional(
      Type.Enum(['read', 'write', 'admin'], {
        description: "403 for too low a role only: the role of the caller's API key.",
      }),
    ),
    required_role: Type.Optional(
      Type.Enum(['read', 'write', 'admin'], { description: '403 for too low a role only: the role the route needs.' }),
    ),
  },
  { description: 'RFC 9457 problem details.' },
)

const IdempotencyHeader = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      pattern: '^[\\x21-\\x7e]+$',
      description:
        'Retries with the same key and body within 24 h return the first response (Idempotent-Replayed: true) and create nothing.',
    }),
  ),
})

/** A problem response for a route to declare itself, when the rules below do not give it. */
export const problem = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: Problem } },
})

/** Declares on every route the error responses it can give, so the document is complete without repeating them. */
function addErrorResponses(route: RouteOptions): void {
  const schema = (route.schema ??= {}) as Record<string, unknown> & {
    response?: Record<string, unknown>
    body?: unknown
  }
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
    add(
      409,
      'Conflict with the current state (record in use, published version, system-managed stage, end of the workflow).',
    )
    add(413, 'The body is larger than 1 MiB.')
    add(415, 'The body is not empty and not application/json.')
    add(
      422,
      'The body is missing or failed validation (`errors` names each field), or the name or key already exists: `code: already_exists` with `existing_id`.',
    )
  } else if (route.method !== 'GET') {
    add(409, 'Conflict with the current state.')
    // A body sent anyway is still read: too large or not JSON is refused before the route runs.
    add(413, 'The body is larger than 1 MiB.')
    add(415, 'The body is not empty and not application/json.')
  }
  // An Idempotency-Key already used with another body answers 422 on bodiless POSTs too.
  if (route.method === 'POST' && !isPublic)
    add(422, 'The body failed validation, or the Idempotency-Key was used with another request.')
  // Text that is not well-formed Unicode or holds U+0000 is refused wherever it arrives, query and path included.
  if (!isPublic)
    add(422, 'A value failed validation (e.g. text with a lone surrogate or U+0000); `errors` names each field.')
  if (!isPublic || route.url.endsWith('/auth/token')) add(429, 'Rate limited; see Retry-After.')
  add(500, 'Unexpected server error (no details are disclosed).')
  add(503, 'A dependency (database) is unavailable; retry later.')
}

/** The tags of the document, in the order the reference shows them. */
const TAGS = [
  { name: 'auth', description: 'Exchange an API key for a bearer token (the only route that takes the key itself).' },
  {
    name: 'api keys',
    description: 'Create, list and revoke API keys (admin role). A secret is shown once, on create.',
  },
  {
    name: 'sessions',
    description:
      "Who is calling (`GET /me`), and people's signed-in sessions (admin: list and end them). People sign in at /auth/oidc/start or with a one-time link.",
  },
  {
    name: 'sso',
    description:
      "The tenant's single sign-on identity provider (OpenID Connect, admin): people then sign in at /auth/oidc/start?tenant=<tenant>.",
  },
  { name: 'system', description: 'What this service is and which tenant and key a token speaks for.' },
  { name: 'health', description: 'Liveness and readiness probes, without authentication.' },
  {
    name: 'use cases',
    description:
      'AI use cases: risk level, regions, owner, custom field values, workflow position and attached questionnaires.',
  },
  {
    name: 'use case workflow',
    description: 'Move a use case through the review stages: advance, reject, or put it in a stage.',
  },
  { name: 'use case policies', description: 'Policy packs applied to a use case and the controls they create.' },
  { name: 'models', description: 'The models in use, their vendors and questionnaires.' },
  { name: 'vendors', description: 'The vendors that supply models and services.' },
  { name: 'risk types', description: 'The risk taxonomy.' },
  {
    name: 'risk scenarios',
    description: 'Concrete risks, typed by risk types, linked to use cases with likelihood and impact.',
  },
  {
    name: 'workflow stages',
    description: "The tenant's review pipeline: a system start and end stage, your stages between.",
  },
  { name: 'policy controls', description: 'Controls, versioned: drafts are editable, published versions immutable.' },
  {
    name: 'policy packs',
    description: 'Versioned sets of published controls (EU AI Act, NIST AI RMF, ISO/IEC 42001 in the starter library).',
  },
  {
    name: 'questionnaires',
    description: 'Versioned questionnaires for use cases, models and vendors, their attachments and answers.',
  },
  {
    name: 'users',
    description:
      'The people records are owned by and controls assigned to: a directory for accountability, not logins.',
  },
  { name: 'teams', description: 'Teams of users, as owners and assignees, and their members.' },
  {
    name: 'custom fields',
    description: "The tenant's own attributes for use cases, models and vendors, and the values records carry.",
  },
  {
    name: 'evidence',
    description:
      'Evidence files (streamed into the database, deduplicated by sha256) and links, used by controls and questionnaire answers.',
  },
  {
    name: 'governance summary',
    description: 'The state of governance at a glance: risk levels, stages, control status, overdue controls.',
  },
  { name: 'audit logs', description: 'The append-only, hash-chained record of every change: query, export, verify.' },
  {
    name: 'configuration',
    description:
      'Configuration as code: export the tenant’s configuration as a canonical document (JSON or YAML), plan a document against it, apply it in one transaction (admin role).',
  },
  {
    name: 'webhooks',
    description:
      'Endpoints that receive the audit records they subscribe to as signed POSTs (Standard Webhooks), and their delivery log (admin role).',
  },
  { name: 'events', description: 'The audit records as a live server-sent event stream, resumable by Last-Event-ID.' },
]

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The body may be left out entirely (the document marks it optional). */
    optionalBody?: boolean
  }
}

type RouteSchema = Record<string, unknown> & { hide?: boolean; body?: unknown; response?: Record<string, unknown> }

/**
 * The route's schema as the document shows it: every use of a named component as a `$ref`. Validation and
 * serialization keep the route's own objects.
 */
function documented(components: Components, schema: RouteSchema): RouteSchema {
  if (schema.hide) return schema
  const out: RouteSchema = { ...schema }
  for (const part of ['querystring', 'params', 'headers', 'body'] as const)
    if (schema[part]) out[part] = components.refify(schema[part], part !== 'body')
  if (schema.response) {
    out.response = Object.fromEntries(
      Object.entries(schema.response).map(([status, response]) => {
        const r = response as { content?: Record<string, { schema: unknown }>; description?: string }
        if (!r.content) {
          const refified = components.refify(response) as Record<string, unknown>
          // @fastify/swagger takes a response's description from its schema; keep it beside the $ref.
          return [
            status,
            r.description && '$ref' in refified ? { ...refified, 'x-response-description': r.description } : refified,
          ]
        }
        const content = Object.fromEntries(
          Object.entries(r.content).map(([type, media]) => [
            type,
            { ...media, schema: components.refify(media.schema) },
          ]),
        )
        return [status, { ...r, content }]
      }),
    )
  }
  return out
}

interface DocumentedOperation {
  operationId?: string
  security?: Record<string, string[]>[]
  parameters?: { in: string; name: string }[]
  requestBody?: { required?: boolean; content: Record<string, { example?: unknown; schema: unknown }> }
}

/**
 * What @fastify/swagger cannot say from a route schema: a body's example once the body is a `$ref` (it lifts
 * examples from inline schemas only), an optional body (it marks every body required), and header parameters
 * that an API-key security scheme of the operation already describes.
 */
function finishOperation(
  operation: DocumentedOperation,
  route: { bodyExample?: unknown; optionalBody: boolean },
  securitySchemes: Record<string, { type: string; in?: string; name?: string }>,
): void {
  const media = operation.requestBody?.content['application/json']
  if (media && route.bodyExample !== undefined) media.example ??= route.bodyExample
  if (operation.requestBody && route.optionalBody) operation.requestBody.required = false
  const schemeHeaders = new Set(
    (operation.security ?? [])
      .flatMap((alternative) => Object.keys(alternative))
      .map((name) => securitySchemes[name])
      .filter((scheme) => scheme?.type === 'apiKey' && scheme.in === 'header')
      .map((scheme) => scheme.name!.toLowerCase()),
  )
  if (operation.parameters && schemeHeaders.size > 0) {
    operation.parameters = operation.parameters.filter(
      (p) => !(p.in === 'header' && schemeHeaders.has(p.name.toLowerCase())),
    )
  }
}

export async function installOpenApi(app: FastifyInstance): Promise<void> {
  // Built on the first request for the document, not at every start: @fastify/swagger reads
  // `components.schemas` and calls `transform` only when it generates the document.
  let components: Components | undefined
  const built = () => (components ??= buildComponents({ Problem }))
  const routes = new Map<string, { bodyExample?: unknown; optionalBody: boolean }>()
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
        title: DOCS_TITLE,
        version: SERVICE_VERSION,
        description:
          'The integration door to the AI-governance registry: use cases, models, vendors, policies, questionnaires, workflow and audit logs. ' +
          'Exchange an API key for a token at POST /api/v1/integration/auth/token, then send `Authorization: Bearer <token>`.',
        license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
      },
      tags: TAGS,
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'JWT',
            description: 'Access token from POST /api/v1/integration/auth/token.',
          },
          apiKeyHeader: {
            type: 'apiKey',
            in: 'header',
            name: 'X-API-Key',
            description: 'An API key secret (sk_…); only POST /api/v1/integration/auth/token takes it.',
          },
          tenantHeader: {
            type: 'apiKey',
            in: 'header',
            name: 'X-Tenant',
            description: 'The tenant the API key belongs to; sent with X-API-Key.',
          },
          sessionCookie: {
            type: 'apiKey',
            in: 'cookie',
            name: 'aigov_session',
            description:
              "A signed-in person's session (browsers). Writes also need `X-CSRF-Token` (from GET /me) and a same-origin `Origin`.",
          },
        },
        get schemas() {
          return built().schemas
        },
      },
      security: [{ bearerAuth: [] }, { sessionCookie: [] }],
      // TypeBox schemas are JSON Schema objects carrying symbols the OpenAPI types do not declare.
      webhooks: webhooksDocument as unknown as Record<string, object>,
    },
    transform: ({ schema, url, route }) => {
      const declared = (schema as RouteSchema | undefined)?.body as
        | { examples?: unknown[]; content?: Record<string, { schema?: { examples?: unknown[] } }> }
        | undefined
      // A body declared per content type (JSON or multipart) takes its example from the JSON one.
      const body = declared?.content ? declared.content['application/json']?.schema : declared
      if (schema?.operationId)
        routes.set(schema.operationId as string, {
          bodyExample: body?.examples?.[0],
          optionalBody: route.config?.optionalBody === true,
        })
      return { schema: schema ? (documented(built(), schema as RouteSchema) as typeof schema) : schema, url }
    },
    transformObject: (document) => {
      const { openapiObject } = document as Extract<typeof document, { openapiObject: unknown }>
      const securitySchemes = (openapiObject.components?.securitySchemes ?? {}) as Record<
        string,
        { type: string; in?: string; name?: string }
      >
      for (const item of Object.values(openapiObject.paths ?? {})) {
        for (const operation of Object.values(item as Record<string, DocumentedOperation>)) {
          const route = routes.get(operation.operationId ?? '')
          if (route) finishOperation(operation, route, securitySchemes)
        }
      }
      return openapiObject
    },
  })
  app.get('/openapi.json', { schema: { hide: true }, config: { public: true } }, async (req, reply) => {
    // Generators take the base address from `servers`: the address this request reached, as the client sees it.
    reply.header('Vary', 'Host, X-Forwarded-Proto')
    const { openapi, info, ...rest } = app.swagger() as Record<string, unknown>
    return { openapi, info, servers: [{ url: requestOrigin(req) }], ...rest }
  })
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
      // Nothing on the page sends the document or a token elsewhere: no developer toolbar (share, upload), no "Open API
      // Client" (Scalar's hosted client), no download links, on every host (not only off localhost).
      configuration: {
        url: '/openapi.json',
        title: DOCS_TITLE,
        pageTitle: DOCS_TITLE,
        favicon: '/favicon.svg',
        withDefaultFonts: false,
        proxyUrl: '',
        agent: { disabled: true },
        mcp: { disabled: true },
        telemetry: false,
        showDeveloperTools: 'never',
        hideClientButton: true,
        documentDownloadType: 'none',
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
    // The page runs Scalar's script from here and its own inline start-up script, and fetches only this service.
    if (String(res.headers['content-type'] ?? '').startsWith('text/html'))
      reply.header('content-security-policy', docsPolicy(res.payload))
    return reply.code(res.statusCode).send(res.rawPayload)
  }
  app.get('/favicon.svg', { schema: { hide: true }, config: { public: true } }, async (_req, reply) =>
    reply.header('content-type', 'image/svg+xml').header('cache-control', 'public, max-age=86400').send(FAVICON),
  )
  app.get('/docs', { schema: { hide: true }, config: { public: true } }, forward)
  app.get('/docs/*', { schema: { hide: true }, config: { public: true } }, forward)
}

const DOCS_TITLE = 'AI Governance Integration API'

/** The reference page's policy: its scripts (by hash when inline), styles and fetches from this service only. */
function docsPolicy(html: string): string {
  return [
    "default-src 'none'",
    `script-src 'self' ${inlineScriptHashes(html).join(' ')}`,
    // Scalar sets styles from its script and in style attributes.
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "worker-src 'self' blob:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ')
}

/** A shield, in the page's own origin (no icon fetched from elsewhere). */
const FAVICON =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><path fill="#2f5fd0" d="M16 2 4 6v9c0 7.5 5.1 13.2 12 15 6.9-1.8 12-7.5 12-15V6z"/>' +
  '<path fill="#fff" d="m14 20.2-4.6-4.6 1.8-1.8 2.8 2.8 6.8-6.8 1.8 1.8z"/></svg>'

const HOST = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/

/** The scheme and host the request came to; a relative server ("/") when the Host header is not a plain host. */
function requestOrigin(req: FastifyRequest): string {
  const forwarded = req.headers['x-forwarded-proto']
  const protocol = forwarded === 'https' || forwarded === 'http' ? forwarded : req.protocol
  const host = req.headers.host
  return host && HOST.test(host) ? `${protocol}://${host}` : '/'
}

const HOP_BY_HOP = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'date'])
