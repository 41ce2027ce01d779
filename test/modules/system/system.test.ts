import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { describeEachDialect, startTestApp, type TestApp } from '../../helpers/harness.js'

const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
  name: string
  version: string
}

describeEachDialect('system', (dialect) => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp(dialect, { ENABLE_MCP_SERVER: 'true', MCP_READ_ONLY: 'true' })
  })
  afterAll(async () => t?.close())

  it("GET /system describes the service, its version, the caller's tenant, features and database", async () => {
    const res = await t.as('acme', 'read')({ method: 'GET', url: '/system' })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json()).toEqual({
      service: pkg.name,
      version: pkg.version,
      api_version: 'v1',
      tenant: 'acme',
      database: dialect,
      features: { mcp: true, mcp_read_only: true, redis: false, starter_library: false, upstream: false },
    })
    expect((await t.as('globex', 'read')({ method: 'GET', url: '/system' })).json().tenant).toBe('globex')
  })

  it('GET /system/ping answers pong with the tenant and the key id', async () => {
    const res = await t.as('acme', 'read')({ method: 'GET', url: '/system/ping' })
    expect(res.statusCode).toBe(200)
    const body = res.json()
    expect(body).toMatchObject({ message: 'pong', tenant: 'acme' })
    expect(body.key_id).toMatch(/^key_[0-9a-z]{26}$/)
    expect(Object.keys(body).sort()).toEqual(['key_id', 'message', 'tenant'])
  })

  it("needs a valid token (401), and refuses an X-Tenant other than the token's (403)", async () => {
    for (const url of ['/api/v1/integration/system', '/api/v1/integration/system/ping']) {
      const res = await t.app.inject({ method: 'GET', url })
      expect(res.statusCode).toBe(401)
      expect(res.headers['content-type']).toContain('application/problem+json')
    }
    const res = await t.as('acme', 'read')({ method: 'GET', url: '/system/ping', headers: { 'x-tenant': 'globex' } })
    expect(res.statusCode).toBe(403)
  })

  it('rejects unknown query parameters (400)', async () => {
    expect((await t.as('acme', 'read')({ method: 'GET', url: '/system?verbose=1' })).statusCode).toBe(400)
  })
})
