import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../src/app.js'
import { closeDeps, createDeps, createLogger, openDatabase } from '../src/main.js'
import { STREAM_RETRY_AFTER_S, STREAMS_PER_KEY, STREAMS_PER_TENANT } from '../src/modules/events/events.routes.js'
import type { Deps } from '../src/shared/deps.js'
import { describeEachDialect, POSTGRES_URL, PREFIX, REDIS_URL, startTestApp, type TestApp } from './helpers/harness.js'

interface Sse {
  status: number
  retryAfter: string | null
  /** The answer's body, when it is not a stream. */
  body: string
  events: { id: string; event: string; data: any }[]
  /** Waits until `n` events have arrived. */
  until(n: number, ms?: number): Promise<Sse['events']>
  close(): void
}

/** Opens a real event stream over a socket and parses what arrives. */
async function openStream(base: string, token: string, query = '', headers: Record<string, string> = {}): Promise<Sse> {
  const abort = new AbortController()
  const res = await fetch(`${base}${PREFIX}/events${query}`, { headers: { authorization: `Bearer ${token}`, ...headers }, signal: abort.signal })
  const events: Sse['events'] = []
  let body = ''
  if (res.ok) {
    void (async () => {
      let buffer = ''
      const decoder = new TextDecoder()
      try {
        for await (const chunk of res.body!) {
          buffer += decoder.decode(chunk as Uint8Array, { stream: true })
          let end: number
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, end)
            buffer = buffer.slice(end + 2)
            const fields = Object.fromEntries(block.split('\n').filter((l) => !l.startsWith(':') && l.includes(': ')).map((l) => [l.slice(0, l.indexOf(': ')), l.slice(l.indexOf(': ') + 2)]))
            if (fields.data) events.push({ id: fields.id, event: fields.event, data: JSON.parse(fields.data) })
          }
        }
      } catch {
        // aborted
      }
    })()
  } else {
    body = await res.text()
  }
  return {
    status: res.status,
    retryAfter: res.headers.get('retry-after'),
    body,
    events,
    async until(n, ms = 5000) {
      const deadline = Date.now() + ms
      while (events.length < n) {
        if (Date.now() > deadline) throw new Error(`stream: ${events.length} of ${n} events within ${ms} ms`)
        await new Promise((r) => setTimeout(r, 20))
      }
      return events
    },
    close: () => abort.abort(),
  }
}

describeEachDialect('GET /events', (dialect) => {
  let t: TestApp
  let base: string
  let token: string
  const create = async (name: string) => (await t.as('acme', 'write')({ method: 'POST', url: '/use_cases', payload: { name } })).json() as { id: string }

  beforeAll(async () => {
    // Heartbeats every 100 ms instead of 15 s, so that a test can see them; openStream skips them.
    t = await startTestApp(dialect, { EVENTS_HEARTBEAT_MS: '100' })
    base = await t.app.listen({ port: 0, host: '127.0.0.1' })
    token = await t.token('acme', 'read')
  })
  afterAll(async () => t?.close())

  it('streams records as they commit, from the end of the log', async () => {
    await create('Before the stream')
    const stream = await openStream(base, token)
    expect(stream.status).toBe(200)
    const uc = await create('During the stream')
    const [event] = await stream.until(1)
    expect(event).toMatchObject({ event: 'use_case.created', data: { resource_id: uc.id, resource_name: 'During the stream', action: 'use_case.created' } })
    expect(event.id).toBe(event.data.id)
    stream.close()
  })

  it('sends a comment line every EVENTS_HEARTBEAT_MS while nothing happens', async () => {
    const abort = new AbortController()
    const res = await fetch(`${base}${PREFIX}/events?action=nothing.happens`, { headers: { authorization: `Bearer ${token}` }, signal: abort.signal })
    const reader = res.body!.getReader()
    const decoder = new TextDecoder()
    const heartbeats: number[] = []
    const started = Date.now()
    try {
      while (heartbeats.length < 3) {
        const read = await Promise.race([reader.read(), new Promise<never>((_r, reject) => setTimeout(() => reject(new Error(`${heartbeats.length} heartbeats in 2 s`)), 2000))])
        for (const _beat of decoder.decode(read.value, { stream: true }).matchAll(/^: heartbeat$/gm)) heartbeats.push(Date.now() - started)
      }
    } finally {
      abort.abort()
    }
    expect(heartbeats[2]).toBeGreaterThanOrEqual(250)
    expect(heartbeats[2]).toBeLessThan(2000)
  })

  it('resumes after Last-Event-ID or ?after= without losing or repeating a record', async () => {
    const first = await openStream(base, token)
    await create('Resume 1')
    const [seen] = await first.until(1)
    first.close()
    const missed = [await create('Resume 2'), await create('Resume 3')]
    for (const resume of [{ headers: { 'last-event-id': seen.id } }, { query: `?after=${seen.id}` }]) {
      const again = await openStream(base, token, resume.query ?? '', resume.headers ?? {})
      const events = await again.until(2)
      await new Promise((r) => setTimeout(r, 200))
      expect(events.map((e) => e.data.resource_id)).toEqual(missed.map((m) => m.id))
      again.close()
    }
  })

  it('filters by action, resource type and use case', async () => {
    const uc = await create('Filtered')
    const stream = await openStream(base, token, `?action=use_case.updated&use_case_id=${uc.id}`)
    await create('Not this one')
    await t.as('acme', 'write')({ method: 'PATCH', url: `/use_cases/${uc.id}`, payload: { description: 'changed' } })
    const [event] = await stream.until(1)
    expect(event).toMatchObject({ event: 'use_case.updated', data: { resource_id: uc.id } })
    const typed = await openStream(base, token, `?resource_type=vendor&after=${event.id}`)
    await t.as('acme', 'write')({ method: 'POST', url: '/vendors', payload: { name: 'Streamed vendor' } })
    expect((await typed.until(1))[0].event).toBe('vendor.created')
    stream.close()
    typed.close()
  })

  it('keeps tenants apart and refuses unknown positions', async () => {
    const other = await openStream(base, await t.token('globex', 'read'))
    const mine = await openStream(base, token)
    await create('Private to acme')
    await mine.until(1)
    await new Promise((r) => setTimeout(r, 700))
    expect(other.events).toHaveLength(0)
    const bad = await openStream(base, token, '?after=al_01jd3k8m9v4q2w6e8r0t2y4u6i')
    expect(bad.status).toBe(400)
    const foreign = await openStream(base, await t.token('globex', 'read'), `?after=${mine.events[0].id}`)
    expect(foreign.status).toBe(400)
    expect((await openStream(base, token, '?colour=blue')).status).toBe(400)
    other.close()
    mine.close()
  })

  it('bounds the streams one API key holds open', async () => {
    const key = await t.apiKey('acme', 'read')
    const bounded = (await t.app.inject({ method: 'POST', url: `${PREFIX}/auth/token`, headers: { 'x-api-key': key, 'x-tenant': 'acme' } })).json().access_token
    const streams = await Promise.all(Array.from({ length: 5 }, () => openStream(base, bounded)))
    expect(streams.map((s) => s.status)).toEqual([200, 200, 200, 200, 200])
    const refused = await openStream(base, bounded)
    expect(refused.status).toBe(429)
    expect(refused.retryAfter).toBe(String(STREAM_RETRY_AFTER_S))
    expect(JSON.parse(refused.body)).toMatchObject({ status: 429, retry_after: STREAM_RETRY_AFTER_S })
    streams[0].close()
    await new Promise((r) => setTimeout(r, 200))
    const again = await openStream(base, bounded)
    expect(again.status).toBe(200)
    for (const s of [...streams, again]) s.close()
  })

  it('bounds the streams one tenant holds open, whatever its keys, and leaves other tenants theirs', async () => {
    const tokenOf = async (tenant: string) => (await t.app.inject({ method: 'POST', url: `${PREFIX}/auth/token`, headers: { 'x-api-key': await t.apiKey(tenant, 'read'), 'x-tenant': tenant } })).json().access_token as string
    const tokens = await Promise.all(Array.from({ length: STREAMS_PER_TENANT / STREAMS_PER_KEY + 1 }, () => tokenOf('initech')))
    const streams: Sse[] = []
    for (const token of tokens.slice(0, -1)) for (let i = 0; i < STREAMS_PER_KEY; i++) streams.push(await openStream(base, token))
    expect(streams.map((s) => s.status)).toEqual(Array(STREAMS_PER_TENANT).fill(200))
    const refused = await openStream(base, tokens.at(-1)!)
    expect(refused.status).toBe(429)
    expect(refused.body).toContain(`${STREAMS_PER_TENANT} event streams`)
    expect(refused.retryAfter).toBe(String(STREAM_RETRY_AFTER_S))
    const elsewhere = await openStream(base, await tokenOf('umbrella'))
    expect(elsewhere.status).toBe(200)
    streams[0].close()
    await new Promise((r) => setTimeout(r, 200))
    const again = await openStream(base, tokens.at(-1)!)
    expect(again.status).toBe(200)
    for (const s of [...streams, elsewhere, again]) s.close()
  })
})

describe.skipIf(!(POSTGRES_URL && REDIS_URL))(`GET /events across instances${POSTGRES_URL && REDIS_URL ? '' : ' — skipped: needs PostgreSQL and Redis'}`, () => {
  let t: TestApp
  let second: { app: FastifyInstance; deps: Deps; base: string }

  beforeAll(async () => {
    t = await startTestApp('postgres', { REDIS_URL: REDIS_URL! })
    const log = createLogger(t.config)
    const deps = await createDeps(t.config, log, openDatabase(t.config, log))
    const app = await buildApp(deps)
    second = { app, deps, base: await app.listen({ port: 0, host: '127.0.0.1' }) }
  })
  afterAll(async () => {
    await second?.app.close()
    if (second) await closeDeps(second.deps)
    await t?.close()
  })

  it('a write on instance A reaches a stream on instance B at once, through Redis', async () => {
    await t.token('acme', 'write')
    const stream = await openStream(second.base, await t.token('acme', 'read'))
    // Streams on B poll the log only every 5 s when Redis is configured: arriving within 1 s means Redis woke it.
    const uc = (await t.as('acme', 'write')({ method: 'POST', url: '/use_cases', payload: { name: 'Written on A' } })).json()
    const [event] = await stream.until(1, 1000)
    expect(event.data.resource_id).toBe(uc.id)
    stream.close()
  })
})
