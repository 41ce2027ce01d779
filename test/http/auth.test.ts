import { SignJWT } from 'jose'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { TOKEN_AUDIENCE, TOKEN_ISSUER } from '../../src/modules/auth/tokens.js'
import { describeEachDialect, PREFIX, startTestApp, type TestApp } from '../helpers/harness.js'

const SECRET = 'test-secret-that-is-at-least-32-bytes-long'

function b64(value: object): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url')
}

describeEachDialect('authentication and API keys', (dialect) => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp(dialect)
  })
  afterAll(async () => t.close())

  const exchange = (headers: Record<string, string>, payload?: unknown) =>
    t.app.inject({ method: 'POST', url: `${PREFIX}/auth/token`, headers, payload: payload as object })
  const ping = (token: string, headers: Record<string, string> = {}) =>
    t.app.inject({
      method: 'GET',
      url: `${PREFIX}/system/ping`,
      headers: { authorization: `Bearer ${token}`, ...headers },
    })

  it('exchanges a key from headers with no body, exactly as the original clients do', async () => {
    const key = await t.apiKey('acme', 'write')
    const res = await exchange({ 'x-api-key': key, 'x-tenant': 'acme' })
    expect(res.statusCode).toBe(200)
    const body = res.json()
    expect(Object.keys(body).sort()).toEqual(['access_token', 'expires_in', 'token_type'])
    expect(body.token_type).toBe('Bearer')
    expect(body.expires_in).toBe(3600)
    const claims = JSON.parse(Buffer.from(body.access_token.split('.')[1], 'base64url').toString())
    expect(claims).toMatchObject({ iss: TOKEN_ISSUER, aud: TOKEN_AUDIENCE, tenant: 'acme', role: 'write' })
    expect(claims.sub).toMatch(/^key_/)
    expect(claims.exp - claims.iat).toBe(3600)
    expect(typeof claims.jti).toBe('string')
    expect((await ping(body.access_token)).json()).toEqual({ message: 'pong', tenant: 'acme', key_id: claims.sub })
  })

  it('accepts an empty JSON body with the header form, and the JSON body form', async () => {
    const key = await t.apiKey('acme', 'read')
    const empty = await exchange({ 'x-api-key': key, 'x-tenant': 'acme', 'content-type': 'application/json' })
    expect(empty.statusCode).toBe(200)
    const body = await exchange({}, { api_key: key, tenant: 'acme' })
    expect(body.statusCode).toBe(200)
  })

  it('answers every credential failure with the same 401', async () => {
    const key = await t.apiKey('acme', 'read')
    await t.apiKey('globex', 'read')
    const failures = [
      await exchange({ 'x-api-key': 'sk_wrong', 'x-tenant': 'acme' }),
      await exchange({ 'x-api-key': key, 'x-tenant': 'globex' }),
      await exchange({ 'x-api-key': key, 'x-tenant': 'nope' }),
      await exchange({ 'x-api-key': key }),
      await exchange({}),
    ]
    const bodies = failures.map((r) => {
      expect(r.statusCode).toBe(401)
      const { request_id: _ignored, ...rest } = r.json()
      return rest
    })
    for (const body of bodies) expect(body).toEqual(bodies[0])
    expect(bodies[0].detail).toBe('invalid API key or tenant')
  })

  it('rejects tampered, unsigned, wrongly signed, expired and wrong-audience tokens', async () => {
    const good = await t.token('acme', 'read')
    const [header, payload, signature] = good.split('.')
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString())
    const key = new TextEncoder().encode(SECRET)
    const sign = (extra: Record<string, unknown>, secret = key) =>
      new SignJWT({ tenant: 'acme', role: 'admin', ...extra })
        .setProtectedHeader({ alg: 'HS256' })
        .setIssuer(TOKEN_ISSUER)
        .setAudience(TOKEN_AUDIENCE)
        .setSubject(claims.sub)
        .setIssuedAt()
        .setExpirationTime('1h')
        .setJti('x')
        .sign(secret)
    const tokens = {
      changedPayload: `${header}.${b64({ ...claims, role: 'admin' })}.${signature}`,
      algNone: `${b64({ alg: 'none', typ: 'JWT' })}.${payload}.`,
      wrongSecret: await sign({}, new TextEncoder().encode('another-secret-that-is-at-least-32-bytes')),
      expired: await new SignJWT({ tenant: 'acme', role: 'read' })
        .setProtectedHeader({ alg: 'HS256' })
        .setIssuer(TOKEN_ISSUER)
        .setAudience(TOKEN_AUDIENCE)
        .setSubject(claims.sub)
        .setIssuedAt(1_600_000_000)
        .setExpirationTime(1_600_000_100)
        .setJti('y')
        .sign(key),
      wrongAudience: await new SignJWT({ tenant: 'acme', role: 'read' })
        .setProtectedHeader({ alg: 'HS256' })
        .setIssuer(TOKEN_ISSUER)
        .setAudience('someone-else')
        .setSubject(claims.sub)
        .setIssuedAt()
        .setExpirationTime('1h')
        .setJti('z')
        .sign(key),
      hs512: await new SignJWT({ tenant: 'acme', role: 'read' })
        .setProtectedHeader({ alg: 'HS512' })
        .setIssuer(TOKEN_ISSUER)
        .setAudience(TOKEN_AUDIENCE)
        .setSubject(claims.sub)
        .setIssuedAt()
        .setExpirationTime('1h')
        .setJti('w')
        .sign(key),
      garbage: 'abc.def.ghi',
    }
    for (const [name, token] of Object.entries(tokens)) {
      const res = await ping(token)
      expect(res.statusCode, name).toBe(401)
      expect(res.headers['content-type']).toContain('application/problem+json')
    }
    expect((await ping(tokens.expired)).json().detail).toBe('the access token has expired')
    expect(
      (await t.app.inject({ method: 'GET', url: `${PREFIX}/system/ping`, headers: { authorization: 'Basic abc' } }))
        .statusCode,
    ).toBe(401)
  })

  it('answers 403 when X-Tenant does not match the token', async () => {
    const token = await t.token('acme', 'read')
    expect((await ping(token, { 'x-tenant': 'acme' })).statusCode).toBe(200)
    expect((await ping(token, { 'x-tenant': 'globex' })).statusCode).toBe(403)
  })

  it('enforces roles: read is GET only, write cannot manage keys, admin can', async () => {
    const read = t.as('roles', 'read')
    const write = t.as('roles', 'write')
    const admin = t.as('roles', 'admin')
    expect((await read({ method: 'GET', url: '/use_cases' })).statusCode).toBe(200)
    expect((await read({ method: 'POST', url: '/use_cases', payload: { name: 'x' } })).statusCode).toBe(403)
    expect((await write({ method: 'POST', url: '/use_cases', payload: { name: 'x' } })).statusCode).toBe(201)
    expect((await write({ method: 'GET', url: '/api_keys' })).statusCode).toBe(403)
    expect((await write({ method: 'POST', url: '/api_keys', payload: { name: 'k', role: 'read' } })).statusCode).toBe(
      403,
    )
    expect((await admin({ method: 'GET', url: '/api_keys' })).statusCode).toBe(200)
  })

  it('manages keys: the secret is shown once, stored only as a hash, and revocation is immediate', async () => {
    const admin = t.as('keys', 'admin')
    const created = await admin({ method: 'POST', url: '/api_keys', payload: { name: 'jira-intake', role: 'write' } })
    expect(created.statusCode).toBe(201)
    const key = created.json()
    expect(key.key).toMatch(/^sk_[0-9A-Za-z]{43}$/)
    expect(created.headers.location).toBe(`${PREFIX}/api_keys/${key.id}`)

    const listed = (await admin({ method: 'GET', url: '/api_keys' }))
      .json()
      .items.find((k: { id: string }) => k.id === key.id)
    expect(listed).toMatchObject({ id: key.id, name: 'jira-intake', role: 'write', key_prefix: key.key.slice(0, 9) })
    expect(JSON.stringify(listed)).not.toContain(key.key)
    const stored = await t.deps.database.db
      .selectFrom('api_keys')
      .selectAll()
      .where('id', '=', key.id)
      .executeTakeFirstOrThrow()
    expect(JSON.stringify(stored)).not.toContain(key.key)
    const audit = await t.deps.database.db
      .selectFrom('audit_logs')
      .selectAll()
      .where('tenant_id', '=', 'keys')
      .execute()
    expect(JSON.stringify(audit)).not.toContain(key.key)

    const token = (await exchange({ 'x-api-key': key.key, 'x-tenant': 'keys' })).json().access_token
    expect((await ping(token)).statusCode).toBe(200)
    expect((await admin({ method: 'DELETE', url: `/api_keys/${key.id}` })).statusCode).toBe(204)
    expect((await ping(token)).statusCode).toBe(401)
    expect((await exchange({ 'x-api-key': key.key, 'x-tenant': 'keys' })).statusCode).toBe(401)
    expect((await admin({ method: 'DELETE', url: `/api_keys/${key.id}` })).statusCode).toBe(409)
    const revokedList = (await admin({ method: 'GET', url: '/api_keys?include_revoked=true' })).json().items
    expect(revokedList.find((k: { id: string }) => k.id === key.id).revoked_at).not.toBeNull()
    expect(
      (await admin({ method: 'GET', url: '/api_keys' })).json().items.map((k: { id: string }) => k.id),
    ).not.toContain(key.id)
  })

  it('refuses expired keys and keys of another tenant', async () => {
    const admin = t.as('keys', 'admin')
    expect(
      (
        await admin({
          method: 'POST',
          url: '/api_keys',
          payload: { name: 'old', role: 'read', expires_at: '2020-01-01T00:00:00Z' },
        })
      ).statusCode,
    ).toBe(422)
    const other = (await t.as('globex', 'admin')({ method: 'GET', url: '/api_keys' })).json().items[0]
    expect((await admin({ method: 'GET', url: `/api_keys/${other.id}` })).statusCode).toBe(404)
    expect((await admin({ method: 'DELETE', url: `/api_keys/${other.id}` })).statusCode).toBe(404)
    const soon = (
      await admin({
        method: 'POST',
        url: '/api_keys',
        payload: { name: 'soon', role: 'read', expires_at: '2099-01-01T00:00:00Z' },
      })
    ).json()
    expect((await exchange({ 'x-api-key': soon.key, 'x-tenant': 'keys' })).statusCode).toBe(200)
    await t.deps.database.db
      .updateTable('api_keys')
      .set({ expires_at: '2020-01-01T00:00:00.000Z' })
      .where('id', '=', soon.id)
      .execute()
    expect((await exchange({ 'x-api-key': soon.key, 'x-tenant': 'keys' })).statusCode).toBe(401)
  })

  it('audits token issue, key creation and revocation', async () => {
    const rows = await t.deps.database.db
      .selectFrom('audit_logs')
      .select(['action'])
      .where('tenant_id', '=', 'keys')
      .execute()
    const actions = rows.map((r) => r.action)
    expect(actions).toContain('api_key.created')
    expect(actions).toContain('api_key.revoked')
    expect(actions).toContain('auth.token_issued')
  })
})
