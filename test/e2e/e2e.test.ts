import { afterAll, beforeAll, expect, it } from 'vitest'
import { describeEachDialect, freshDatabase, type TestDatabase } from '../helpers/harness.js'
import { type ServiceProcess, startServiceProcess } from '../helpers/process.js'

const P = '/api/v1/integration'

describeEachDialect('a real service process, used as the original clients use it', (dialect) => {
  let db: TestDatabase
  let service: ServiceProcess
  beforeAll(async () => {
    db = await freshDatabase(dialect)
    service = await startServiceProcess({ ...db.env, SERVICE_STARTER_LIBRARY: 'false', LOG_LEVEL: 'info' })
  })
  afterAll(async () => {
    await service?.stop()
    await db.drop()
  })

  it('prints a generated admin key once with a curl line, and the DESIGN §1 flow works with it', async () => {
    const printed = /^ {2}(sk_[0-9A-Za-z]{43})$/m.exec(service.output())
    expect(printed, service.output()).not.toBeNull()
    const key = printed![1]
    expect(service.output()).toContain(
      `curl -s -X POST http://localhost:${service.port}${P}/auth/token -H 'X-API-Key: ${key}' -H 'X-Tenant: default'`,
    )

    const tokenRes = await fetch(`${service.baseUrl}${P}/auth/token`, {
      method: 'POST',
      headers: { 'X-API-Key': key, 'X-Tenant': 'default' },
    })
    expect(tokenRes.status).toBe(200)
    const token = await tokenRes.json()
    expect(token).toMatchObject({ token_type: 'Bearer', expires_in: 3600 })

    const created = await fetch(`${service.baseUrl}${P}/use_cases`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${token.access_token}`,
        'X-Tenant': 'default',
        'Content-Type': 'application/json',
      },
      body: JSON.stringify({ name: 'Resume screening', description: 'Ranks job applicants' }),
    })
    expect(created.status).toBe(201)
    const useCase = await created.json()
    expect(useCase).toMatchObject({ name: 'Resume screening', description: 'Ranks job applicants' })
    expect(useCase.id).toMatch(/^uc_/)
    expect(created.headers.get('location')).toBe(`${P}/use_cases/${useCase.id}`)
    expect(created.headers.get('x-request-id')).toBeTruthy()

    // The key appears once, in the first-run message, and never in a log line.
    const logLines = service
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
    expect(logLines.length).toBeGreaterThan(0)
    for (const line of logLines) {
      expect(line).not.toContain(key)
      expect(line).not.toContain(token.access_token)
    }
  })

  it('keeps the key across restarts and does not print a new one', async () => {
    await service.stop()
    service = await startServiceProcess({ ...db.env, SERVICE_STARTER_LIBRARY: 'false' }, service.port)
    expect(service.output()).not.toMatch(/sk_[0-9A-Za-z]{43}/)
  })

  it('uses SERVICE_API_KEY as the bootstrap admin key when set', async () => {
    await service.stop()
    const key = 'sk_bootstrap_key_for_the_e2e_test_0123456789'
    service = await startServiceProcess(
      { ...db.env, SERVICE_STARTER_LIBRARY: 'false', SERVICE_API_KEY: key, SERVICE_TENANT: 'team-a' },
      service.port,
    )
    const res = await fetch(`${service.baseUrl}${P}/auth/token`, {
      method: 'POST',
      headers: { 'X-API-Key': key, 'X-Tenant': 'team-a' },
    })
    expect(res.status).toBe(200)
  })

  it('stops with one line naming a bad setting', async () => {
    await expect(startServiceProcess({ ...db.env, SERVICE_PORT: 'eighty' })).rejects.toThrow(/SERVICE_PORT/)
  })
})
