import type { FastifyInstance, InjectOptions } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../../src/app.js'
import { closeDeps, createDeps, createLogger, openDatabase } from '../../../src/main.js'
import { KEY_STATUS_TTL_MS } from '../../../src/modules/api-keys/key-status.js'
import { announceRevocation } from '../../../src/modules/api-keys/revocations.js'
import { STREAM_RETRY_AFTER_S, STREAMS_PER_KEY, STREAMS_PER_TENANT } from '../../../src/modules/events/events.routes.js'
import type { Deps } from '../../../src/shared/deps.js'
import {
  describeEachDialect,
  POSTGRES_URL,
  PREFIX,
  REDIS_URL,
  startTestApp,
  type TestApp,
} from '../../helpers/harness.js'

interface Sse {
  status: number
  retryAfter: string | null
  /** The answer's body, when it is not a stream. */
  body: string
  events: { id: string; event: string; data: any }[]
  /** The comment lines that arrived (heartbeats, the reason a stream was ended). */
  comments: string[]
  /** Resolves with Date.now() when the stream ends (the server ended it, or close()). */
  ended: Promise<number>
  /** Waits until `n` events have arrived. */
  until(n: number, ms?: number): Promise<Sse['events']>
  close(): void
}

/** Opens a real event stream over a socket and parses what arrives. */
async function openStream(base: string, token: string, query = '', headers: Record<string, string> = {}): Promise<Sse> {
  const abort = new AbortController()
  const res = await fetch(`${base}${PREFIX}/events${query}`, {
    headers: { authorization: `Bearer ${token}`, ...headers },
    signal: abort.signal,
  })
  const events: Sse['events'] = []
  const comments: string[] = []
  let body = ''
  let ended: Promise<number> = Promise.resolve(Date.now())
  if (res.ok) {
    ended = (async () => {
      let buffer = ''
      const decoder = new TextDecoder()
      try {
        for await (const chunk of res.body!) {
          buffer += decoder.decode(chunk as Uint8Array, { stream: true })
          let end: number
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, end)
            buffer = buffer.slice(end + 2)
            comments.push(
              ...block
                .split('\n')
                .filter((l) => l.startsWith(': '))
                .map((l) => l.slice(2)),
            )
            const fields = Object.fromEntries(
              block
                .split('\n')
                .filter((l) => !l.startsWith(':') && l.includes(': '))
                .map((l) => [l.slice(0, l.indexOf(': ')), l.slice(l.indexOf(': ') + 2)]),
            )
            if (fields.data) events.push({ id: fields.id, event: fields.event, data: JSON.parse(fields.data) })
          }
        }
      } catch {
        // aborted
      }
      return Date.now()
    })()
  } else {
    body = await res.text()
  }
  return {
    status: res.status,
    retryAfter: res.headers.get('retry-after'),
    body,
    events,
    comments,
    ended,
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

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** What `promise` resolves with, or a failure when it takes longer than `ms`. */
/** Announces a revocation of a key that does not exist from `from` until `to` hears one: then `to` is subscribed. */
async function untilHearsRevocations(from: Deps, to: Deps): Promise<void> {
  let heard = false
  const onRevoked = (_tenant: string, keyId: string) => (heard ||= keyId === 'key_probe')
  to.keyStatus.on('revoked', onRevoked)
  try {
    for (let i = 0; !heard; i++) {
      if (i === 100) throw new Error('the second instance never subscribed to revocations')
      await announceRevocation(from.redis, 'probe', 'key_probe')
      await new Promise((r) => setTimeout(r, 50))
    }
  } finally {
    to.keyStatus.off('revoked', onRevoked)
  }
}

async function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>(
    (_r, reject) => (timer = setTimeout(() => reject(new Error(`not within ${ms} ms`)), ms)),
  )
  try {
    return await Promise.race([promise, late])
  } finally {
    clearTimeout(timer)
  }
}

/** An access token for an API key secret of tenant acme. */
async function exchange(app: FastifyInstance, key: string): Promise<string> {
  const res = await app.inject({
    method: 'POST',
    url: `${PREFIX}/auth/token`,
    headers: { 'x-api-key': key, 'x-tenant': 'acme' },
  })
  expect(res.statusCode).toBe(200)
  return res.json().access_token
}

/** A token's `exp`, in ms since the epoch. */
const expiryOf = (token: string) =>
  (JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()) as { exp: number }).exp * 1000

describeEachDialect('GET /events', (dialect) => {
  let t: TestApp
  let base: string
  let token: string
  const create = async (name: string) =>
    (await t.as('acme', 'write')({ method: 'POST', url: '/use_cases', payload: { name } })).json() as { id: string }

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
    expect(event).toMatchObject({
      event: 'use_case.created',
      data: { resource_id: uc.id, resource_name: 'During the stream', action: 'use_case.created' },
    })
    expect(event.id).toBe(event.data.id)
    stream.close()
  })

  it('sends a comment line every EVENTS_HEARTBEAT_MS while nothing happens', async () => {
    const abort = new AbortController()
    const res = await fetch(`${base}${PREFIX}/events?action=nothing.happens`, {
      headers: { authorization: `Bearer ${token}` },
      signal: abort.signal,
    })
    const reader = res.body!.getReader()
    const decoder = new TextDecoder()
    const heartbeats: number[] = []
    const started = Date.now()
    try {
      while (heartbeats.length < 3) {
        const read = await Promise.race([
          reader.read(),
          new Promise<never>((_r, reject) =>
            setTimeout(() => reject(new Error(`${heartbeats.length} heartbeats in 2 s`)), 2000),
          ),
        ])
        for (const _beat of decoder.decode(read.value, { stream: true }).matchAll(/^: heartbeat$/gm))
          heartbeats.push(Date.now() - started)
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
    const bounded = (
      await t.app.inject({
        method: 'POST',
        url: `${PREFIX}/auth/token`,
        headers: { 'x-api-key': key, 'x-tenant': 'acme' },
      })
    ).json().access_token
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
    const tokenOf = async (tenant: string) =>
      (
        await t.app.inject({
          method: 'POST',
          url: `${PREFIX}/auth/token`,
          headers: { 'x-api-key': await t.apiKey(tenant, 'read'), 'x-tenant': tenant },
        })
      ).json().access_token as string
    const tokens = await Promise.all(
      Array.from({ length: STREAMS_PER_TENANT / STREAMS_PER_KEY + 1 }, () => tokenOf('initech')),
    )
    const streams: Sse[] = []
    for (const token of tokens.slice(0, -1))
      for (let i = 0; i < STREAMS_PER_KEY; i++) streams.push(await openStream(base, token))
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

  it('ends a stream at once when its API key is revoked, as every other request of its token gets 401', async () => {
    const { id, key } = (
      await t.as(
        'acme',
        'admin',
      )({ method: 'POST', url: '/api_keys', payload: { name: 'revoked mid-stream', role: 'read' } })
    ).json()
    const bearer = await exchange(t.app, key)
    const stream = await openStream(base, bearer)
    const seen = await create('Seen before the revocation')
    await stream.until(1)
    const revokedAt = Date.now()
    expect((await t.as('acme', 'admin')({ method: 'DELETE', url: `/api_keys/${id}` })).statusCode).toBe(204)
    const endedAt = await within(stream.ended, 2000)
    expect(endedAt - revokedAt).toBeLessThan(500)
    expect(stream.comments).toContain('stream ended: its API key has been revoked')
    await create('After the revocation')
    await sleep(300)
    expect(stream.events.map((e) => e.data.resource_id)).toContain(seen.id)
    expect(stream.events.map((e) => e.data.resource_name)).not.toContain('After the revocation')
    expect((await openStream(base, bearer)).status).toBe(401)
  })
})

describeEachDialect('GET /events ends with its credentials', (dialect) => {
  const TTL_S = 3
  let t: TestApp
  let base: string
  let adminKey: string

  beforeAll(async () => {
    t = await startTestApp(dialect, { SERVICE_TOKEN_TTL: String(TTL_S) })
    base = await t.app.listen({ port: 0, host: '127.0.0.1' })
    adminKey = await t.apiKey('acme', 'admin')
  })
  afterAll(async () => t?.close())
  // Tokens here live for 3 s: every call takes a fresh one.
  const asAdmin = async (opts: InjectOptions & { url: string }) =>
    t.app.inject({
      ...opts,
      url: PREFIX + opts.url,
      headers: { authorization: `Bearer ${await exchange(t.app, adminKey)}` },
    })

  it('ends a stream when its access token expires, and no sooner', async () => {
    const bearer = await exchange(t.app, await t.apiKey('acme', 'read'))
    const exp = expiryOf(bearer)
    const stream = await openStream(base, bearer)
    expect(stream.status).toBe(200)
    await asAdmin({ method: 'POST', url: '/use_cases', payload: { name: 'Before the token expires' } })
    await stream.until(1)
    const endedAt = await within(stream.ended, TTL_S * 1000 + 2000)
    expect(endedAt).toBeGreaterThanOrEqual(exp - 5)
    expect(endedAt - exp).toBeLessThan(500)
    expect(stream.comments).toContain(
      'stream ended: its access token has expired; resume with Last-Event-ID and a new one',
    )
  })

  it('ends a stream when its API key expires, before its token does', async () => {
    const expiresAt = Date.now() + 1200
    const created = await asAdmin({
      method: 'POST',
      url: '/api_keys',
      payload: { name: 'expiring', role: 'read', expires_at: new Date(expiresAt).toISOString() },
    })
    expect(created.statusCode).toBe(201)
    const bearer = await exchange(t.app, created.json().key)
    expect(expiryOf(bearer)).toBeGreaterThan(expiresAt + 500)
    const stream = await openStream(base, bearer)
    expect(stream.status).toBe(200)
    const endedAt = await within(stream.ended, 3000)
    expect(endedAt).toBeGreaterThanOrEqual(expiresAt - 5)
    expect(endedAt - expiresAt).toBeLessThan(500)
  })
})

describe.skipIf(!POSTGRES_URL)(
  `GET /events across instances without Redis${POSTGRES_URL ? '' : ' — skipped: needs PostgreSQL'}`,
  () => {
    let t: TestApp
    let second: { app: FastifyInstance; deps: Deps; base: string }

    beforeAll(async () => {
      t = await startTestApp('postgres')
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

    it('a key revoked on instance A ends its stream on instance B within the time B trusts a key’s status', async () => {
      const { id, key } = (
        await t.as(
          'acme',
          'admin',
        )({ method: 'POST', url: '/api_keys', payload: { name: 'revoked on A', role: 'read' } })
      ).json()
      const stream = await openStream(second.base, await exchange(t.app, key))
      expect(stream.status).toBe(200)
      const revokedAt = Date.now()
      expect((await t.as('acme', 'admin')({ method: 'DELETE', url: `/api_keys/${id}` })).statusCode).toBe(204)
      const endedAt = await within(stream.ended, 3 * KEY_STATUS_TTL_MS)
      expect(endedAt - revokedAt).toBeLessThan(2 * KEY_STATUS_TTL_MS + 500)
      expect(stream.comments).toContain('stream ended: its API key has been revoked')
    })
  },
)

describe.skipIf(!(POSTGRES_URL && REDIS_URL))(
  `GET /events across instances${POSTGRES_URL && REDIS_URL ? '' : ' — skipped: needs PostgreSQL and Redis'}`,
  () => {
    let t: TestApp
    let second: { app: FastifyInstance; deps: Deps; base: string }

    beforeAll(async () => {
      t = await startTestApp('postgres', { REDIS_URL: REDIS_URL! })
      const log = createLogger(t.config)
      const deps = await createDeps(t.config, log, openDatabase(t.config, log))
      const app = await buildApp(deps)
      second = { app, deps, base: await app.listen({ port: 0, host: '127.0.0.1' }) }
      await untilHearsRevocations(t.deps, deps)
      await untilHearsRevocations(t.deps, deps)
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
      const uc = (
        await t.as('acme', 'write')({ method: 'POST', url: '/use_cases', payload: { name: 'Written on A' } })
      ).json()
      const [event] = await stream.until(1, 1000)
      expect(event.data.resource_id).toBe(uc.id)
      stream.close()
    })

    // Skipped while a regression is open: through Redis the stream on B now ends after ~2 s, not within 500 ms.
    it('a key revoked on instance A ends its stream on instance B at once, through Redis', async () => {
      const { id, key } = (
        await t.as(
          'acme',
          'admin',
        )({ method: 'POST', url: '/api_keys', payload: { name: 'revoked on A', role: 'read' } })
      ).json()
      const stream = await openStream(second.base, await exchange(t.app, key))
      expect(stream.status).toBe(200)
      // Revoked as soon as the stream is open: B's own next look at the key comes KEY_STATUS_TTL_MS later, so an end
      // within 500 ms is Redis's doing.
      const revokedAt = Date.now()
      expect((await t.as('acme', 'admin')({ method: 'DELETE', url: `/api_keys/${id}` })).statusCode).toBe(204)
      const endedAt = await within(stream.ended, 2000)
      expect(endedAt - revokedAt).toBeLessThan(500)
      expect(stream.comments).toContain('stream ended: its API key has been revoked')
    })
  },
)
