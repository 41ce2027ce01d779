import { pbkdf2 } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { promisify } from 'node:util'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { type DnsError, LOOKUPS_PER_TENANT, WebhookResolver } from '../../../src/modules/webhooks/webhook-dns.js'
import { type DnsServer, startDnsServer } from '../../helpers/dns-server.js'
import { multipart } from '../../helpers/governance.js'
import { describeEachDialect, startTestApp, type TestApp } from '../../helpers/harness.js'
import { eventually } from '../../helpers/eventually.js'
import { type Receiver, startReceiver } from '../../helpers/receiver.js'

/** `fn`'s result and how long it took, ms. */
const timed = async <T>(fn: () => Promise<T>): Promise<[T, number]> => {
  const started = performance.now()
  const value = await fn()
  return [value, performance.now() - started]
}

/** Work that runs on libuv's thread pool (file reads, PBKDF2), which dns.lookup's getaddrinfo shares. */
const threadPoolWork = () =>
  Promise.all([
    ...Array.from({ length: 4 }, () => promisify(pbkdf2)('pw', 'salt', 1000, 32, 'sha256')),
    readFile(new URL(import.meta.url)),
  ])

/** Names asked of the server in its first `ms` after the first query for a name matching `pattern`. */
const askedAtOnce = (server: DnsServer, pattern: RegExp, ms: number) => {
  const first = server.queries.find((q) => pattern.test(q.name))
  return first
    ? new Set(server.queries.filter((q) => pattern.test(q.name) && q.at - first.at < ms).map((q) => q.name))
    : new Set()
}

describe('webhook name lookups (c-ares against a local DNS server)', () => {
  let dns: DnsServer
  beforeAll(async () => {
    dns = await startDnsServer({
      records: {
        'short.ttl.test': [{ address: '192.0.2.10', ttl: 1 }],
        'long.ttl.test': [
          { address: '192.0.2.11', ttl: 300 },
          { address: '192.0.2.12', ttl: 300 },
        ],
      },
      hang: (name) => name.endsWith('.never.test'),
    })
  })
  afterAll(async () => dns?.close())
  const asked = (name: string) => dns.queries.filter((q) => q.name === name && q.type === 'A').length

  it('answers a name from the cache within its TTL and asks again after it; a failure is cached briefly too', async () => {
    const resolver = new WebhookResolver({ servers: [dns.address], timeoutMs: 1000 })
    expect(await resolver.resolve('acme', 'long.ttl.test')).toEqual([
      { address: '192.0.2.11', family: 4 },
      { address: '192.0.2.12', family: 4 },
    ])
    // Another tenant, another spelling of the name (case, trailing dot): the same cached answer.
    expect(await resolver.resolve('globex', 'LONG.ttl.test.')).toHaveLength(2)
    expect(asked('long.ttl.test')).toBe(1)
    await resolver.resolve('acme', 'short.ttl.test')
    await resolver.resolve('acme', 'short.ttl.test')
    expect(asked('short.ttl.test')).toBe(1)
    await new Promise((r) => setTimeout(r, 1200))
    await resolver.resolve('acme', 'short.ttl.test')
    expect(asked('short.ttl.test')).toBe(2)
    for (let i = 0; i < 2; i++)
      await expect(resolver.resolve('acme', 'missing.ttl.test')).rejects.toMatchObject({
        code: 'ENOTFOUND',
        message: 'missing.ttl.test has no address in DNS',
      })
    expect(asked('missing.ttl.test')).toBe(1)
  })

  it('answers IP literals and localhost without asking', async () => {
    const resolver = new WebhookResolver({ servers: [dns.address], timeoutMs: 1000 })
    const before = dns.queries.length
    expect(await resolver.resolve('acme', '203.0.113.9')).toEqual([{ address: '203.0.113.9', family: 4 }])
    expect(await resolver.resolve('acme', '[2001:db8::1]')).toEqual([{ address: '2001:db8::1', family: 6 }])
    for (const name of ['localhost', 'LocalHost.', 'api.localhost']) {
      expect(await resolver.resolve('acme', name)).toEqual([
        { address: '127.0.0.1', family: 4 },
        { address: '::1', family: 6 },
      ])
    }
    expect(dns.queries.length).toBe(before)
  })

  it("holds a tenant whose names never answer to its share of queries, each cut at the timeout, while another tenant's answer at once", async () => {
    const resolver = new WebhookResolver({ servers: [dns.address], timeoutMs: 800 })
    const started = Date.now()
    const hanging = Array.from({ length: 30 }, (_, i) =>
      resolver.resolve('acme', `n${i}.a.never.test`).then(
        () => {
          throw new Error('answered')
        },
        (err: DnsError) => ({ err, ms: Date.now() - started }),
      ),
    )
    // Twice for one name at once: one query.
    const twice = resolver.resolve('acme', 'n0.a.never.test').then(
      () => undefined,
      (err: DnsError) => err,
    )
    await eventually(() => dns.queries.some((q) => q.name.endsWith('.a.never.test')), 15_000)
    const [answer, ms] = await timed(() => resolver.resolve('globex', 'long.ttl.test'))
    expect(answer).toHaveLength(2)
    expect(ms).toBeLessThan(300)
    const failed = await Promise.all(hanging)
    expect((await twice)?.code).toBe('ETIMEOUT')
    // Each within the timeout (and a timer's slack), none waiting behind the others' timeouts.
    for (const { ms } of failed) expect(ms).toBeLessThan(800 + 400)
    expect(failed.filter((f) => f.err.code === 'ETIMEOUT')).toHaveLength(LOOKUPS_PER_TENANT)
    expect(failed.filter((f) => f.err.code === 'EBUSY')).toHaveLength(30 - LOOKUPS_PER_TENANT)
    expect(failed.find((f) => f.err.code === 'ETIMEOUT')!.err.message).toMatch(
      /^no DNS answer for n\d+\.a\.never\.test within 0\.8 s$/,
    )
    expect(askedAtOnce(dns, /\.a\.never\.test$/, 700).size).toBe(LOOKUPS_PER_TENANT)
  })
})

describeEachDialect('webhook DNS that never answers', (dialect) => {
  let t: TestApp
  let dns: DnsServer
  const receivers: Receiver[] = []
  beforeAll(async () => {
    dns = await startDnsServer({
      records: { 'hooks.ttl.test': [{ address: '127.0.0.1', ttl: 300 }] },
      hang: (name) => name.endsWith('.never.test'),
    })
    t = await startTestApp(dialect, {
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_DNS_SERVERS: dns.address,
      WEBHOOK_DNS_TIMEOUT_MS: '2000',
    })
  })
  afterEach(async () => {
    for (const tenant of ['acme', 'globex', 'initech']) {
      const admin = t.as(tenant, 'admin')
      for (const e of (await admin({ method: 'GET', url: '/webhook_endpoints?page_limit=100' })).json().items)
        await admin({ method: 'DELETE', url: `/webhook_endpoints/${e.id}` })
    }
    await Promise.all(receivers.splice(0).map((r) => r.close()))
  })
  afterAll(async () => {
    await t?.close()
    await dns?.close()
  })
  const endpoint = async (tenant: string, url: string, enabled = true) => {
    const res = await t.as(
      tenant,
      'admin',
    )({ method: 'POST', url: '/webhook_endpoints', payload: { url, events: ['use_case.created'], enabled } })
    expect(res.statusCode, res.body).toBe(201)
    return res.json() as { id: string }
  }
  const useCases = async (tenant: string, n: number, prefix: string) => {
    const write = t.as(tenant, 'write')
    for (let i = 0; i < n; i += 20) {
      const answers = await Promise.all(
        Array.from({ length: Math.min(20, n - i) }, (_, j) =>
          write({ method: 'POST', url: '/use_cases', payload: { name: `${prefix} ${i + j}` } }),
        ),
      )
      for (const res of answers) expect(res.statusCode, res.body).toBe(201)
    }
  }

  it("keeps another tenant's deliveries and every tenant's API prompt while one tenant's 20 endpoints' names never answer", async () => {
    const hanging: { id: string }[] = []
    for (let i = 0; i < 20; i++) hanging.push(await endpoint('acme', `http://hook-${i}.never.test/events`))
    const fast = await startReceiver()
    receivers.push(fast)
    await endpoint('globex', fast.url)
    await useCases('acme', 200, 'Held')
    // acme's deliveries ask the configured server for its names, which never answers.
    await eventually(() => dns.queries.some((q) => q.name.endsWith('.never.test')), 15_000)

    const [, deliveredMs] = await timed(async () => {
      await useCases('globex', 20, 'Not held up')
      await fast.until((got) => got.length === 20, 10_000)
    })
    // Before, such deliveries all failed, their sends' 10 s timeout passing while the lookups held every thread.
    expect(deliveredMs).toBeLessThan(5000)

    // Every tenant's API, and the work that shares the thread pool, answer at once.
    for (const tenant of ['globex', 'acme']) {
      const [created, ms] = await timed(() =>
        t.as(
          tenant,
          'admin',
        )({
          method: 'POST',
          url: '/webhook_endpoints',
          payload: { url: 'http://127.0.0.1:9/other', events: ['*'], enabled: false },
        }),
      )
      expect(created.statusCode, created.body).toBe(201)
      expect(ms).toBeLessThan(1500)
    }
    const { body, contentType } = multipart([
      { name: 'file', value: Buffer.alloc(256 * 1024, 7), filename: 'report.pdf', type: 'application/pdf' },
    ])
    const [uploaded, uploadMs] = await timed(() =>
      t.as(
        'globex',
        'write',
      )({ method: 'POST', url: '/evidence', payload: body, headers: { 'content-type': contentType } }),
    )
    expect(uploaded.statusCode, uploaded.body).toBe(201)
    expect(uploadMs).toBeLessThan(1500)
    const [listed, listMs] = await timed(() => t.as('acme', 'read')({ method: 'GET', url: '/use_cases?page_limit=50' }))
    expect(listed.statusCode).toBe(200)
    expect(listMs).toBeLessThan(1500)
    expect((await timed(threadPoolWork))[1]).toBeLessThan(1000)

    // acme's deliveries fail with a clear error and wait for their retry.
    const failed = await eventually(async () => {
      const items = (
        await t.as(
          'acme',
          'admin',
        )({ method: 'GET', url: `/webhook_endpoints/${hanging[0].id}/deliveries?page_limit=100` })
      ).json().items as any[]
      return items.find((d) => d.attempts > 0)
    }, 15_000)
    expect(failed.status).toBe('pending')
    expect(failed.last_status_code).toBeNull()
    expect(failed.last_error).toMatch(/^no DNS answer for hook-0\.never\.test within 2 s/)
    expect(Date.parse(failed.next_attempt_at)).toBeGreaterThan(Date.parse(failed.last_attempt_at))
    // At most its share of names was asked at once.
    expect(askedAtOnce(dns, /\.never\.test$/, 1500).size).toBeLessThanOrEqual(LOOKUPS_PER_TENANT)
  })

  it('asks once for two sends within the TTL, and connects to the address it answered', async () => {
    const r = await startReceiver()
    receivers.push(r)
    const asked = () => dns.queries.filter((q) => q.name === 'hooks.ttl.test' && q.type === 'A').length
    const before = asked()
    await endpoint('initech', r.url.replace('127.0.0.1', 'hooks.ttl.test'))
    await useCases('initech', 1, 'First')
    await r.until((got) => got.length === 1)
    await useCases('initech', 1, 'Second')
    await r.until((got) => got.length === 2)
    expect(r.received.map((e) => e.headers.host)).toEqual([
      new URL(r.url).host.replace('127.0.0.1', 'hooks.ttl.test'),
      new URL(r.url).host.replace('127.0.0.1', 'hooks.ttl.test'),
    ])
    expect(asked() - before).toBe(1)
  })
})

describeEachDialect('webhook DNS at save', (dialect) => {
  let t: TestApp
  let dns: DnsServer
  beforeAll(async () => {
    dns = await startDnsServer({
      records: {
        'inside.corp.test': [{ address: '10.0.0.7', ttl: 60 }],
        'outside.corp.test': [{ address: '8.8.8.8', ttl: 60 }],
      },
      hang: (name) => name.endsWith('.never.test'),
    })
    t = await startTestApp(dialect, { WEBHOOK_DNS_SERVERS: dns.address, WEBHOOK_DNS_TIMEOUT_MS: '600' })
  })
  afterAll(async () => {
    await t?.close()
    await dns?.close()
  })
  const create = (tenant: string, url: string) =>
    t.as(
      tenant,
      'admin',
    )({ method: 'POST', url: '/webhook_endpoints', payload: { url, events: ['*'], enabled: false } })

  it('saves a name that never answers once WEBHOOK_DNS_TIMEOUT_MS has passed, while other tenants save at once', async () => {
    await t.token('acme', 'admin')
    await t.token('globex', 'admin')
    const slow = timed(() => create('acme', 'https://slow.never.test/hook'))
    await eventually(() => dns.queries.some((q) => q.name === 'slow.never.test'), 15_000)
    const [other, otherMs] = await timed(() => create('globex', 'http://8.8.8.8/hook'))
    expect(other.statusCode, other.body).toBe(201)
    expect(otherMs).toBeLessThan(400)
    const [saved, savedMs] = await slow
    // As before: a name that does not resolve (yet, or in time) is taken; every send resolves it again.
    expect(saved.statusCode, saved.body).toBe(201)
    expect(savedMs).toBeGreaterThanOrEqual(400)
    expect(savedMs).toBeLessThan(2000)
  })

  it('refuses a name the server resolves to a private address, and takes one it resolves to a public one', async () => {
    const inside = await create('acme', 'https://inside.corp.test/hook')
    expect(inside.statusCode, inside.body).toBe(422)
    expect(inside.json().errors[0]).toMatchObject({ field: 'url' })
    expect(inside.json().errors[0].message).toContain('inside.corp.test resolves to 10.0.0.7')
    expect((await create('acme', 'https://outside.corp.test/hook')).statusCode).toBe(201)
  })
})
