import { spawn, spawnSync } from 'node:child_process'
import { connect, createServer, type Server } from 'node:net'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sql } from 'kysely'
import { loadConfig } from '../../src/config.js'
import { createLogger, openDatabase } from '../../src/main.js'
import { eventually } from '../helpers/eventually.js'
import {
  describeEachDialect,
  freshDatabase,
  POSTGRES_URL,
  PREFIX,
  startTestApp,
  type TestApp,
} from '../helpers/harness.js'
import { CLI, freePort, runCli, startServiceProcess } from '../helpers/process.js'

const oneLine = (text: string) => text.trim().split('\n')

describe('start-up failures: one line naming the setting', () => {
  let blocker: Server
  let port: number
  beforeAll(async () => {
    port = await freePort()
    blocker = createServer().listen(port, '127.0.0.1')
    await new Promise((r) => blocker.once('listening', r))
  })
  afterAll(() => new Promise<void>((r) => blocker.close(() => r())))

  it('a taken port stops the start before any key is created or printed', async () => {
    const db = await freshDatabase('sqlite')
    const res = runCli(['serve'], { ...db.env, SERVICE_HOST: '127.0.0.1', SERVICE_PORT: String(port) })
    expect(res.code).toBe(1)
    expect(oneLine(res.stderr)).toHaveLength(1)
    expect(res.stderr).toContain(`SERVICE_PORT: port ${port} is already in use`)
    expect(res.stdout).not.toContain('sk_')
    // Nothing was prepared: the database was never created, so no key exists either.
    expect(runCli(['keys', 'list', '--tenant', 'default'], db.env).stderr).toContain('tenant default does not exist')
    await db.drop()
  })

  it('an SQLite file that cannot be opened is named with its path and the reason', () => {
    const dir = mkdtempSync(join(tmpdir(), 'aigov-unopenable-'))
    writeFileSync(join(dir, 'not-a-directory'), 'x')
    const path = join(dir, 'not-a-directory', 'service.db')
    const res = runCli(['serve'], { DATABASE_URL: `sqlite:${path}`, SERVICE_HOST: '127.0.0.1', SERVICE_PORT: '0' })
    expect(res.code).toBe(1)
    expect(oneLine(res.stderr)).toHaveLength(1)
    expect(res.stderr).toContain(`DATABASE_URL: cannot open the SQLite file ${path}: `)
    expect(res.stderr).toMatch(/EEXIST|ENOTDIR/)
  })

  it('an unreachable PostgreSQL is retried for DATABASE_CONNECT_TIMEOUT_S, then named without its password', async () => {
    const closedPort = await freePort()
    const started = Date.now()
    const res = runCli(['serve'], {
      DATABASE_URL: `postgres://aigov:hunter2-secret@127.0.0.1:${closedPort}/aigov`,
      DATABASE_CONNECT_TIMEOUT_S: '2',
      SERVICE_HOST: '127.0.0.1',
      SERVICE_PORT: '0',
    })
    expect(res.code).toBe(1)
    expect(Date.now() - started).toBeGreaterThanOrEqual(2000)
    expect(oneLine(res.stderr)).toHaveLength(1)
    expect(res.stderr).toContain(
      `DATABASE_URL: postgres://aigov:***@127.0.0.1:${closedPort}/aigov is unreachable after 2 s`,
    )
    expect(res.stderr + res.stdout).not.toContain('hunter2')
    // The retries were logged while waiting.
    expect(res.stdout).toContain('database is not reachable yet; retrying')
  })
})

describe.skipIf(!POSTGRES_URL)(
  `DATABASE_POOL_SIZE${POSTGRES_URL ? '' : ' — skipped: DATABASE_URL does not point at PostgreSQL'}`,
  () => {
    it('bounds the connections the service holds: queries beyond it wait for one, and all are answered', async () => {
      const fresh = await freshDatabase('postgres')
      const config = loadConfig({ ...fresh.env, DATABASE_POOL_SIZE: '3', LOG_LEVEL: 'silent' })
      const database = openDatabase(config, createLogger(config))
      try {
        let busiest = 0
        let waited = 0
        const sampler = setInterval(() => {
          const stats = database.poolStats()!
          busiest = Math.max(busiest, stats.total)
          waited = Math.max(waited, stats.waiting)
        }, 2)
        const answers = await Promise.all(
          Array.from({ length: 9 }, (_, i) =>
            sql<{ n: number }>`select ${i}::int as n, pg_sleep(0.05)`.execute(database.db),
          ),
        )
        clearInterval(sampler)
        expect(answers.map((a) => a.rows[0].n)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8])
        expect(busiest).toBe(3)
        expect(waited).toBeGreaterThan(0)
      } finally {
        await database.close()
        await fresh.drop()
      }
    })
  },
)

describe('graceful shutdown', () => {
  it('exits at SHUTDOWN_TIMEOUT_MS when a request in flight holds it up, and at once otherwise', async () => {
    const db = await freshDatabase('sqlite')
    const service = await startServiceProcess({ ...db.env, SHUTDOWN_TIMEOUT_MS: '700', LOG_LEVEL: 'info' })
    // A request whose body never finishes: the server waits for it (up to its 15 s request timeout).
    const socket = connect(service.port, '127.0.0.1')
    await new Promise((r) => socket.once('connect', r))
    socket.write(
      `POST ${PREFIX}/auth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"api`,
    )
    socket.on('error', () => undefined)
    // An answer on another connection, asked after the write, means the service has read that request's head.
    await new Promise((r) => setTimeout(r, 100))
    expect((await fetch(`${service.baseUrl}/livez`)).ok).toBe(true)
    const stopping = Date.now()
    const code = await service.stop('SIGTERM')
    const took = Date.now() - stopping
    expect(code).toBe(1)
    expect(took).toBeGreaterThanOrEqual(600)
    expect(took).toBeLessThan(10_000)
    expect(service.output()).toContain('shutdown deadline passed')
    socket.destroy()

    const idle = await startServiceProcess({ ...db.env, SHUTDOWN_TIMEOUT_MS: '60000' })
    expect(await idle.stop('SIGTERM')).toBe(0)
    await db.drop()
  })
})

describe('CORS', () => {
  let t: TestApp
  let closed: TestApp
  beforeAll(async () => {
    t = await startTestApp('sqlite', { CORS_ORIGINS: 'https://app.example.com' })
    closed = await startTestApp('sqlite')
  })
  afterAll(async () => {
    await t.close()
    await closed.close()
  })

  const preflight = (app: TestApp, origin: string) =>
    app.app.inject({
      method: 'OPTIONS',
      url: `${PREFIX}/use_cases`,
      headers: {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization,content-type',
      },
    })

  it('answers preflights and marks answers for an allowed origin only', async () => {
    const ok = await preflight(t, 'https://app.example.com')
    expect(ok.statusCode).toBe(204)
    expect(ok.headers['access-control-allow-origin']).toBe('https://app.example.com')
    expect(ok.headers['access-control-allow-headers']).toContain('authorization')
    expect(ok.headers['access-control-allow-credentials']).toBeUndefined()
    expect((await preflight(t, 'https://evil.example')).headers['access-control-allow-origin']).toBeUndefined()

    const list = await t.as(
      'acme',
      'read',
    )({ method: 'GET', url: '/use_cases', headers: { origin: 'https://app.example.com' } })
    expect(list.statusCode).toBe(200)
    expect(list.headers['access-control-allow-origin']).toBe('https://app.example.com')
    expect(list.headers['access-control-expose-headers']).toContain('X-Request-ID')
    const foreign = await t.as(
      'acme',
      'read',
    )({ method: 'GET', url: '/use_cases', headers: { origin: 'https://evil.example' } })
    expect(foreign.headers['access-control-allow-origin']).toBeUndefined()
  })

  it('allows no origin by default', async () => {
    const res = await preflight(closed, 'https://app.example.com')
    expect(res.headers['access-control-allow-origin']).toBeUndefined()
    const list = await closed.as(
      'acme',
      'read',
    )({ method: 'GET', url: '/use_cases', headers: { origin: 'https://app.example.com' } })
    expect(list.headers['access-control-allow-origin']).toBeUndefined()
  })
})

const METRICS_TOKEN = 'metrics-token-0123456789'

describeEachDialect('GET /metrics', (dialect) => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp(dialect, { METRICS_TOKEN, RATE_LIMIT_PER_MINUTE: '5' })
  })
  afterAll(async () => t.close())

  const scrape = async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/metrics',
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toContain('text/plain')
    return res.body
  }

  it('needs METRICS_TOKEN', async () => {
    for (const authorization of [undefined, 'Bearer wrong', `Bearer ${METRICS_TOKEN}x`]) {
      const res = await t.app.inject({
        method: 'GET',
        url: '/metrics',
        headers: authorization ? { authorization } : {},
      })
      expect(res.statusCode).toBe(401)
      expect(res.headers['content-type']).toContain('application/problem+json')
    }
  })

  it('counts requests by route, database queries, read-cache outcomes, refusals and audit chains', async () => {
    const as = t.as('acme', 'write')
    const created = await as({ method: 'POST', url: '/use_cases', payload: { name: 'Metrics' } })
    expect(created.statusCode).toBe(201)
    const first = await as({ method: 'GET', url: '/use_cases' })
    await as({ method: 'GET', url: '/use_cases' })
    await as({ method: 'GET', url: '/use_cases', headers: { 'if-none-match': first.headers.etag as string } })
    let refused = 0
    for (let i = 0; i < 5; i++)
      if ((await as({ method: 'GET', url: `/use_cases/${created.json().id}` })).statusCode === 429) refused++
    expect(refused).toBeGreaterThan(0)

    // A ping to a host that does not resolve stays pending (retried later): the delivery backlog.
    const admin = t.as('acme', 'admin')
    const endpoint = await admin({
      method: 'POST',
      url: '/webhook_endpoints',
      payload: { url: 'https://unresolvable.invalid/hook', events: ['model.*'] },
    })
    expect(endpoint.statusCode, endpoint.body).toBe(201)
    expect(
      (await admin({ method: 'POST', url: `/webhook_endpoints/${endpoint.json().id}/test` })).statusCode,
    ).toBeLessThan(300)

    // The requests above keep this process's event loop busy for a moment, during which delivery yields (on a loaded
    // machine, longer): read the metrics once the instance is idle again.
    const body = await eventually(async () => {
      const scraped = await scrape()
      return scraped.includes('aigov_webhook_delivery_yielding 0') && scraped
    }, 10_000)
    expect(body).toContain('aigov_webhook_deliveries_pending 1')
    expect(body).toMatch(/^aigov_webhook_events_behind \d+$/m)
    expect(body).toContain('aigov_webhook_delivery_yielding 0')
    expect(body).toContain(
      'aigov_http_request_duration_seconds_count{method="POST",route="/api/v1/integration/use_cases",status_code="201"} 1',
    )
    expect(body).toMatch(
      /aigov_http_request_duration_seconds_count\{method="GET",route="\/api\/v1\/integration\/use_cases",status_code="200"\} [2-9]/,
    )
    expect(body).toMatch(/aigov_db_query_duration_seconds_count\{outcome="ok"\} [1-9]/)
    expect(body).toContain(`aigov_read_cache_requests_total{outcome="miss"} ${1 + (5 - refused)}`)
    expect(body).toContain('aigov_read_cache_requests_total{outcome="hit"} 1')
    expect(body).toContain('aigov_read_cache_requests_total{outcome="not_modified"} 1')
    expect(body).toContain(`aigov_rate_limit_refusals_total{route="/api/v1/integration/use_cases/:id"} ${refused}`)
    // Tenant acme: its keys' creation, token issues, the create and the webhook endpoint's records are chained.
    expect(Number(/aigov_audit_chain_records\{tenant="acme"\} (\d+)/.exec(body)?.[1])).toBeGreaterThanOrEqual(6)
    expect(body).toContain('aigov_process_resident_memory_bytes')
    if (dialect === 'postgres') expect(body).toMatch(/aigov_db_pool_connections\{state="idle"\} \d+/)
    else expect(body).not.toContain('aigov_db_pool_connections{')
  })

  it('is not served without METRICS_TOKEN or METRICS_PORT', async () => {
    const open = await startTestApp(dialect)
    expect((await open.app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(404)
    await open.close()
  })
})

describe('METRICS_PORT and the access log (a running process)', () => {
  it('serves /metrics on its own port, logs one line per request and never a token', async () => {
    const db = await freshDatabase('sqlite')
    const metricsPort = await freePort()
    const apiKey = 'sk_accesslogaccesslogaccesslogaccesslog0123456'
    const service = await startServiceProcess({
      ...db.env,
      METRICS_PORT: String(metricsPort),
      SERVICE_API_KEY: apiKey,
      LOG_LEVEL: 'info',
      SERVICE_STARTER_LIBRARY: 'false',
    })
    try {
      const token = (
        await (
          await fetch(`${service.baseUrl}${PREFIX}/auth/token`, {
            method: 'POST',
            headers: { 'x-api-key': apiKey, 'x-tenant': 'default' },
          })
        ).json()
      ).access_token as string
      const res = await fetch(`${service.baseUrl}${PREFIX}/use_cases`, {
        headers: { authorization: `Bearer ${token}`, 'x-request-id': 'access-log-1' },
      })
      expect(res.status).toBe(200)
      expect((await fetch(`${service.baseUrl}/metrics`)).status).toBe(404)
      const metrics = await fetch(`http://127.0.0.1:${metricsPort}/metrics`)
      expect(metrics.status).toBe(200)
      expect(await metrics.text()).toContain('route="/api/v1/integration/use_cases",status_code="200"} 1')
      expect((await fetch(`http://127.0.0.1:${metricsPort}/other`)).status).toBe(404)

      await new Promise((r) => setTimeout(r, 100))
      const lines = service
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l))
      const access = lines.filter((l) => l.msg === 'request' && l.request_id === 'access-log-1')
      expect(access).toHaveLength(1)
      expect(access[0]).toMatchObject({
        level: 30,
        method: 'GET',
        route: '/api/v1/integration/use_cases',
        status: 200,
        tenant: 'default',
      })
      expect(access[0].key_id).toMatch(/^key_/)
      expect(typeof access[0].duration_ms).toBe('number')
      expect(service.output()).not.toContain(token)
      expect(service.output()).not.toContain(apiKey)
    } finally {
      await service.stop()
      await db.drop()
    }
  })
})

const hasScript = spawnSync('sh', ['-c', 'command -v script']).status === 0

describe.skipIf(!hasScript)(
  `logs on a terminal${hasScript ? '' : ' — skipped: no `script` command (util-linux) to give the service a terminal'}`,
  () => {
    it('are human-readable lines (pino-pretty), not JSON', async () => {
      const db = await freshDatabase('sqlite')
      const port = await freePort()
      // `script` runs the service with a pseudo-terminal as its stdout, as when a person starts it by hand.
      const child = spawn('script', ['-qfec', `"${process.execPath}" "${CLI}" serve`, '/dev/null'], {
        env: {
          PATH: process.env.PATH,
          ...db.env,
          SERVICE_HOST: '127.0.0.1',
          SERVICE_PORT: String(port),
          SERVICE_STARTER_LIBRARY: 'false',
          LOG_LEVEL: 'info',
        },
        detached: true,
      })
      let output = ''
      child.stdout!.on('data', (chunk) => (output += chunk))
      try {
        for (let waited = 0; !output.includes('Server listening') && waited < 20_000; waited += 100)
          await new Promise((r) => setTimeout(r, 100))
        const line = output.split('\n').find((l) => l.includes('Server listening'))!
        expect(line).toMatch(/INFO.*Server listening at http:\/\/127\.0\.0\.1:/)
        expect(line.trim().startsWith('{')).toBe(false)
      } finally {
        process.kill(-child.pid!, 'SIGTERM')
        await new Promise((r) => child.once('exit', r))
        await db.drop()
      }
    })
  },
)
