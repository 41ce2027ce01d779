import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from '../../test/helpers/process.js'
import { createClient } from '../src/index.js'
import { countingFetch, startProxy, startService, type TestProxy, type TestService } from './service.js'

let service: TestService
const proxies: TestProxy[] = []

beforeAll(async () => {
  service = await startService()
})
afterAll(async () => {
  await Promise.all(proxies.map((p) => p.close()))
  await service?.stop()
})

async function proxy(decide: Parameters<typeof startProxy>[1]): Promise<TestProxy> {
  const p = await startProxy(service.baseUrl, decide)
  proxies.push(p)
  return p
}

const clientVia = (baseUrl: string, extra: Parameters<typeof createClient>[0] = {}) =>
  createClient({ baseUrl, apiKey: service.apiKey, tenant: service.tenant, retryDelayMs: 50, ...extra })

const isResource = (path: string) => !path.includes('/auth/token')

describe('retries', () => {
  it('retries a GET answered 503 twice, then returns the real answer', async () => {
    let failures = 0
    const p = await proxy((req) =>
      isResource(req.url!) && failures++ < 2
        ? {
            status: 503,
            headers: { 'content-type': 'application/problem+json' },
            body: '{"status":503,"title":"Service Unavailable","detail":"try again","code":"unavailable"}',
          }
        : 'forward',
    )
    const client = clientVia(p.baseUrl)
    const ping = await client.system.ping()
    expect(ping.error).toBeNull()
    expect(ping.data?.message).toBe('pong')
    expect(p.requests.filter((r) => r.path.endsWith('/system/ping'))).toHaveLength(3)
  })

  it('gives up after maxRetries and returns the server error', async () => {
    const p = await proxy((req) => (isResource(req.url!) ? { status: 502, body: 'bad gateway' } : 'forward'))
    const client = clientVia(p.baseUrl, { maxRetries: 1 })
    const ping = await client.system.ping()
    // Not a problem document: `body` is the raw text, and there are no `details`.
    expect(ping.error).toMatchObject({ kind: 'server', status: 502, body: 'bad gateway' })
    expect(ping.error!.details).toBeUndefined()
    expect(p.requests.filter((r) => r.path.endsWith('/system/ping'))).toHaveLength(2)
  })

  it('honours Retry-After on a 429 before retrying', async () => {
    let limited = 0
    const p = await proxy((req) =>
      isResource(req.url!) && limited++ === 0 ? { status: 429, headers: { 'retry-after': '1' } } : 'forward',
    )
    const client = clientVia(p.baseUrl)
    const started = Date.now()
    const ping = await client.system.ping()
    expect(ping.error).toBeNull()
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000)
  })

  it('does not retry a PATCH (not idempotent) nor a 4xx', async () => {
    const p = await proxy((req) => (req.method === 'PATCH' ? { status: 503 } : 'forward'))
    const client = clientVia(p.baseUrl)
    const updated = await client.useCases.update('uc_00000000000000000000000000', { description: 'x' })
    expect(updated.error).toMatchObject({ kind: 'server', status: 503 })
    expect(p.requests.filter((r) => r.method === 'PATCH')).toHaveLength(1)
    const missing = await client.useCases.get('uc_00000000000000000000000000')
    expect(missing.error?.kind).toBe('not_found')
    expect(p.requests.filter((r) => r.path.includes('/use_cases/uc_') && r.method === 'GET')).toHaveLength(1)
  })

  it('retries a create whose answer was lost with the same Idempotency-Key: the record is created once', async () => {
    let dropped = 0
    const p = await proxy((req) =>
      req.method === 'POST' && req.url!.endsWith('/use_cases') && dropped++ === 0 ? 'forward-then-drop' : 'forward',
    )
    const client = clientVia(p.baseUrl)
    const created = await client.useCases.create({ name: 'Created once' })
    expect(created.error).toBeNull()
    const posts = p.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/use_cases'))
    expect(posts).toHaveLength(2)
    expect(posts[0].headers['idempotency-key']).toBeDefined()
    expect(posts[1].headers['idempotency-key']).toBe(posts[0].headers['idempotency-key'])

    const direct = clientVia(service.baseUrl)
    const matches = await direct.useCases.list({ q: 'Created once' })
    expect(matches.data?.items.map((u) => u.id)).toEqual([created.data!.id])
    const audit = await direct.auditLogs.list({ action: 'use_case.created', resourceId: created.data!.id })
    expect(audit.data?.items).toHaveLength(1)
  })

  it('uses a caller-supplied Idempotency-Key across separate calls', async () => {
    const client = clientVia(service.baseUrl)
    const first = await client.vendors.create({ name: 'Keyed vendor' }, { idempotencyKey: 'my-key-1' })
    const second = await client.vendors.create({ name: 'Keyed vendor' }, { idempotencyKey: 'my-key-1' })
    expect(second.data?.id).toBe(first.data!.id)
  })
})

describe('rate limits', () => {
  let limited: TestService
  beforeAll(async () => {
    limited = await startService({ RATE_LIMIT_PER_MINUTE: '3' })
  })
  afterAll(async () => {
    await limited?.stop()
  })

  it('gives kind rate_limit with retryAfter, limit, remaining and resetTime, without waiting out a long Retry-After', async () => {
    const client = createClient({ baseUrl: limited.baseUrl, apiKey: limited.apiKey, tenant: limited.tenant })
    for (let i = 0; i < 3; i++) expect((await client.system.ping()).error).toBeNull()
    const started = Date.now()
    const res = await client.system.ping()
    expect(Date.now() - started).toBeLessThan(5_000)
    expect(res.data).toBeNull()
    expect(res.error).toMatchObject({
      kind: 'rate_limit',
      status: 429,
      limit: 3,
      remaining: 0,
      requestId: expect.any(String),
    })
    expect(res.error!.retryAfter).toBeGreaterThan(0)
    expect(res.error!.retryAfter).toBeLessThanOrEqual(60)
    expect(Date.parse(res.error!.resetTime!)).toBeGreaterThan(Date.now())
    expect(res.error!.details).toMatchObject({ code: 'rate_limited', retryAfter: res.error!.retryAfter })
  })
})

describe('timeouts, aborts and unreachable services', () => {
  let silent: Server
  let silentUrl: string
  let received = 0
  beforeAll(async () => {
    silent = createServer(() => {
      received++ // accepts the request and never answers
    })
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`
  })
  afterAll(async () => {
    silent.closeAllConnections()
    await new Promise((resolve) => silent.close(resolve))
  })

  it('gives kind timeout after timeoutMs, without retrying', async () => {
    const client = createClient({ baseUrl: silentUrl, accessToken: 'unused' })
    received = 0
    const started = Date.now()
    const res = await client.system.ping({ timeoutMs: 300 })
    expect(res.error).toMatchObject({ kind: 'timeout' })
    expect(res.error!.status).toBeUndefined()
    expect(Date.now() - started).toBeLessThan(2_000)
    expect(received).toBe(1)

    const byClient = createClient({ baseUrl: silentUrl, accessToken: 'unused', timeoutMs: 200 })
    expect((await byClient.useCases.list()).error?.kind).toBe('timeout')
  })

  it("bounds the token exchange a call triggers by that call's timeout, not the client's", async () => {
    const client = createClient({ baseUrl: silentUrl, apiKey: 'sk_silent', tenant: 't', timeoutMs: 5_000 })
    received = 0
    const started = Date.now()
    const res = await client.useCases.list({}, { timeoutMs: 300 })
    const took = Date.now() - started
    expect(res.error).toMatchObject({ kind: 'timeout', message: expect.stringMatching(/token exchange/) })
    expect(took).toBeGreaterThanOrEqual(290)
    expect(took).toBeLessThan(1_500)
    expect(received).toBe(1) // the exchange; the call itself never went out
  })

  it('lets each call waiting on one exchange keep its own deadline and abort signal', async () => {
    const client = createClient({ baseUrl: silentUrl, apiKey: 'sk_silent', tenant: 't', timeoutMs: 5_000 })
    received = 0
    const started = Date.now()
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 150)
    const ended = (call: Promise<{ error: { kind: string; message: string } | null }>) =>
      call.then((res) => ({ error: res.error, at: Date.now() - started }))
    const [aborted, short, long] = await Promise.all([
      ended(client.models.list(undefined, { signal: controller.signal })),
      ended(client.useCases.list({}, { timeoutMs: 400 })),
      ended(client.vendors.list({}, { timeoutMs: 1_000 })),
    ])
    expect(aborted.error).toMatchObject({ kind: 'timeout', message: expect.stringMatching(/aborted/) })
    expect(short.error).toMatchObject({ kind: 'timeout', message: expect.stringMatching(/token exchange/) })
    expect(long.error).toMatchObject({ kind: 'timeout', message: expect.stringMatching(/token exchange/) })
    expect(aborted.at).toBeLessThan(380)
    expect(short.at).toBeGreaterThanOrEqual(390)
    expect(short.at).toBeLessThan(950)
    expect(long.at).toBeGreaterThanOrEqual(990)
    expect(long.at).toBeLessThan(2_500)
    expect(received).toBe(1) // one exchange for the three of them
  })

  it('stops when the caller aborts', async () => {
    const client = createClient({ baseUrl: silentUrl, accessToken: 'unused' })
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 100)
    const res = await client.models.list(undefined, { signal: controller.signal })
    expect(res.error).toMatchObject({ kind: 'timeout', message: expect.stringMatching(/aborted/) })
  })

  it('gives kind connection when nothing listens, after retrying', async () => {
    const port = await freePort()
    const counter = countingFetch()
    const client = createClient({
      baseUrl: `http://127.0.0.1:${port}`,
      apiKey: 'sk_x',
      tenant: 't',
      fetch: counter.fetch,
      retryDelayMs: 10,
    })
    const res = await client.useCases.list()
    expect(res.error).toMatchObject({ kind: 'connection', message: expect.stringMatching(/ECONNREFUSED/) })
    expect(res.error!.status).toBeUndefined()
    expect(counter.exchanges()).toBe(3) // the token exchange is what fails: 1 try + 2 retries
  })
})

describe('malformed responses', () => {
  it('gives kind validation for non-JSON on a JSON route and for a list without items', async () => {
    const p = await proxy((req) => {
      if (req.url!.endsWith('/system'))
        return { status: 200, headers: { 'content-type': 'text/html' }, body: '<html>login</html>' }
      if (req.url!.includes('/use_cases'))
        return { status: 200, headers: { 'content-type': 'application/json' }, body: '{"data": []}' }
      if (req.url!.includes('/models'))
        return { status: 200, headers: { 'content-type': 'application/json' }, body: '{"items": [' }
      return 'forward'
    })
    const client = clientVia(p.baseUrl)
    expect((await client.system.get()).error).toMatchObject({
      kind: 'validation',
      status: 200,
      message: expect.stringMatching(/malformed/),
    })
    expect((await client.useCases.list()).error).toMatchObject({
      kind: 'validation',
      message: expect.stringMatching(/items/),
    })
    expect((await client.models.list()).error).toMatchObject({ kind: 'validation' })
  })
})
