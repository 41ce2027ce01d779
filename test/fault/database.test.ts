import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshDatabase, POSTGRES_URL, type TestDatabase } from '../helpers/harness.js'
import { type ServiceProcess, startServiceProcess } from '../helpers/process.js'
import { type CutMode, startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js'

// Invariant 5: 5xx only when a dependency is down, and then a quick 503, not a hang or a crash.
// PostgreSQL is reached through a proxy the test cuts and restores; the service is never restarted.

const P = '/api/v1/integration'
const TENANT = 'dbfault'
const KEY = 'sk_database_fault_admin_key_0123456789abcdefghijkl'

describe.skipIf(!POSTGRES_URL)(
  `fault: PostgreSQL unreachable${POSTGRES_URL ? '' : ' — skipped: DATABASE_URL does not point at PostgreSQL'}`,
  () => {
    let db: TestDatabase
    let proxy: TcpProxy
    let service: ServiceProcess
    let token: string

    beforeAll(async () => {
      db = await freshDatabase('postgres')
      const target = new URL(POSTGRES_URL!)
      proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) })
      const viaProxy = new URL(db.env.DATABASE_URL)
      viaProxy.hostname = '127.0.0.1'
      viaProxy.port = String(proxy.port)
      service = await startServiceProcess({
        DATABASE_URL: viaProxy.toString(),
        SERVICE_JWT_SECRET: 'database-fault-secret-0123456789abcdefgh',
        SERVICE_API_KEY: KEY,
        SERVICE_TENANT: TENANT,
        SERVICE_STARTER_LIBRARY: 'false',
        RATE_LIMIT_PER_MINUTE: '1000000',
      })
      const res = await fetch(`${service.baseUrl}${P}/auth/token`, {
        method: 'POST',
        headers: { 'x-api-key': KEY, 'x-tenant': TENANT },
      })
      token = ((await res.json()) as { access_token: string }).access_token
    }, 30_000)
    afterAll(async () => {
      await service?.stop('SIGKILL')
      await proxy?.close()
      await db?.drop()
    })

    const timed = async (path: string, init: RequestInit = {}) => {
      const started = Date.now()
      const res = await fetch(`${service.baseUrl}${path}`, {
        ...init,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...init.headers },
      })
      const text = await res.text()
      return {
        status: res.status,
        type: res.headers.get('content-type'),
        body: text ? JSON.parse(text) : null,
        ms: Date.now() - started,
      }
    }
    const create = (name: string) => timed(`${P}/use_cases`, { method: 'POST', body: JSON.stringify({ name }) })

    for (const mode of ['reset', 'blackhole'] as CutMode[]) {
      it(`answers 503 quickly while the database is cut (${mode}), keeps /livez, and recovers without a restart`, async () => {
        expect((await create(`before ${mode}`)).status).toBe(201)
        proxy.cut(mode)

        const during = await Promise.all([
          timed(`${P}/use_cases`),
          create(`during ${mode}`),
          timed(`${P}/audit_logs/query`, { method: 'POST', body: '{}' }),
          timed(`${P}/models`),
        ])
        for (const res of during) {
          expect(res.status).toBe(503)
          expect(res.type).toContain('application/problem+json')
          expect(res.body).toMatchObject({ status: 503, code: 'unavailable' })
          expect(JSON.stringify(res.body)).not.toMatch(/select|insert|ECONN|timeout exceeded/i)
          expect(res.ms).toBeLessThan(3000)
        }
        const live = await timed('/livez')
        expect(live.status).toBe(200)
        expect(live.ms).toBeLessThan(200)
        const ready = await timed('/readyz')
        expect(ready.status).toBe(503)
        expect(ready.body.checks.database).not.toBe('ok')
        expect(ready.ms).toBeLessThan(1500)

        proxy.restore()
        const deadline = Date.now() + 10_000
        let recovered = await create(`after ${mode}`)
        while (recovered.status !== 201 && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 200))
          recovered = await create(`after ${mode}`)
        }
        expect(recovered.status).toBe(201)
        expect((await timed('/readyz')).status).toBe(200)
        // Nothing half-written: the failed create is absent, and its audit record with it.
        const names = (await timed(`${P}/use_cases?q=${mode}`)).body.items.map((u: { name: string }) => u.name)
        expect(names.sort()).toEqual([`after ${mode}`, `before ${mode}`])
        const audits = (
          await timed(`${P}/audit_logs/query`, {
            method: 'POST',
            body: JSON.stringify({ resource_type: ['use_case'], q: mode }),
          })
        ).body.items
        expect(audits).toHaveLength(2)
      }, 25_000)
    }
  },
)
