import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClient } from '../src/index.js'
import { countingFetch, startService, type TestService } from './service.js'

let service: TestService

beforeAll(async () => {
  service = await startService({ SERVICE_TOKEN_TTL: '2' })
})
afterAll(async () => {
  await service?.stop()
})

describe('token lifetime (SERVICE_TOKEN_TTL=2)', () => {
  it('reuses the token while it is fresh and refreshes it shortly before it expires, with no 401 on the way', async () => {
    const counter = countingFetch()
    const client = createClient({
      baseUrl: service.baseUrl,
      apiKey: service.apiKey,
      tenant: service.tenant,
      fetch: counter.fetch,
    })
    const statuses: number[] = []
    const observe: typeof fetch = async (input, init) => {
      const res = await counter.fetch(input, init)
      statuses.push(res.status)
      return res
    }
    const observed = createClient({
      baseUrl: service.baseUrl,
      apiKey: service.apiKey,
      tenant: service.tenant,
      fetch: observe,
    })

    expect((await client.system.ping()).error).toBeNull()
    expect((await client.system.ping()).error).toBeNull()
    expect(counter.exchanges()).toBe(1)

    await new Promise((resolve) => setTimeout(resolve, 2_100))
    const before = counter.calls.length
    expect((await client.system.ping()).error).toBeNull()
    // Refreshed before sending, not after a 401: one exchange, then one ping.
    expect(counter.calls.slice(before).map((c) => c.path.split('/').pop())).toEqual(['token', 'ping'])
    expect(counter.exchanges()).toBe(2)

    // Across several lifetimes, a client calling steadily never sends an expired token.
    const deadline = Date.now() + 4_500
    while (Date.now() < deadline) {
      expect((await observed.system.ping()).error).toBeNull()
      await new Promise((resolve) => setTimeout(resolve, 150))
    }
    // Refreshing 1.5 s early leaves room for latency; allow one 401 (healed by refresh-and-retry) on a loaded machine.
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(1)
    expect(counter.exchanges()).toBeGreaterThanOrEqual(4)
  })

  it('a token supplied as is is not refreshed: once expired, calls fail with kind authentication', async () => {
    const token = (
      await createClient({ baseUrl: service.baseUrl, apiKey: service.apiKey, tenant: service.tenant }).auth.token()
    ).data!
    expect(token.expiresIn).toBe(2)
    const client = createClient({ baseUrl: service.baseUrl, accessToken: token.accessToken })
    expect((await client.system.ping()).error).toBeNull()
    await new Promise((resolve) => setTimeout(resolve, 2_100))
    expect((await client.system.ping()).error).toMatchObject({ kind: 'authentication', status: 401 })
  })
})
