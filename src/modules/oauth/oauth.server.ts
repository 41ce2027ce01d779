import { createHmac, generateKeyPairSync } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { FastifyBaseLogger } from 'fastify'
import Provider, { type Configuration, errors, type KoaContextWithOIDC } from 'oidc-provider'
import type { Config } from '../../config.js'
import type { Database } from '../../db/create-db.js'
import { type Ctx, type Role, roleAllows, type Source } from '../../shared/context.js'
import { oauthAdapter } from './oauth.adapter.js'

/** Where the authorization server's endpoints live; the issuer is the service's origin itself. */
export const OAUTH_PREFIX = '/oauth'
export const INTERACTION_PATH = `${OAUTH_PREFIX}/interaction`
/** The one resource its tokens are for (RFC 8707). */
export const MCP_RESOURCE_PATH = '/mcp'
export const OAUTH_SCOPES = ['read', 'write'] as const
/** Access tokens are short-lived; refresh tokens rotate on every use. */
export const ACCESS_TOKEN_TTL_S = 10 * 60
const REFRESH_TOKEN_TTL_S = 30 * 24 * 60 * 60
/** Without SERVICE_PUBLIC_URL the issuer is the request's origin: a few origins' providers are kept at most. */
const PROVIDERS_KEPT = 4

export const resourceOf = (origin: string) => `${origin}${MCP_RESOURCE_PATH}`

/** An account of the provider is a tenant's user: `<tenant>/<user id>` (tenant ids hold no `/`). */
export const accountIdOf = (tenantId: string, userId: string) => `${tenantId}/${userId}`
function parseAccountId(accountId: string): { tenantId: string; userId: string } | null {
  const at = accountId.indexOf('/')
  return at <= 0 ? null : { tenantId: accountId.slice(0, at), userId: accountId.slice(at + 1) }
}

/** What a grant's scope lets its holder do, before the person's own role caps it. */
export function scopeRole(scope: string | undefined): Role {
  return (scope ?? '').split(' ').includes('write') ? 'write' : 'read'
}

/** The lesser of the person's role and the granted scope; an admin gets at most write through OAuth. */
export function oauthRole(personRole: Role, scope: string | undefined): Role {
  const granted = scopeRole(scope)
  const capped: Role = roleAllows(personRole, 'write') ? 'write' : personRole
  return roleAllows(capped, granted) ? granted : capped
}

export const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)

/** A page or JSON error as the provider renders it; people see these in a browser, so plain and without styles fetched. */
async function renderError(ctx: KoaContextWithOIDC, out: { error: string; error_description?: string }) {
  ctx.type = 'html'
  ctx.set('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'")
  ctx.set('cache-control', 'no-store')
  ctx.body =
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Authorization failed</title>` +
    `<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem}</style></head>` +
    `<body><h1>The assistant could not be connected</h1><p>${escapeHtml(out.error_description ?? out.error)}</p>` +
    `<p>Error: <code>${escapeHtml(out.error)}</code></p></body></html>`
}

export interface OAuthDeps {
  config: Config
  database: Database
  log: FastifyBaseLogger
  /** Keys the provider's cookies are signed with. */
  cookieKey: Buffer
}

export type OAuthServer = ReturnType<typeof createOAuthServer>

/**
 * The authorization server of /mcp (oidc-provider, a certified implementation): dynamic registration of public
 * clients, authorization code with PKCE S256, tokens bound to `<origin>/mcp`, rotating refresh tokens, revocation.
 * Its records live in `oauth_records`, so any instance can serve any step.
 */
export function createOAuthServer(deps: OAuthDeps) {
  const { config, database, log } = deps
  const { db } = database
  const Adapter = oauthAdapter(db)
  const cookieKeys = [createHmac('sha256', deps.cookieKey).update('oauth-cookies').digest('base64url')]
  // Tokens are opaque and no ID token is needed by /mcp, so a signing key of this process's own is enough.
  const signingKey = {
    ...generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' }),
    use: 'sig',
  }
  const providers = new Map<
    string,
    { provider: Provider; handle: (req: IncomingMessage, res: ServerResponse) => Promise<void> }
  >()

  async function activeUser(accountId: string) {
    const who = parseAccountId(accountId)
    if (!who) return undefined
    const user = await db
      .selectFrom('users')
      .select(['id', 'email', 'name', 'role', 'active'])
      .where('tenant_id', '=', who.tenantId)
      .where('id', '=', who.userId)
      .executeTakeFirst()
    return user?.active ? { ...user, tenantId: who.tenantId, role: user.role as Role } : undefined
  }

  function build(origin: string): Provider {
    const resource = resourceOf(origin)
    const configuration: Configuration = {
      adapter: Adapter as unknown as Configuration['adapter'],
      clients: [],
      clientAuthMethods: ['none'],
      clientDefaults: {
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
        id_token_signed_response_alg: 'ES256',
      },
      responseTypes: ['code'],
      scopes: [...OAUTH_SCOPES],
      claims: { openid: ['sub'] },
      pkce: { required: () => true },
      routes: {
        authorization: `${OAUTH_PREFIX}/authorize`,
        token: `${OAUTH_PREFIX}/token`,
        registration: `${OAUTH_PREFIX}/register`,
        revocation: `${OAUTH_PREFIX}/revoke`,
        jwks: `${OAUTH_PREFIX}/jwks`,
        end_session: `${OAUTH_PREFIX}/logout`,
        userinfo: `${OAUTH_PREFIX}/userinfo`,
        introspection: `${OAUTH_PREFIX}/introspect`,
        pushed_authorization_request: `${OAUTH_PREFIX}/par`,
        code_verification: `${OAUTH_PREFIX}/device`,
        device_authorization: `${OAUTH_PREFIX}/device/auth`,
        backchannel_authentication: `${OAUTH_PREFIX}/backchannel`,
        challenge: `${OAUTH_PREFIX}/challenge`,
      },
      interactions: { url: (_ctx, interaction) => `${INTERACTION_PATH}/${interaction.uid}` },
      cookies: { keys: cookieKeys },
      jwks: { keys: [signingKey as never] },
      features: {
        devInteractions: { enabled: false },
        registration: { enabled: true },
        revocation: { enabled: true },
        userinfo: { enabled: false },
        rpInitiatedLogout: { enabled: false },
        resourceIndicators: {
          enabled: true,
          defaultResource: () => resource,
          useGrantedResource: () => true,
          getResourceServerInfo: (_ctx, indicator) => {
            if (indicator !== resource) {
              throw new errors.InvalidTarget(`this server issues tokens for ${resource} only`)
            }
            return {
              scope: OAUTH_SCOPES.join(' '),
              audience: resource,
              accessTokenTTL: ACCESS_TOKEN_TTL_S,
              accessTokenFormat: 'opaque',
            }
          },
        },
      },
      // Every authorization is shown to the person: only the grant of this very consent is used, never an earlier one.
      loadExistingGrant: async (ctx) => {
        const grantId = ctx.oidc.result?.consent?.grantId
        return grantId ? ctx.oidc.provider.Grant.find(grantId) : undefined
      },
      issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
      // Tokens end with their grant, person or revocation, not with the provider's short browser session.
      expiresWithSession: async () => false,
      findAccount: async (_ctx, id) => {
        const user = await activeUser(id)
        return user ? { accountId: id, claims: async () => ({ sub: id }) } : undefined
      },
      ttl: {
        AccessToken: ACCESS_TOKEN_TTL_S,
        AuthorizationCode: 60,
        RefreshToken: REFRESH_TOKEN_TTL_S,
        Grant: REFRESH_TOKEN_TTL_S,
        Interaction: 10 * 60,
        Session: 10 * 60,
        IdToken: 10 * 60,
      },
      renderError,
    }
    const provider = new Provider(origin, configuration)
    // The service sets X-Forwarded-* from its own origin before handing a request over (see handle).
    provider.proxy = true
    // Refusals are logged by their OAuth error, never with the codes, tokens or verifiers involved.
    const refused = (event: string) => (_ctx: unknown, err: { error?: string; error_description?: string }) =>
      log.warn({ component: 'oauth', event, error: err.error, detail: err.error_description }, 'OAuth request refused')
    provider.on('grant.error', refused('grant.error'))
    provider.on('authorization.error', refused('authorization.error'))
    provider.on('registration_create.error', refused('registration_create.error'))
    provider.on('revocation.error', refused('revocation.error'))
    provider.on('server_error', (_ctx: unknown, err: Error) =>
      log.error({ component: 'oauth', err }, 'OAuth server error'),
    )
    return provider
  }

  function entry(origin: string) {
    let found = providers.get(origin)
    if (!found) {
      if (providers.size >= PROVIDERS_KEPT) providers.delete(providers.keys().next().value!)
      const provider = build(origin)
      const callback = provider.callback()
      found = { provider, handle: async (req, res) => callback(req, res) }
      providers.set(origin, found)
    }
    return found
  }

  return {
    providerFor: (origin: string) => entry(origin).provider,

    /** Hands a request to the provider as if it arrived at `origin` (the service's public address). */
    async handle(origin: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
      const url = new URL(origin)
      req.headers['x-forwarded-proto'] = url.protocol.slice(0, -1)
      req.headers['x-forwarded-host'] = url.host
      await entry(origin).handle(req, res)
    },

    /**
     * Who an access token acts for, or null when it is not one of ours for `<origin>/mcp` (unknown, expired,
     * revoked, for another resource) or its person is no longer active: checked on every request.
     */
    async authenticate(token: string, origin: string, requestId: string | null, source: Source): Promise<Ctx | null> {
      const provider = entry(origin).provider
      const found = await provider.AccessToken.find(token)
      if (!found || found.isExpired) return null
      const audience = (found as unknown as { aud?: string | string[] }).aud
      const resource = resourceOf(origin)
      if (!(Array.isArray(audience) ? audience.includes(resource) : audience === resource)) return null
      if (!found.accountId || !found.clientId) return null
      const user = await activeUser(found.accountId)
      if (!user) return null
      const client = await provider.Client.find(found.clientId)
      if (!client) return null
      return {
        tenantId: user.tenantId,
        role: oauthRole(user.role, found.scope),
        actor: { type: 'user', id: user.id, name: user.name ?? user.email },
        requestId,
        source,
        via: 'oauth',
        client: { id: client.clientId, name: client.clientName ?? client.clientId },
        expiresAt: (found.exp ?? 0) * 1000,
      }
    },

    /** Whether this process can tell who an OAuth access token is: only ours look like this (no JWT dots). */
    looksLikeOAuthToken: (token: string) => !token.includes('.'),

    config,
  }
}
