import { createServer, type Server, type Socket } from 'node:net'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { freshDatabase, REDIS_URL, type TestDatabase } from '../helpers/harness.js'
import { type ServiceProcess, startServiceProcess } from '../helpers/process.js'
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js'

// Dependencies that hang or vanish while the service runs: readiness says so quickly, and requests that do
// not need the dependency keep being answered.

const P = '/api/v1/integration'
const TENANT = 'depfault'
const KEY = 'sk_dependency_fault_admin_key_0123456789abcdefghij'
const BASE_ENV = {
  SERVICE_JWT_SECRET: 'dependency-fault-secret-0123456789abcdefg',
  SERVICE_API_KEY: KEY,
  SERVICE_TENANT: TENANT,
  SERVICE_STARTER_LIBRARY: 'false',
  RATE_LIMIT_PER_MINUTE: '1000000',
  RATE_LIMIT_TOKEN_PER_MINUTE: '1000000',
}

const timed = async (url: string, init?: RequestInit) => {
  const started = Date.now()
  const res = await fetch(url, init)
  const body = await res.text()
  return { status: res.status, body: body ? JSON.parse(body) : null, ms: Date.now() - started }
}

describe('fault: upstream SERVICE_SERVER_BASE_URL hangs', () => {
  let db: TestDatabase
  let service: ServiceProcess
  let upstream: Server
  const sockets = new Set<Socket>()
  afterAll(async () => {
    await service?.stop('SIGKILL')
    for (const socket of sockets) socket.destroy()
    await new Promise((r) => upstream?.close(r))
    await db?.drop()
  })

  it('answers /readyz 503 within 1.5 s while /livez and the API stay unaffected', async () => {
    // Accepts connections and never answers a byte.
    upstream = createServer((socket) => {
      sockets.add(socket)
      socket.on('error', () => undefined)
    })
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r))
    db = await freshDatabase('sqlite')
    service = await startServiceProcess({
      ...db.env,
      ...BASE_ENV,
      SERVICE_SERVER_BASE_URL: `http://127.0.0.1:${(upstream.address() as { port: number }).port}`,
    })
    const [ready, ...others] = await Promise.all([
      timed(`${service.baseUrl}/readyz`),
      ...Array.from({ length: 10 }, () => timed(`${service.baseUrl}/livez`)),
      timed(`${service.baseUrl}${P}/auth/token`, { method: 'POST', headers: { 'x-api-key': KEY, 'x-tenant': TENANT } }),
    ])
    expect(ready.status).toBe(503)
    expect(ready.body).toEqual({ message: false, checks: { database: 'ok', upstream: 'timeout' } })
    expect(ready.ms).toBeLessThan(1500)
    for (const res of others) {
      expect(res.status).toBe(200)
      expect(res.ms).toBeLessThan(500)
    }
    // Repeated probes do not pile up: each gives up on its own.
    const again = await Promise.all(Array.from({ length: 5 }, () => timed(`${service.baseUrl}/readyz`)))
    for (const res of again) expect(res.ms).toBeLessThan(1500)
  }, 20_000)
})

describe.skipIf(!REDIS_URL)(
  `fault: Redis unreachable mid-run${REDIS_URL ? '' : ' — skipped: REDIS_URL is not set'}`,
  () => {
    let db: TestDatabase
    let proxy: TcpProxy
    let service: ServiceProcess
    afterEach(async () => {
      await service?.stop('SIGKILL')
      await proxy?.close()
      await db?.drop()
    })

    it('keeps answering tokens, reads, creates and idempotent retries when Redis is cut, stalls and returns', async () => {
      const target = new URL(REDIS_URL!)
      proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) })
      const viaProxy = new URL(REDIS_URL!)
      viaProxy.hostname = '127.0.0.1'
      viaProxy.port = String(proxy.port)
      db = await freshDatabase('sqlite')
      service = await startServiceProcess({ ...db.env, ...BASE_ENV, REDIS_URL: viaProxy.toString() })
      const base = `${service.baseUrl}${P}`

      let round = 0
      const failures: string[] = []
      const exercise = async () => {
        round++
        const token = await timed(`${base}/auth/token`, {
          method: 'POST',
          headers: { 'x-api-key': KEY, 'x-tenant': TENANT },
        })
        if (token.status !== 200) return void failures.push(`token ${token.status}`)
        const auth = { authorization: `Bearer ${token.body.access_token}`, 'content-type': 'application/json' }
        const body = JSON.stringify({ name: `redis round ${round}` })
        const headers = { ...auth, 'idempotency-key': `round-${round}` }
        const first = await timed(`${base}/use_cases`, { method: 'POST', headers, body })
        const retry = await timed(`${base}/use_cases`, { method: 'POST', headers, body })
        const read = await timed(`${base}/use_cases?page_limit=5`, { headers: auth })
        if (first.status !== 201) failures.push(`create ${first.status}`)
        if (retry.status !== 201 || retry.body?.id !== first.body?.id) failures.push(`retry ${retry.status}`)
        if (read.status !== 200) failures.push(`read ${read.status}`)
        for (const res of [token, first, retry, read]) if (res.ms > 2500) failures.push(`slow ${res.ms} ms`)
      }

      await exercise()
      proxy.cut('reset')
      for (let i = 0; i < 3; i++) await exercise()
      proxy.restore()
      await new Promise((r) => setTimeout(r, 300))
      proxy.cut('blackhole')
      for (let i = 0; i < 2; i++) await exercise()
      proxy.restore()
      for (let i = 0; i < 2; i++) await exercise()
      expect(failures).toEqual([])
      expect((await timed(`${service.baseUrl}/livez`)).status).toBe(200)
      // Every round created exactly one use case, retries included.
      const token = (
        await timed(`${base}/auth/token`, { method: 'POST', headers: { 'x-api-key': KEY, 'x-tenant': TENANT } })
      ).body.access_token
      const list = await timed(`${base}/use_cases?q=redis%20round&page_limit=100`, {
        headers: { authorization: `Bearer ${token}` },
      })
      expect(list.body.items).toHaveLength(round)
    }, 25_000)
  },
)
