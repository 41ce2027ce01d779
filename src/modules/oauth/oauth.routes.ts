import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { serviceOrigin } from '../../http/plugins/auth.js'
import { installRateLimit } from '../../http/plugins/rate-limit.js'
import type { Ctx } from '../../shared/context.js'
import type { Deps } from '../../shared/deps.js'
import { runMutation } from '../../shared/mutation.js'
import { SESSION_COOKIE, type SessionsService } from '../sessions/sessions.service.js'
import { signInRateLimit } from '../sessions/sign-in.routes.js'
import { START_PATH } from '../sso/sso.service.js'
import {
  INTERACTION_PATH,
  OAUTH_PREFIX,
  OAUTH_SCOPES,
  type OAuthServer,
  accountIdOf,
  escapeHtml,
  oauthRole,
  resourceOf,
} from './oauth.server.js'

/** RFC 9728 metadata of /mcp: at the path-suffixed address (what the 401 names) and at the plain one. */
export const RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource'
const REGISTRATION_BODY_LIMIT = 56 * 1024

/** A consent form's token: bound to the person's session secret and to this one authorization request. */
const consentToken = (sessionSecret: string, uid: string) =>
  createHmac('sha256', sessionSecret).update(`oauth-consent:${uid}`).digest('base64url')

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

/** The `WWW-Authenticate` of a 401 at /mcp: where an MCP client finds how to get a token. */
export function bearerChallenge(origin: string, error?: string): string {
  const metadata = `${origin}${RESOURCE_METADATA_PATH}${'/mcp'}`
  return error ? `Bearer error="${error}", resource_metadata="${metadata}"` : `Bearer resource_metadata="${metadata}"`
}

/** https anywhere, http only to this machine (an assistant's local callback, RFC 8252). */
function redirectUriProblem(value: unknown): string | null {
  if (typeof value !== 'string') return 'each redirect URI must be a string'
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return `${value} is not an absolute URL`
  }
  if (url.hash !== '') return `${value} must not have a fragment`
  if (url.protocol === 'https:') return null
  if (url.protocol === 'http:' && ['127.0.0.1', '[::1]', 'localhost'].includes(url.hostname)) return null
  return `${value} is neither https nor a loopback http address (127.0.0.1, [::1], localhost)`
}

function oauthError(reply: FastifyReply, status: number, error: string, description: string): FastifyReply {
  return reply.code(status).header('cache-control', 'no-store').send({ error, error_description: description })
}

interface Page {
  title: string
  body: string
  /** Sources besides 'self' the page's form may lead to (the client's redirect URI). */
  formTargets?: string[] | null
}

/** Server-rendered, no script, its one style block allowed by nonce, never framed. */
function sendPage(reply: FastifyReply, status: number, page: Page): FastifyReply {
  const nonce = randomBytes(16).toString('base64')
  const formAction =
    page.formTargets === null ? '' : `; form-action 'self'${(page.formTargets ?? []).map((t) => ` ${t}`).join('')}`
  return reply
    .code(status)
    .type('text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header(
      'content-security-policy',
      `default-src 'none'; style-src 'nonce-${nonce}'; base-uri 'none'; frame-ancestors 'none'${formAction}`,
    )
    .send(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">` +
        `<title>${escapeHtml(page.title)}</title><style nonce="${nonce}">body{font:16px/1.5 system-ui,sans-serif;` +
        `max-width:36rem;margin:4rem auto;padding:0 1rem}button{font:inherit;padding:.4rem 1.2rem;margin-right:.5rem}` +
        `input{font:inherit}</style></head><body>${page.body}</body></html>`,
    )
}

const expiredPage = (reply: FastifyReply) =>
  sendPage(reply, 400, {
    title: 'Request expired',
    body:
      '<h1>This request has expired</h1><p>This request to connect an assistant is no longer valid: it took longer ' +
      'than 10 minutes, was already answered, or was started in another browser. Start connecting again from the assistant.</p>',
  })

/**
 * The authorization server's routes: RFC 9728 and RFC 8414 metadata, the provider's endpoints under /oauth/* (each
 * limited per client address like sign-in), and the interaction where a signed-in person allows or denies a client.
 */
export function oauthRoutes(oauth: OAuthServer, sessions: SessionsService, deps: Deps) {
  const { config } = deps
  const rateLimit = signInRateLimit(config)
  const routeConfig = { public: true, rateLimit }

  /** Hands the request to oidc-provider, keeping the headers the service's hooks set (request id, rate limits). */
  async function forward(req: FastifyRequest, reply: FastifyReply, url?: string) {
    for (const [name, value] of Object.entries(reply.getHeaders())) {
      if (value !== undefined) reply.raw.setHeader(name, value)
    }
    if (url !== undefined) req.raw.url = url
    reply.hijack()
    try {
      await oauth.handle(serviceOrigin(req, config), req.raw, reply.raw)
    } catch (err) {
      req.log.error({ err }, 'OAuth request failed')
      if (!reply.raw.headersSent) {
        reply.raw.writeHead(500, { 'content-type': 'application/json', 'cache-control': 'no-store' })
        reply.raw.end(JSON.stringify({ error: 'server_error', error_description: 'the request failed' }))
      } else reply.raw.end()
    }
  }

  return async (app: FastifyInstance) => {
    await installRateLimit(app, deps)

    const resourceMetadata = async (req: FastifyRequest, reply: FastifyReply) => {
      const origin = serviceOrigin(req, config)
      reply.header('cache-control', 'public, max-age=3600')
      return {
        resource: resourceOf(origin),
        authorization_servers: [origin],
        scopes_supported: [...OAUTH_SCOPES],
        bearer_methods_supported: ['header'],
        resource_name: 'AI governance registry (MCP)',
        resource_documentation: `${origin}/docs`,
      }
    }
    app.get(RESOURCE_METADATA_PATH, { config: routeConfig, schema: { hide: true } }, resourceMetadata)
    app.get(`${RESOURCE_METADATA_PATH}/mcp`, { config: routeConfig, schema: { hide: true } }, resourceMetadata)
    app.get('/.well-known/oauth-authorization-server', { config: routeConfig, schema: { hide: true } }, (req, reply) =>
      forward(req, reply, '/.well-known/openid-configuration'),
    )
    app.get('/.well-known/openid-configuration', { config: routeConfig, schema: { hide: true } }, (req, reply) =>
      forward(req, reply),
    )

    // The provider's endpoints read their bodies themselves: nothing is parsed here.
    await app.register(async (raw) => {
      raw.removeAllContentTypeParsers()
      raw.addContentTypeParser('*', (_req, _payload, done) => done(null, undefined))

      raw.post(`${OAUTH_PREFIX}/register`, { config: routeConfig, schema: { hide: true } }, async (req, reply) => {
        const body = await readBody(req)
        if (body === null) return oauthError(reply, 400, 'invalid_client_metadata', 'send the client metadata as JSON')
        const problem = registrationProblem(body.parsed)
        if (problem) {
          req.log.warn(
            { component: 'oauth', error: problem.error, detail: problem.description },
            'OAuth registration refused',
          )
          return oauthError(reply, 400, problem.error, problem.description)
        }
        // The provider reads an already-read body from here.
        Object.assign(req.raw, { body: body.text })
        return forward(req, reply)
      })
      raw.all(`${OAUTH_PREFIX}/*`, { config: routeConfig, schema: { hide: true } }, (req, reply) => forward(req, reply))
    })

    // The interaction: the person's consent page and its answer.
    await app.register(async (pages) => {
      pages.removeAllContentTypeParsers()
      pages.addContentTypeParser(
        'application/x-www-form-urlencoded',
        { parseAs: 'string', bodyLimit: 8 * 1024 },
        (_req, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))),
      )

      pages.get<{ Params: { uid: string } }>(
        `${INTERACTION_PATH}/:uid`,
        { config: routeConfig, schema: { hide: true } },
        async (req, reply) => {
          const origin = serviceOrigin(req, config)
          const provider = oauth.providerFor(origin)
          const details = await provider.interactionDetails(req.raw, reply.raw).catch(() => null)
          if (!details || details.uid !== req.params.uid) return expiredPage(reply)
          const client = await provider.Client.find(String(details.params.client_id))
          if (!client) return expiredPage(reply)
          const clientName = client.clientName ?? client.clientId
          const signedIn = await personOf(req, sessions)
          if (!signedIn) {
            const here = `${INTERACTION_PATH}/${details.uid}`
            return sendPage(reply, 200, {
              title: 'Sign in to continue',
              formTargets: null,
              body:
                `<h1>Sign in to connect ${escapeHtml(clientName)}</h1>` +
                `<p>An assistant, <strong>${escapeHtml(clientName)}</strong>, asks to use the AI governance registry ` +
                `for you. Sign in first; you will then decide whether to allow it.</p>` +
                `<form method="get" action="${START_PATH}"><input type="hidden" name="return_to" value="${escapeHtml(here)}">` +
                `<p><label>Your organization <input name="tenant" required maxlength="63"></label></p>` +
                `<p><button type="submit">Sign in with single sign-on</button></p></form>` +
                `<p>No single sign-on? Ask an administrator for a sign-in link, open it in this browser, then reload this page.</p>`,
            })
          }
          const { ctx, secret } = signedIn
          const scopes = String(details.params.scope ?? '').split(' ')
          const role = oauthRole(ctx.role, scopes.join(' '))
          const may =
            role === 'write'
              ? 'read the registry and change it in your name: create and update use cases, models and vendors, answer controls and move use cases through the workflow'
              : 'read the registry in your name (use cases, models, vendors, controls, the audit log); it cannot change anything'
          const capped = scopes.includes('write') && role === 'read'
          const redirectOrigin = new URL(String(details.params.redirect_uri)).origin
          return sendPage(reply, 200, {
            title: `Allow ${clientName}?`,
            formTargets: [redirectOrigin],
            body:
              `<h1>Allow ${escapeHtml(clientName)} to act for you?</h1>` +
              `<p>You are signed in as <strong>${escapeHtml(ctx.actor.name ?? '')}</strong> in <strong>${escapeHtml(ctx.tenantId)}</strong>.</p>` +
              `<p><strong>${escapeHtml(clientName)}</strong> asks to ${may}.` +
              (capped ? ' It asked to change data too, but your own role only lets you read.' : '') +
              '</p><p>What it does is recorded in the audit log under your name. You can disconnect it in the assistant ' +
              `at any time.</p><p>It will be sent back to <code>${escapeHtml(String(details.params.redirect_uri))}</code>.</p>` +
              `<form method="post" action="${INTERACTION_PATH}/${escapeHtml(details.uid)}">` +
              `<input type="hidden" name="csrf" value="${consentToken(secret, details.uid)}">` +
              `<button type="submit" name="decision" value="allow">Allow</button>` +
              `<button type="submit" name="decision" value="deny">Deny</button></form>`,
          })
        },
      )

      pages.post<{ Params: { uid: string }; Body: Record<string, string> | undefined }>(
        `${INTERACTION_PATH}/:uid`,
        { config: routeConfig, schema: { hide: true } },
        async (req, reply) => {
          const origin = serviceOrigin(req, config)
          const refuse = (why: string) => {
            req.log.warn({ component: 'oauth', reason: why }, 'OAuth consent refused')
            return sendPage(reply, 403, {
              title: 'Not allowed',
              body: `<h1>This answer was not accepted</h1><p>${escapeHtml(why)}</p>`,
            })
          }
          if (req.headers.origin !== origin)
            return refuse('Answer from the page this service showed you (the request came from elsewhere).')
          const signedIn = await personOf(req, sessions)
          if (!signedIn) return refuse('You are not signed in any more. Sign in and start connecting again.')
          const given = req.body?.csrf
          if (typeof given !== 'string' || !sameText(given, consentToken(signedIn.secret, req.params.uid))) {
            return refuse('The form was not the one shown to you. Reload the page and answer again.')
          }
          const provider = oauth.providerFor(origin)
          const details = await provider.interactionDetails(req.raw, reply.raw).catch(() => null)
          if (!details || details.uid !== req.params.uid) return expiredPage(reply)
          const { ctx } = signedIn
          const clientId = String(details.params.client_id)
          /** Logs the person's answer and sends the browser back to the provider with it. */
          const answer = async (result: Parameters<typeof provider.interactionResult>[2], message: string) => {
            req.log.info({ component: 'oauth', tenant: ctx.tenantId, client: clientId }, message)
            const to = await provider.interactionResult(req.raw, reply.raw, result, { mergeWithLastSubmission: false })
            return reply.header('cache-control', 'no-store').redirect(to, 303)
          }
          if (req.body?.decision !== 'allow') {
            return answer(
              { error: 'access_denied', error_description: 'the person did not allow this client' },
              'OAuth access denied by the person',
            )
          }
          const accountId = accountIdOf(ctx.tenantId, ctx.actor.id!)
          const requested = String(details.params.scope ?? '')
            .split(' ')
            .filter(Boolean)
          const resource = typeof details.params.resource === 'string' ? details.params.resource : resourceOf(origin)
          const grant = new provider.Grant({ accountId, clientId })
          const scopes = requested.filter((s) => (OAUTH_SCOPES as readonly string[]).includes(s))
          // The provider counts read and write among its own scopes as well as the resource's: granted as both.
          const oidcScopes = requested.filter((s) => s === 'openid' || s === 'offline_access' || scopes.includes(s))
          if (oidcScopes.length > 0) grant.addOIDCScope(oidcScopes.join(' '))
          if (scopes.length > 0) grant.addResourceScope(resource, scopes.join(' '))
          const client = await provider.Client.find(clientId)
          const clientName = client?.clientName ?? clientId
          // Saved before the audit transaction: on SQLite the provider's own writes would wait for its lock.
          const grantId = await grant.save()
          await runMutation(deps.database, ctx, async () => ({
            result: undefined,
            audit: {
              action: 'oauth_grant.created',
              resourceType: 'oauth_client',
              resourceId: clientId,
              resourceName: clientName,
              subObjectType: 'user',
              subObjectId: ctx.actor.id,
              subObjectName: ctx.actor.name,
              metadata: { scope: scopes.join(' '), role: oauthRole(ctx.role, scopes.join(' ')) },
            },
          }))
          return answer({ login: { accountId }, consent: { grantId } }, 'OAuth access allowed by the person')
        },
      )
    })
  }
}

/** The signed-in person of the request's session cookie, with the cookie's secret (the consent token is bound to it). */
async function personOf(req: FastifyRequest, sessions: SessionsService): Promise<{ ctx: Ctx; secret: string } | null> {
  const secret = req.cookies?.[SESSION_COOKIE]
  if (secret === undefined) return null
  const ctx = await sessions.authenticate(secret, req.id)
  return ctx && ctx.actor.type === 'user' ? { ctx, secret } : null
}

async function readBody(req: FastifyRequest): Promise<{ text: string; parsed: unknown } | null> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req.raw) {
    size += (chunk as Buffer).length
    if (size > REGISTRATION_BODY_LIMIT) return null
    chunks.push(chunk as Buffer)
  }
  const text = Buffer.concat(chunks).toString('utf8')
  try {
    return { text, parsed: JSON.parse(text) }
  } catch {
    return null
  }
}

/** Only public clients (no secret to keep) with https or loopback redirect URIs may register. */
function registrationProblem(body: unknown): { error: string; description: string } | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { error: 'invalid_client_metadata', description: 'the client metadata must be a JSON object' }
  }
  const metadata = body as Record<string, unknown>
  const method = metadata.token_endpoint_auth_method
  if (method !== undefined && method !== 'none') {
    return {
      error: 'invalid_client_metadata',
      description: 'only public clients register here: token_endpoint_auth_method must be "none"',
    }
  }
  const uris = metadata.redirect_uris
  if (!Array.isArray(uris) || uris.length === 0) {
    return { error: 'invalid_redirect_uri', description: 'redirect_uris must list at least one redirect URI' }
  }
  for (const uri of uris) {
    const problem = redirectUriProblem(uri)
    if (problem) return { error: 'invalid_redirect_uri', description: problem }
  }
  return null
}
