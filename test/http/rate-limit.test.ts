import { afterAll, beforeAll, expect, it } from 'vitest'
import { describe } from 'vitest'
import { describeEachDialect, PREFIX, REDIS_URL, startTestApp, type TestApp } from '../helpers/harness.js'

describeEachDialect('rate limiting (in memory)', (dialect) => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp(dialect, { RATE_LIMIT_PER_MINUTE: '3', RATE_LIMIT_TOKEN_PER_MINUTE: '2' })
  })
  afterAll(async () => t.close())

  it('puts the limit headers on every authenticated response and answers 429 past the limit', async () => {
    const token = await t.token('rl', 'read')
    const get = () =>
      t.app.inject({ method: 'GET', url: `${PREFIX}/use_cases`, headers: { authorization: `Bearer ${token}` } })
    for (const remaining of [2, 1, 0]) {
      const res = await get()
      expect(res.statusCode).toBe(200)
      for (const prefix of ['', 'x-']) {
        expect(res.headers[`${prefix}ratelimit-limit`]).toBe('3')
        expect(res.headers[`${prefix}ratelimit-remaining`]).toBe(String(remaining))
        expect(Number(res.headers[`${prefix}ratelimit-reset`])).toBeGreaterThan(0)
      }
    }
    const limited = await get()
    expect(limited.statusCode).toBe(429)
    expect(limited.headers['content-type']).toContain('application/problem+json')
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0)
    expect(limited.headers['x-ratelimit-remaining']).toBe('0')
    const body = limited.json()
    expect(body).toMatchObject({ status: 429, code: 'rate_limited', limit: 3, remaining: 0 })
    expect(body.retry_after).toBe(Number(limited.headers['retry-after']))
    expect(Date.parse(body.reset_time)).toBeGreaterThan(Date.now())
  })

  it('counts each API key separately', async () => {
    const other = await t.token('rl', 'write')
    const res = await t.app.inject({
      method: 'GET',
      url: `${PREFIX}/use_cases`,
      headers: { authorization: `Bearer ${other}` },
    })
    expect(res.statusCode).toBe(200)
  })

  it('limits token exchanges per tenant and client address', async () => {
    const key = await t.apiKey('tok', 'read')
    const exchange = (tenant: string) =>
      t.app.inject({ method: 'POST', url: `${PREFIX}/auth/token`, headers: { 'x-api-key': key, 'x-tenant': tenant } })
    expect((await exchange('tok')).statusCode).toBe(200)
    expect((await exchange('tok')).statusCode).toBe(200)
    const limited = await exchange('tok')
    expect(limited.statusCode).toBe(429)
    expect(limited.json().limit).toBe(2)
    // Wrong guesses count too, and another tenant has its own budget.
    expect((await exchange('other-tenant')).statusCode).toBe(401)
  })
})

describe.skipIf(!REDIS_URL)(
  `rate limiting shared through Redis${REDIS_URL ? '' : ' — skipped: REDIS_URL is not set'}`,
  () => {
    let a: TestApp
    let b: TestApp
    beforeAll(async () => {
      a = await startTestApp('sqlite', { RATE_LIMIT_PER_MINUTE: '4', REDIS_URL: REDIS_URL! })
      // Same database file, so the same key works on both instances.
      b = await startTestApp('sqlite', {
        RATE_LIMIT_PER_MINUTE: '4',
        REDIS_URL: REDIS_URL!,
        DATABASE_URL: a.config.databaseUrl,
      })
    })
    afterAll(async () => {
      await b?.close()
      await a?.close()
    })

    it('allows the limit across both instances together, not twice it', async () => {
      const tenant = `shared-${Date.now()}`
      const token = await a.token(tenant, 'read')
      const statuses: number[] = []
      for (let i = 0; i < 6; i++) {
        const app = i % 2 ? b.app : a.app
        statuses.push(
          (
            await app.inject({
              method: 'GET',
              url: `${PREFIX}/system/ping`,
              headers: { authorization: `Bearer ${token}` },
            })
          ).statusCode,
        )
      }
      expect(statuses).toEqual([200, 200, 200, 200, 429, 429])
    })
  },
)

describe('rate limiting when Redis is unreachable', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp('sqlite', { RATE_LIMIT_PER_MINUTE: '3', REDIS_URL: 'redis://127.0.0.1:1' })
  })
  afterAll(async () => t.close())

  it('keeps serving with per-instance limits and reports redis failing on /readyz', async () => {
    const token = await t.token('down', 'read')
    const statuses: number[] = []
    for (let i = 0; i < 4; i++)
      statuses.push(
        (
          await t.app.inject({
            method: 'GET',
            url: `${PREFIX}/system/ping`,
            headers: { authorization: `Bearer ${token}` },
          })
        ).statusCode,
      )
    expect(statuses).toEqual([200, 200, 200, 429])
    const ready = await t.app.inject({ method: 'GET', url: '/readyz' })
    expect(ready.statusCode).toBe(503)
    expect(ready.json().checks).toEqual({ database: 'ok', redis: 'failing' })
  })
})
