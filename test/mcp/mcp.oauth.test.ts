import { createHash, randomBytes } from 'node:crypto'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { type OAuthClientProvider, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type {
  OAuthClientInformationFull,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createSessionsService } from '../../src/modules/sessions/sessions.service.js'
import { systemCtx } from '../../src/shared/context.js'
import { describeEachDialect, PREFIX, startTestApp, type TestApp } from '../helpers/harness.js'
import { Browser, formOf } from '../helpers/oidc-provider.js'

// The authorization server of /mcp over real HTTP: the MCP SDK's own OAuth client registers, sends a signed-in
// person through the consent page and calls tools with the token; then every way the flow can fail.

type Result = CallToolResult & { structuredContent?: any }

/** Where the assistant's browser is sent back to: nothing listens there, the tests read the code off the redirect. */
const REDIRECT = 'http://127.0.0.1:9/callback'
const isCallback = (url: URL) => url.port === '9' && url.pathname === '/callback'

/** An assistant's OAuth state, as the MCP SDK asks a client application to keep it. */
class AssistantAuth implements OAuthClientProvider {
  info?: OAuthClientInformationFull
  saved?: OAuthTokens
  verifier = ''
  authorizationUrl?: URL
  constructor(readonly name = 'Test Assistant') {}
  get redirectUrl() {
    return REDIRECT
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.name,
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    }
  }
  clientInformation() {
    return this.info
  }
  saveClientInformation(info: OAuthClientInformationFull) {
    this.info = info
  }
  tokens() {
    return this.saved
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier
  }
  codeVerifier() {
    return this.verifier
  }
}

const b64url = (b: Buffer) => b.toString('base64url')
function pkce() {
  const verifier = b64url(randomBytes(32))
  return { verifier, challenge: b64url(createHash('sha256').update(verifier).digest()) }
}

describeEachDialect('OAuth 2.1 for /mcp', (dialect) => {
  let t: TestApp
  let base: string
  let mcpUrl: string
  const people: Record<string, string> = {}

  const count = async (kind?: string) => {
    let q = t.deps.database.db.selectFrom('oauth_records').select((eb) => eb.fn.countAll<number>().as('n'))
    if (kind) q = q.where('kind', '=', kind)
    return Number((await q.executeTakeFirstOrThrow()).n)
  }
  const auditCount = async () =>
    Number(
      (
        await t.deps.database.db
          .selectFrom('audit_logs')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    )
  /** Tokens, codes, grants and audit records: what a refused request must leave as it was. */
  const created = async () => ({
    codes: await count('AuthorizationCode'),
    access: await count('AccessToken'),
    refresh: await count('RefreshToken'),
    grants: await count('Grant'),
    clients: await count('Client'),
    audit: await auditCount(),
  })

  /** A browser signed in as this person with a one-time link, over HTTP. */
  async function signedIn(email: string): Promise<Browser> {
    const link = await createSessionsService(t.deps).createLoginLink(systemCtx('acme', 'cli'), email)
    const browser = new Browser()
    const res = await browser.fetch(`${base}/auth/link/${link.token}`)
    expect(res.status).toBe(303)
    expect(browser.cookie('127.0.0.1', 'aigov_session')).toBeDefined()
    return browser
  }

  /** From the authorization URL to the consent page; answers it; returns where the browser was sent back to. */
  async function consent(browser: Browser, authorizationUrl: string, decision: 'allow' | 'deny' = 'allow') {
    const { res, url } = await browser.follow(authorizationUrl, {}, isCallback)
    const html = await res.text()
    expect(res.status, html.slice(0, 400)).toBe(200)
    expect(html).toContain('Allow')
    const { action, fields } = formOf(html, url)
    const posted = await browser.fetch(action, {
      method: 'POST',
      headers: { origin: base, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...fields, decision }),
    })
    expect(posted.status, await posted.clone().text()).toBe(303)
    const back = await browser.follow(new URL(posted.headers.get('location')!, action).href, {}, isCallback)
    return new URL(back.url)
  }

  const register = (body: unknown) =>
    fetch(`${base}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })

  async function registerClient(name = 'Manual Assistant'): Promise<string> {
    const res = await register({
      client_name: name,
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    })
    expect(res.status, await res.clone().text()).toBe(201)
    return (await res.json()).client_id
  }

  function authorizeUrl(clientId: string, challenge: string, extra: Record<string, string> = {}) {
    const url = new URL(`${base}/oauth/authorize`)
    for (const [k, v] of Object.entries({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: REDIRECT,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      scope: 'read write',
      resource: mcpUrl,
      state: 'st-1',
      ...extra,
    }))
      url.searchParams.set(k, v)
    return url.href
  }

  const tokenRequest = (params: Record<string, string>) =>
    fetch(`${base}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(params),
    })

  /** The manual flow up to the code: register, sign in, consent. */
  async function codeFor(email: string, scope = 'read write') {
    const clientId = await registerClient()
    const { verifier, challenge } = pkce()
    const browser = await signedIn(email)
    const back = await consent(browser, authorizeUrl(clientId, challenge, { scope }))
    expect(back.searchParams.get('state'), back.href).toBe('st-1')
    const code = back.searchParams.get('code')!
    expect(code).toBeTruthy()
    return { clientId, verifier, code, browser }
  }

  async function tokensFor(email: string, scope = 'read write') {
    const { clientId, verifier, code } = await codeFor(email, scope)
    const res = await tokenRequest({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      client_id: clientId,
      redirect_uri: REDIRECT,
      resource: mcpUrl,
    })
    const body = await res.json()
    expect(res.status, JSON.stringify(body)).toBe(200)
    return { clientId, access: body.access_token as string, refresh: body.refresh_token as string, body }
  }

  const mcpCall = async (token: string, name: string, args: Record<string, unknown> = {}) => {
    const client = new Client({ name: 'raw', version: '1' })
    await client.connect(
      new StreamableHTTPClientTransport(new URL(mcpUrl), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    )
    try {
      return (await client.callTool({ name, arguments: args })) as Result
    } finally {
      await client.close()
    }
  }
  const initialize = (headers: Record<string, string>) =>
    fetch(mcpUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      }),
    })

  beforeAll(async () => {
    t = await startTestApp(dialect, { ENABLE_MCP_SERVER: 'true' })
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    base = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`
    mcpUrl = `${base}/mcp`
    for (const [email, role] of [
      ['writer@example.com', 'write'],
      ['reader@example.com', 'read'],
      ['admin@example.com', 'admin'],
      ['leaver@example.com', 'write'],
    ] as const) {
      const res = await t.as(
        'acme',
        'admin',
      )({ method: 'POST', url: '/users', payload: { email, name: `Person ${role}`, role } })
      expect(res.statusCode, res.body).toBe(201)
      people[email] = res.json().id
    }
  })
  afterAll(async () => {
    await t?.close()
  })

  it('answers a credential-less /mcp with 401 naming its resource metadata, which names the authorization server', async () => {
    const res = await initialize({})
    expect(res.status).toBe(401)
    expect(res.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`,
    )
    for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
      const metadata = await (await fetch(`${base}${path}`)).json()
      expect(metadata).toMatchObject({
        resource: mcpUrl,
        authorization_servers: [base],
        scopes_supported: ['read', 'write'],
      })
    }
    const as = await fetch(`${base}/.well-known/oauth-authorization-server`)
    expect(as.status).toBe(200)
    expect(await as.json()).toMatchObject({
      issuer: base,
      authorization_endpoint: `${base}/oauth/authorize`,
      token_endpoint: `${base}/oauth/token`,
      registration_endpoint: `${base}/oauth/register`,
      revocation_endpoint: `${base}/oauth/revoke`,
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none'],
      response_types_supported: ['code'],
    })
    // A wrong bearer says the token is the problem.
    const wrong = await initialize({ authorization: 'Bearer not-a-token-of-ours' })
    expect(wrong.status).toBe(401)
    expect(wrong.headers.get('www-authenticate')).toContain('error="invalid_token"')
  })

  it('connects the MCP SDK’s OAuth client for a signed-in person; the audit record names the person and the client', async () => {
    const auth = new AssistantAuth('Claude (test)')
    const first = new Client({ name: 'assistant', version: '1' })
    await expect(
      first.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: auth })),
    ).rejects.toThrow(UnauthorizedError)
    expect(auth.info?.client_id).toBeTruthy()
    expect(auth.authorizationUrl?.searchParams.get('code_challenge_method')).toBe('S256')
    expect(auth.authorizationUrl?.searchParams.get('resource')).toBe(mcpUrl)

    const browser = await signedIn('writer@example.com')
    const back = await consent(browser, auth.authorizationUrl!.href)
    const code = back.searchParams.get('code')!
    const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: auth })
    await transport.finishAuth(code)
    expect(auth.saved?.access_token).toBeTruthy()
    expect(auth.saved?.refresh_token).toBeTruthy()
    expect(auth.saved?.expires_in).toBeLessThanOrEqual(600)

    const client = new Client({ name: 'assistant', version: '1' })
    await client.connect(transport)
    const made = (await client.callTool({
      name: 'create_use_case',
      arguments: { name: 'Made through OAuth' },
    })) as Result
    expect(made.isError, JSON.stringify(made.content)).toBeFalsy()
    await client.close()

    const records = await t.as(
      'acme',
      'admin',
    )({ method: 'GET', url: `/audit_logs?resource_id=${made.structuredContent.id}` })
    expect(records.json().items[0]).toMatchObject({
      action: 'use_case.created',
      actor: { type: 'user', id: people['writer@example.com'], name: 'Person write' },
      source: 'mcp',
      metadata: { client: { id: auth.info!.client_id, name: 'Claude (test)' } },
    })
    const consented = await t.as(
      'acme',
      'admin',
    )({ method: 'GET', url: `/audit_logs?action=oauth_grant.created&resource_id=${auth.info!.client_id}` })
    expect(consented.json().items[0]).toMatchObject({ actor: { type: 'user', id: people['writer@example.com'] } })

    const me = await fetch(`${base}${PREFIX}/me`, { headers: { authorization: `Bearer ${auth.saved!.access_token}` } })
    expect(me.status).toBe(200)
    expect(await me.json()).toMatchObject({
      tenant: 'acme',
      role: 'write',
      via: 'oauth',
      user: { id: people['writer@example.com'], email: 'writer@example.com' },
      api_key: null,
    })
    // The token is for /mcp and who-is-calling only: the rest of the API does not take it.
    const other = await fetch(`${base}${PREFIX}/use_cases`, {
      headers: { authorization: `Bearer ${auth.saved!.access_token}` },
    })
    expect(other.status).toBe(401)
  })

  it('a read grant cannot call a write tool; a person’s role caps the grant, and an admin gets at most write', async () => {
    const read = await tokensFor('writer@example.com', 'read')
    const refused = await mcpCall(read.access, 'create_use_case', { name: 'Not allowed' })
    expect(refused.isError).toBe(true)
    expect(refused.structuredContent ?? JSON.parse((refused.content[0] as { text: string }).text)).toMatchObject({
      code: 'forbidden',
      role: 'read',
      required_role: 'write',
    })
    expect((await mcpCall(read.access, 'list_use_cases')).isError).toBeFalsy()

    const reader = await tokensFor('reader@example.com', 'read write')
    expect((await mcpCall(reader.access, 'create_use_case', { name: 'Not either' })).isError).toBe(true)
    const admin = await tokensFor('admin@example.com', 'read write')
    const me = await fetch(`${base}${PREFIX}/me`, { headers: { authorization: `Bearer ${admin.access}` } })
    expect((await me.json()).role).toBe('write')
  })

  it('shows the consent page only to a signed-in person, with the client and what it may do; Deny sends access_denied and creates nothing', async () => {
    const clientId = await registerClient('Denied Assistant')
    const { challenge } = pkce()
    const stranger = new Browser()
    const page = await stranger.follow(authorizeUrl(clientId, challenge), {}, isCallback)
    const html = await page.res.text()
    expect(page.res.status).toBe(200)
    expect(html).toContain('Sign in to connect Denied Assistant')
    expect(html).toContain('/auth/oidc/start')
    expect(page.res.headers.get('content-security-policy')).toContain("default-src 'none'")

    const browser = await signedIn('reader@example.com')
    const consentPage = await browser.follow(authorizeUrl(clientId, challenge), {}, isCallback)
    const text = await consentPage.res.text()
    expect(text).toContain('Denied Assistant')
    expect(text).toContain('Person read')
    expect(text).toContain('your own role only lets you read')
    expect(consentPage.res.headers.get('content-security-policy')).toContain("form-action 'self' http://127.0.0.1:9")
    const { action, fields } = formOf(text, consentPage.url)

    const before = await created()
    // Another origin, or a form without the session's token, is refused.
    const foreign = await browser.fetch(action, {
      method: 'POST',
      headers: { origin: 'https://evil.example', 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...fields, decision: 'allow' }),
    })
    expect(foreign.status).toBe(403)
    const forged = await browser.fetch(action, {
      method: 'POST',
      headers: { origin: base, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf: 'forged', decision: 'allow' }),
    })
    expect(forged.status).toBe(403)

    const denied = await browser.fetch(action, {
      method: 'POST',
      headers: { origin: base, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...fields, decision: 'deny' }),
    })
    expect(denied.status).toBe(303)
    const back = new URL(
      (await browser.follow(new URL(denied.headers.get('location')!, action).href, {}, isCallback)).url,
    )
    expect(back.searchParams.get('error')).toBe('access_denied')
    expect(back.searchParams.get('code')).toBeNull()
    expect(await created()).toEqual(before)
  })

  it('rotates refresh tokens: the new one works, the old one fails; a revoked refresh token fails', async () => {
    const first = await tokensFor('writer@example.com')
    const refreshed = await tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: first.refresh,
      client_id: first.clientId,
    })
    const body = await refreshed.json()
    expect(refreshed.status, JSON.stringify(body)).toBe(200)
    expect(body.refresh_token).toBeTruthy()
    expect(body.refresh_token).not.toBe(first.refresh)
    expect((await mcpCall(body.access_token, 'list_use_cases')).isError).toBeFalsy()
    const replay = await tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: first.refresh,
      client_id: first.clientId,
    })
    expect(replay.status).toBe(400)
    expect((await replay.json()).error).toBe('invalid_grant')

    const second = await tokensFor('writer@example.com')
    const revoked = await fetch(`${base}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        token: second.refresh,
        token_type_hint: 'refresh_token',
        client_id: second.clientId,
      }),
    })
    expect(revoked.status).toBe(200)
    const after = await tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: second.refresh,
      client_id: second.clientId,
    })
    expect(after.status).toBe(400)
    expect((await after.json()).error).toBe('invalid_grant')
    // Revoking the refresh token ends the grant, its access token with it.
    expect((await initialize({ authorization: `Bearer ${second.access}` })).status).toBe(401)
  })

  it('refuses a PKCE mismatch, a replayed code and a wrong redirect URI at the token endpoint, creating nothing', async () => {
    const { clientId, verifier, code } = await codeFor('writer@example.com')
    const before = await created()
    const base = {
      grant_type: 'authorization_code',
      code,
      client_id: clientId,
      redirect_uri: REDIRECT,
      resource: mcpUrl,
    }
    const mismatch = await tokenRequest({ ...base, code_verifier: pkce().verifier })
    expect(mismatch.status).toBe(400)
    expect((await mismatch.json()).error).toBe('invalid_grant')
    expect(await created()).toEqual(before)

    const other = await codeFor('writer@example.com')
    const before2 = await created()
    const wrongRedirect = await tokenRequest({
      grant_type: 'authorization_code',
      code: other.code,
      code_verifier: other.verifier,
      client_id: other.clientId,
      redirect_uri: 'http://127.0.0.1:9/elsewhere',
      resource: mcpUrl,
    })
    expect(wrongRedirect.status).toBe(400)
    expect((await wrongRedirect.json()).error).toBe('invalid_grant')
    expect(await created()).toEqual(before2)

    const third = await codeFor('writer@example.com')
    const ok = {
      grant_type: 'authorization_code',
      code: third.code,
      code_verifier: third.verifier,
      client_id: third.clientId,
      redirect_uri: REDIRECT,
      resource: mcpUrl,
    }
    expect((await tokenRequest(ok)).status).toBe(200)
    const replayed = await tokenRequest(ok)
    expect(replayed.status).toBe(400)
    expect((await replayed.json()).error).toBe('invalid_grant')
    void verifier
  })

  it('refuses at the authorization endpoint: unregistered client, unregistered redirect URI, plain PKCE, no PKCE, a foreign resource', async () => {
    const clientId = await registerClient()
    const { challenge } = pkce()
    const browser = await signedIn('writer@example.com')
    const before = await created()
    const page = async (url: string) => {
      const res = await browser.fetch(url)
      return { status: res.status, location: res.headers.get('location'), text: await res.text() }
    }
    const unknown = await page(authorizeUrl('no-such-client', challenge))
    expect(unknown.status).toBe(400)
    expect(unknown.text).toContain('invalid_client')
    const redirect = await page(authorizeUrl(clientId, challenge, { redirect_uri: 'https://evil.example/cb' }))
    expect(redirect.status).toBe(400)
    expect(redirect.text).toContain('redirect_uri')
    expect(redirect.location).toBeNull()
    // Errors the client can be told of go back to its registered redirect URI.
    for (const [extra, error] of [
      [{ code_challenge_method: 'plain' }, 'invalid_request'],
      [{ code_challenge: '' }, 'invalid_request'],
      [{ resource: 'https://other.example/mcp' }, 'invalid_target'],
    ] as const) {
      const res = await page(authorizeUrl(clientId, challenge, extra))
      expect(res.status, res.text.slice(0, 300)).toBe(303)
      const to = new URL(res.location!)
      expect(isCallback(to)).toBe(true)
      expect(to.searchParams.get('error')).toBe(error)
    }
    expect(await created()).toEqual(before)
  })

  it('registers public clients with https or loopback redirect URIs only', async () => {
    const before = await created()
    for (const uri of ['http://assistant.example/cb', 'ftp://127.0.0.1/cb', 'not a url', 'myapp://cb']) {
      const res = await register({ client_name: 'x', redirect_uris: [uri], token_endpoint_auth_method: 'none' })
      expect(res.status, uri).toBe(400)
      expect((await res.json()).error).toBe('invalid_redirect_uri')
    }
    const confidential = await register({
      client_name: 'x',
      redirect_uris: ['https://assistant.example/cb'],
      token_endpoint_auth_method: 'client_secret_basic',
    })
    expect(confidential.status).toBe(400)
    expect((await confidential.json()).error).toBe('invalid_client_metadata')
    expect(await created()).toEqual(before)
    for (const uri of ['https://assistant.example/cb', 'http://localhost:33418/cb', 'http://[::1]:8/cb']) {
      const res = await register({ client_name: 'ok', redirect_uris: [uri], token_endpoint_auth_method: 'none' })
      expect(res.status, `${uri}: ${await res.clone().text()}`).toBe(201)
      const body = await res.json()
      expect(body.token_endpoint_auth_method).toBe('none')
      expect(body.client_secret).toBeUndefined()
    }
  })

  it('refuses at /mcp an expired token and one bound to another resource', async () => {
    const { access } = await tokensFor('writer@example.com')
    const db = t.deps.database.db
    const row = await db
      .selectFrom('oauth_records')
      .selectAll()
      .where('kind', '=', 'AccessToken')
      .where('id', '=', access)
      .executeTakeFirstOrThrow()
    const payload = JSON.parse(row.payload)
    const foreign = b64url(randomBytes(32))
    await db
      .insertInto('oauth_records')
      .values({
        ...row,
        id: foreign,
        payload: JSON.stringify({ ...payload, jti: foreign, aud: 'https://other.example/mcp' }),
      })
      .execute()
    const expired = b64url(randomBytes(32))
    const past = Math.floor(Date.now() / 1000) - 60
    await db
      .insertInto('oauth_records')
      .values({
        ...row,
        id: expired,
        payload: JSON.stringify({ ...payload, jti: expired, exp: past }),
        expires_at: new Date(past * 1000).toISOString(),
      })
      .execute()
    for (const token of [foreign, expired]) {
      const res = await initialize({ authorization: `Bearer ${token}` })
      expect(res.status).toBe(401)
      expect(res.headers.get('www-authenticate')).toContain('error="invalid_token"')
    }
    expect((await initialize({ authorization: `Bearer ${access}` })).status).toBe(200)
  })

  it('stops a deactivated person’s tokens at once, refresh included; API keys keep working', async () => {
    const { access, refresh, clientId } = await tokensFor('leaver@example.com')
    expect((await initialize({ authorization: `Bearer ${access}` })).status).toBe(200)
    const off = await t.as(
      'acme',
      'admin',
    )({ method: 'PATCH', url: `/users/${people['leaver@example.com']}`, payload: { active: false } })
    expect(off.statusCode, off.body).toBe(200)
    expect((await initialize({ authorization: `Bearer ${access}` })).status).toBe(401)
    const refreshed = await tokenRequest({ grant_type: 'refresh_token', refresh_token: refresh, client_id: clientId })
    expect(refreshed.status).toBe(400)
    expect((await refreshed.json()).error).toBe('invalid_grant')

    const key = await t.apiKey('acme', 'read')
    expect((await initialize({ 'x-api-key': key, 'x-tenant': 'acme' })).status).toBe(200)
  })
})
