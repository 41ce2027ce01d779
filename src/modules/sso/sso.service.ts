import { createHash, createHmac, randomBytes } from 'node:crypto'
import ipaddr from 'ipaddr.js'
import * as oidc from 'openid-client'
import type { SsoConfigRow } from '../../db/tables.js'
import { AppError, invalid, notFound } from '../../http/errors.js'
import { type Ctx, systemCtx } from '../../shared/context.js'
import type { Deps } from '../../shared/deps.js'
import { derive, type FieldOf, flag, list, plain, stored, TIME } from '../../shared/fields.js'
import { now } from '../../shared/ids.js'
import { runMutation } from '../../shared/mutation.js'
import { emailKey } from '../../shared/records.js'
import type { Client, Person, SessionsService } from '../sessions/sessions.service.js'
import { createUsersService } from '../users/users.service.js'
import { decryptSecret, encryptSecret } from '../webhooks/webhook-secrets.js'
import type { SsoConfig, SsoConfigInput } from './sso.schemas.js'

/** The cookie that binds a pending sign-in to the browser that started it. */
export const LOGIN_COOKIE = 'aigov_oidc'
/** How long a person has at the identity provider before the sign-in must start again. */
export const LOGIN_TTL_MS = 10 * 60_000
export const CALLBACK_PATH = '/auth/oidc/callback'
export const START_PATH = '/auth/oidc/start'
const SCOPE = 'openid email profile'
/** Seconds for each request to the identity provider: a person waits on it. */
const PROVIDER_TIMEOUT_S = 10
/** A provider's discovery document and keys are kept this long per instance; a changed configuration is read anew. */
const CONFIG_CACHE_MS = 10 * 60_000
const EMAIL = /^[^\s@]+@[^\s@]+$/
const DOMAIN = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$/

export type OidcRefusal =
  | 'no_tenant'
  | 'no_sso'
  | 'missing_state'
  | 'unknown_login'
  | 'used_login'
  | 'expired_login'
  | 'other_browser'
  | 'provider_error'
  | 'provider_rejected'
  | 'provider_unreachable'
  | 'no_email'
  | 'unverified_email'
  | 'domain_not_allowed'
  | 'unknown_email'
  | 'inactive_user'

/** Why a single sign-on was refused: named on the page and in the log, never with the state, code or tokens. */
export class OidcRefused extends Error {
  constructor(
    readonly reason: OidcRefusal,
    readonly tenantId?: string,
    /** What the provider said (an OAuth error code), or why it could not be reached. */
    readonly cause_?: string,
  ) {
    super(reason)
  }
}

/** A `return_to` that stays on this service: one leading slash, no scheme-relative `//`, no backslash or control character. */
export function safeReturnTo(value: unknown, fallback: string): string {
  if (typeof value !== 'string' || value.length > 2048) return fallback
  if (!value.startsWith('/') || value.startsWith('//')) return fallback
  // Browsers drop tabs and newlines and read `\` as `/`, so `/\evil.example` would leave the service.
  for (const c of value) if (c === '\\' || c <= ' ' || c === '\x7f') return fallback
  return value
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

/** The PKCE verifier, derived from the browser's cookie: the database alone cannot redeem a stolen code. */
const codeVerifier = (browserSecret: string, state: string) =>
  createHmac('sha256', browserSecret).update(`pkce:${state}`).digest('base64url')

/** http is allowed for an issuer on this machine only (tests, a local provider); anywhere else it must be https. */
export function checkIssuerUrl(issuer: string): URL {
  let url: URL
  try {
    url = new URL(issuer)
  } catch {
    throw invalid('issuer', 'must be an absolute URL, e.g. https://login.example.com')
  }
  if (url.search || url.hash) throw invalid('issuer', 'must not have a query or fragment')
  if (url.protocol === 'https:') return url
  if (url.protocol === 'http:' && isLoopback(url.hostname)) return url
  throw invalid('issuer', 'must be https (http only for an issuer on a loopback address)')
}

function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '')
  if (host === 'localhost' || host.endsWith('.localhost')) return true
  if (!ipaddr.isValid(host)) return false
  const address = ipaddr.process(host)
  return address.range() === 'loopback'
}

/** Network failures and timeouts (fetch itself failed), as opposed to the provider answering no. */
function unreachable(err: unknown): string | null {
  let failed = false
  let why = 'no answer'
  for (let e = err as { name?: string; code?: string; message?: string; cause?: unknown } | undefined; e; ) {
    if (e.name === 'AbortError' || e.name === 'TimeoutError') return 'timed out'
    if (e.message === 'fetch failed') failed = true
    else if (failed) why = typeof e.code === 'string' ? e.code : (e.message ?? why)
    e = e.cause as typeof e
  }
  return failed ? why : null
}

const describe = (err: unknown) => (err instanceof Error ? err.message : String(err)).slice(0, 300)

async function discover(issuer: URL, clientId: string, secret: string): Promise<oidc.Configuration> {
  const insecure = issuer.protocol === 'http:'
  const found = await oidc.discovery(issuer, clientId, undefined, oidc.ClientSecretBasic(secret), {
    execute: insecure ? [oidc.allowInsecureRequests] : [],
    timeout: PROVIDER_TIMEOUT_S,
  })
  const meta = found.serverMetadata()
  const methods = meta.token_endpoint_auth_methods_supported
  // client_secret_basic is OpenID Connect's default; a provider that lists only client_secret_post gets that.
  const auth =
    methods && !methods.includes('client_secret_basic') && methods.includes('client_secret_post')
      ? oidc.ClientSecretPost(secret)
      : oidc.ClientSecretBasic(secret)
  const config = new oidc.Configuration(meta, clientId, undefined, auth)
  if (insecure) oidc.allowInsecureRequests(config)
  config.timeout = PROVIDER_TIMEOUT_S
  return config
}

/** Where the service itself is reached from (the request's origin): the renderer sets it, no audit lists it. */
const fromOrigin: FieldOf = () => ({ read: () => '', audited: false, listed: false })

/** Each field of a tenant's provider configuration, once (see shared/fields.ts). */
const fields = derive<SsoConfigRow, SsoConfig, SsoConfigInput, SsoConfigInput>({
  // As the provider's discovery document names it: set writes it.
  issuer: stored({ audited: true }),
  client_id: plain(),
  // Whether one is stored; the secret is never rendered, and its audit record says only whether it changed.
  client_secret_set: () => ({
    read: (row) => (row.client_secret as string).length > 0,
    audited: false,
    listed: false,
  }),
  // Lower-cased and deduplicated: set writes them.
  email_domains: list(),
  provision: flag({ default: false }),
  redirect_uri: fromOrigin,
  sign_in_url: fromOrigin,
  created_at: TIME,
  updated_at: TIME,
})

export type SsoService = ReturnType<typeof createSsoService>

export function createSsoService(deps: Pick<Deps, 'database' | 'config' | 'webhookKey'>, sessions: SessionsService) {
  const { database, webhookKey } = deps
  const { db } = database
  const users = createUsersService(deps)
  const cache = new Map<string, { key: string; config: oidc.Configuration; at: number }>()

  const findConfig = (tenantId: string) =>
    db.selectFrom('sso_configs').selectAll().where('tenant_id', '=', tenantId).executeTakeFirst()

  /** The provider's configuration for a tenant's row, discovered once per change of the row (per instance). */
  async function providerFor(row: SsoConfigRow): Promise<oidc.Configuration> {
    const key = `${row.updated_at}|${row.issuer}|${row.client_id}`
    const hit = cache.get(row.tenant_id)
    if (hit && hit.key === key && Date.now() - hit.at < CONFIG_CACHE_MS) return hit.config
    let config: oidc.Configuration
    try {
      config = await discover(new URL(row.issuer), row.client_id, decryptSecret(webhookKey, row.client_secret))
    } catch (err) {
      throw new OidcRefused('provider_unreachable', row.tenant_id, unreachable(err) ?? describe(err))
    }
    cache.set(row.tenant_id, { key, config, at: Date.now() })
    return config
  }

  const toConfig = (row: SsoConfigRow, origin: string): SsoConfig => ({
    ...fields.toItem(row),
    redirect_uri: origin + CALLBACK_PATH,
    sign_in_url: `${origin}${START_PATH}?tenant=${encodeURIComponent(row.tenant_id)}`,
  })

  /** The person the provider vouched for: the tenant's active user with that verified email (or a new one, if allowed). */
  async function personFor(
    row: SsoConfigRow,
    claims: Record<string, unknown>,
    requestId: string | null,
  ): Promise<Person> {
    const tenantId = row.tenant_id
    const email = typeof claims.email === 'string' ? claims.email.trim() : ''
    if (!EMAIL.test(email) || email.length > 320) throw new OidcRefused('no_email', tenantId)
    // Entra ID sends no email_verified; its optional claim xms_edov says the same (the domain owner verified it).
    const verified =
      claims.email_verified === undefined
        ? claims.xms_edov === true || claims.xms_edov === 'true' || claims.xms_edov === 1
        : claims.email_verified === true || claims.email_verified === 'true'
    if (!verified) throw new OidcRefused('unverified_email', tenantId)
    const domains = JSON.parse(row.email_domains) as string[]
    const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase()
    if (domains.length > 0 && !domains.includes(domain)) throw new OidcRefused('domain_not_allowed', tenantId)
    const find = () =>
      db
        .selectFrom('users')
        .select(['id', 'email', 'name', 'active'])
        .where('tenant_id', '=', tenantId)
        .where('email_key', '=', emailKey(email))
        .executeTakeFirst()
    let user = await find()
    if (!user) {
      if (row.provision !== 1) throw new OidcRefused('unknown_email', tenantId)
      const name = typeof claims.name === 'string' && claims.name.trim() ? claims.name.trim().slice(0, 200) : null
      try {
        await users.create(systemCtx(tenantId, 'system', requestId), { email, name, role: 'read' })
      } catch (err) {
        // The same person signing in twice at once: the other sign-in created them.
        if (!(err instanceof AppError && err.code === 'already_exists')) throw err
      }
      user = await find()
      if (!user) throw new OidcRefused('unknown_email', tenantId)
    }
    if (!user.active) throw new OidcRefused('inactive_user', tenantId)
    return { id: user.id, email: user.email, name: user.name }
  }

  return {
    async get(ctx: Ctx, origin: string): Promise<SsoConfig> {
      const row = await findConfig(ctx.tenantId)
      if (!row) throw notFound('single sign-on configuration of tenant', ctx.tenantId)
      return toConfig(row, origin)
    },

    /** Saves the tenant's provider after reading its discovery document, so a typo is a 422 now, not a broken sign-in later. */
    async set(ctx: Ctx, input: SsoConfigInput, origin: string): Promise<SsoConfig> {
      const issuer = checkIssuerUrl(input.issuer.trim())
      const domains = [...new Set((input.email_domains ?? []).map((d) => d.toLowerCase()))]
      const provision = input.provision === true
      const bad = domains.find((d) => !DOMAIN.test(d))
      if (bad !== undefined) throw invalid('email_domains', `${bad} is not a mail domain (e.g. example.com)`)
      if (provision && domains.length === 0)
        throw invalid('email_domains', 'provision needs the domains whose people may be created (e.g. ["example.com"])')
      let provider: oidc.Configuration
      try {
        provider = await discover(issuer, input.client_id, input.client_secret)
      } catch (err) {
        const why = unreachable(err)
        throw invalid(
          'issuer',
          why
            ? `could not reach ${issuer.href.replace(/\/$/, '')}/.well-known/openid-configuration (${why})`
            : `${issuer.href.replace(/\/$/, '')}/.well-known/openid-configuration is not a usable OpenID Connect discovery document: ${describe(err)}`,
        )
      }
      const meta = provider.serverMetadata()
      if (!meta.authorization_endpoint || !meta.token_endpoint || !meta.jwks_uri)
        throw invalid('issuer', 'the discovery document lacks authorization_endpoint, token_endpoint or jwks_uri')
      const methods = meta.code_challenge_methods_supported
      if (methods && !methods.includes('S256'))
        throw invalid('issuer', 'the provider does not support PKCE with S256 (code_challenge_methods_supported)')
      const at = now()
      return runMutation(database, ctx, async (tx) => {
        const before = await tx
          .selectFrom('sso_configs')
          .selectAll()
          .where('tenant_id', '=', ctx.tenantId)
          .executeTakeFirst()
        const row: SsoConfigRow = {
          tenant_id: ctx.tenantId,
          ...(fields.createColumns(input, ctx) as Pick<SsoConfigRow, 'client_id' | 'email_domains' | 'provision'>),
          // The issuer as the provider names itself: what ID tokens' `iss` must equal.
          issuer: meta.issuer,
          client_secret: encryptSecret(webhookKey, input.client_secret),
          email_domains: JSON.stringify(domains),
          created_at: before?.created_at ?? at,
          updated_at: at,
        }
        if (before) await tx.updateTable('sso_configs').set(row).where('tenant_id', '=', ctx.tenantId).execute()
        else await tx.insertInto('sso_configs').values(row).execute()
        const old = before && toConfig(before, origin)
        const changes: Record<string, [unknown, unknown]> = {}
        for (const field of fields.audited) {
          const was = old?.[field] ?? null
          const is = toConfig(row, origin)[field]
          if (JSON.stringify(was) !== JSON.stringify(is)) changes[field] = [was, is]
        }
        return {
          result: toConfig(row, origin),
          audit: {
            action: 'sso.configured',
            resourceType: 'sso_config',
            resourceId: ctx.tenantId,
            resourceName: row.issuer,
            changes,
            // Whether the secret changed, never the secret.
            metadata: {
              client_secret_changed: !before || decryptSecret(webhookKey, before.client_secret) !== input.client_secret,
            },
          },
        }
      })
    },

    async remove(ctx: Ctx): Promise<void> {
      await runMutation(database, ctx, async (tx) => {
        const row = await tx
          .selectFrom('sso_configs')
          .selectAll()
          .where('tenant_id', '=', ctx.tenantId)
          .executeTakeFirst()
        if (!row) throw notFound('single sign-on configuration of tenant', ctx.tenantId)
        await tx.deleteFrom('sso_configs').where('tenant_id', '=', ctx.tenantId).execute()
        await tx.deleteFrom('oidc_logins').where('tenant_id', '=', ctx.tenantId).execute()
        return {
          result: undefined,
          audit: {
            action: 'sso.removed',
            resourceType: 'sso_config',
            resourceId: ctx.tenantId,
            resourceName: row.issuer,
            metadata: { issuer: row.issuer, client_id: row.client_id },
          },
        }
      })
    },

    /**
     * Starts a sign-in at the tenant's provider: the pending login is stored by the hash of its state (any instance
     * can complete it), and the returned browser secret, set as a cookie, is what binds it to this browser.
     */
    async start(
      tenantId: string,
      returnTo: string,
      redirectUri: string,
    ): Promise<{ url: string; browserSecret: string }> {
      const row = await findConfig(tenantId)
      if (!row) throw new OidcRefused('no_sso', tenantId)
      const provider = await providerFor(row)
      const state = oidc.randomState()
      const nonce = oidc.randomNonce()
      const browserSecret = randomBytes(32).toString('base64url')
      const at = Date.now()
      const createdAt = new Date(at).toISOString()
      await db.deleteFrom('oidc_logins').where('expires_at', '<=', createdAt).execute()
      await db
        .insertInto('oidc_logins')
        .values({
          state_hash: sha256(state),
          tenant_id: tenantId,
          browser_hash: sha256(browserSecret),
          nonce,
          return_to: returnTo,
          created_at: createdAt,
          expires_at: new Date(at + LOGIN_TTL_MS).toISOString(),
          used_at: null,
        })
        .execute()
      const url = oidc.buildAuthorizationUrl(provider, {
        redirect_uri: redirectUri,
        scope: SCOPE,
        state,
        nonce,
        code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier(browserSecret, state)),
        code_challenge_method: 'S256',
      })
      return { url: url.href, browserSecret }
    },

    /**
     * Completes a sign-in: the pending login must exist, be unused and unexpired, and belong to this browser; it is
     * used up before the code is redeemed, so a replayed callback signs no one in.
     */
    async complete(
      callbackUrl: URL,
      browserSecret: string | undefined,
      client: Client,
    ): Promise<{ secret: string; tenantId: string; returnTo: string }> {
      const params = callbackUrl.searchParams
      const state = params.get('state')
      const providerError = params.get('error')
      const errorCode = providerError === null ? undefined : providerError.replace(/[^A-Za-z0-9_.-]/g, '').slice(0, 64)
      if (!state)
        throw new OidcRefused(providerError === null ? 'missing_state' : 'provider_error', undefined, errorCode)
      const stateHash = sha256(state)
      const login = await db
        .selectFrom('oidc_logins')
        .selectAll()
        .where('state_hash', '=', stateHash)
        .executeTakeFirst()
      if (!login) throw new OidcRefused('unknown_login')
      const tenantId = login.tenant_id
      if (login.used_at !== null) throw new OidcRefused('used_login', tenantId)
      const at = now()
      if (login.expires_at <= at) throw new OidcRefused('expired_login', tenantId)
      if (browserSecret === undefined || sha256(browserSecret) !== login.browser_hash)
        throw new OidcRefused('other_browser', tenantId)
      const claimed = await db
        .updateTable('oidc_logins')
        .set({ used_at: at })
        .where('state_hash', '=', stateHash)
        .where('used_at', 'is', null)
        .where('expires_at', '>', at)
        .executeTakeFirst()
      if (Number(claimed.numUpdatedRows) === 0) throw new OidcRefused('used_login', tenantId)
      if (providerError !== null) throw new OidcRefused('provider_error', tenantId, errorCode)
      const row = await findConfig(tenantId)
      if (!row) throw new OidcRefused('no_sso', tenantId)
      const provider = await providerFor(row)
      let claims: Record<string, unknown>
      try {
        const tokens = await oidc.authorizationCodeGrant(provider, callbackUrl, {
          pkceCodeVerifier: codeVerifier(browserSecret, state),
          expectedState: state,
          expectedNonce: login.nonce,
          idTokenExpected: true,
        })
        const idClaims = tokens.claims()!
        claims = { ...idClaims }
        // Providers that keep the ID token small send the email at the userinfo endpoint only.
        if (typeof idClaims.email !== 'string' && provider.serverMetadata().userinfo_endpoint)
          claims = { ...(await oidc.fetchUserInfo(provider, tokens.access_token, idClaims.sub)), ...idClaims }
      } catch (err) {
        const why = unreachable(err)
        if (why) throw new OidcRefused('provider_unreachable', tenantId, why)
        const code = err instanceof oidc.ResponseBodyError ? err.error : describe(err)
        throw new OidcRefused('provider_rejected', tenantId, code)
      }
      const person = await personFor(row, claims, client.requestId)
      const { secret } = await sessions.startSession(tenantId, person, 'oidc', client)
      return { secret, tenantId, returnTo: login.return_to }
    },
  }
}
