import { spawn } from 'node:child_process'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { KEY_STATUS_TTL_MS } from '../../src/modules/api-keys/key-status.js'
import { freshDatabase, POSTGRES_URL, REDIS_URL, type TestDatabase } from '../helpers/harness.js'
import { CLI, type ServiceProcess, startServiceProcess } from '../helpers/process.js'

const P = '/api/v1/integration'
const ready = Boolean(POSTGRES_URL && REDIS_URL)

describe.skipIf(!ready)(
  `two service processes sharing PostgreSQL and Redis${ready ? '' : ' — skipped: needs DATABASE_URL (PostgreSQL) and REDIS_URL'}`,
  () => {
    let db: TestDatabase
    let a: ServiceProcess
    let b: ServiceProcess
    const tenant = `multi-${Date.now().toString(36)}`
    const adminKey = `sk_multi_instance_admin_${Date.now()}_abcdefghijklmnop`
    let adminToken: string
    let env: Record<string, string>

    const call = async (service: ServiceProcess, method: string, path: string, token: string, body?: unknown) => {
      const res = await fetch(`${service.baseUrl}${P}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      })
      const text = await res.text()
      return { status: res.status, body: text ? JSON.parse(text) : null }
    }
    const tokenFrom = async (service: ServiceProcess, key: string) => {
      const res = await fetch(`${service.baseUrl}${P}/auth/token`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'x-tenant': tenant },
      })
      return (await res.json()).access_token as string
    }

    beforeAll(async () => {
      db = await freshDatabase('postgres')
      env = {
        ...db.env,
        REDIS_URL: REDIS_URL!,
        SERVICE_JWT_SECRET: 'shared-secret-for-both-instances-0123456789',
        SERVICE_API_KEY: adminKey,
        SERVICE_TENANT: tenant,
        SERVICE_STARTER_LIBRARY: 'false',
        RATE_LIMIT_PER_MINUTE: '300',
      }
      ;[a, b] = await Promise.all([startServiceProcess(env), startServiceProcess(env)])
      adminToken = await tokenFrom(a, adminKey)
    }, 60_000)
    afterAll(async () => {
      await Promise.all([a?.stop(), b?.stop()])
      await db?.drop()
    })

    it('accepts a token from A on B', async () => {
      expect((await call(b, 'GET', '/system/ping', adminToken)).status).toBe(200)
    })

    it('shares the rate limit: A and B together allow the limit, not twice it', async () => {
      const key = (await call(a, 'POST', '/api_keys', adminToken, { name: 'limited', role: 'read' })).body.key
      const token = await tokenFrom(a, key)
      let ok = 0
      let limited = 0
      for (let i = 0; i < 320; i++) {
        const status = (await call(i % 2 ? b : a, 'GET', '/system/ping', token)).status
        if (status === 200) ok++
        else if (status === 429) limited++
      }
      expect(ok).toBe(300)
      expect(limited).toBe(20)
    }, 60_000)

    it('makes a key revoked through A fail on B within 5 s', async () => {
      const created = (await call(a, 'POST', '/api_keys', adminToken, { name: 'doomed', role: 'read' })).body
      const token = await tokenFrom(b, created.key)
      expect((await call(b, 'GET', '/system/ping', token)).status).toBe(200)
      expect((await call(a, 'DELETE', `/api_keys/${created.id}`, adminToken)).status).toBe(204)
      const started = Date.now()
      let status = 200
      while (status === 200 && Date.now() - started < 6000) {
        status = (await call(b, 'GET', '/system/ping', token)).status
        if (status === 200) await new Promise((r) => setTimeout(r, 50))
      }
      expect(status).toBe(401)
      expect(Date.now() - started).toBeLessThan(5000)
    })

    it('makes a key revoked with `aigov keys revoke` fail on B at once, through Redis', async () => {
      const created = (await call(a, 'POST', '/api_keys', adminToken, { name: 'revoked from the CLI', role: 'read' }))
        .body
      const token = await tokenFrom(b, created.key)
      expect((await call(b, 'GET', '/system/ping', token)).status).toBe(200)
      // The key's row held while the CLI starts, so the moment its revocation commits is ours to choose.
      const holder = new pg.Client({ connectionString: db.env.DATABASE_URL })
      await holder.connect()
      try {
        await holder.query('begin')
        await holder.query('select 1 from api_keys where id = $1 for update', [created.id])
        const holderPid = (await holder.query('select pg_backend_pid() as pid')).rows[0].pid
        const cli = spawn(process.execPath, [CLI, 'keys', 'revoke', created.id, '--tenant', tenant], {
          env: { PATH: process.env.PATH, ...env },
        })
        let output = ''
        cli.stdout.on('data', (d) => (output += d))
        cli.stderr.on('data', (d) => (output += d))
        const exited = new Promise<number | null>((resolve) => cli.once('exit', resolve))
        for (let waiting = 0; waiting === 0; ) {
          await new Promise((r) => setTimeout(r, 50))
          expect(cli.exitCode, output).toBeNull()
          // Activity is read once per transaction unless the snapshot is cleared.
          await holder.query('select pg_stat_clear_snapshot()')
          waiting = Number(
            (
              await holder.query('select count(*) as n from pg_stat_activity where $1 = any(pg_blocking_pids(pid))', [
                holderPid,
              ])
            ).rows[0].n,
          )
        }
        // B asks the database afresh (its answer is older than KEY_STATUS_TTL_MS) and trusts "valid" for that long.
        await new Promise((r) => setTimeout(r, KEY_STATUS_TTL_MS))
        expect((await call(b, 'GET', '/system/ping', token)).status).toBe(200)
        await holder.query('commit')
        const released = Date.now()
        let status = 200
        while (status === 200 && Date.now() - released < KEY_STATUS_TTL_MS * 2) {
          status = (await call(b, 'GET', '/system/ping', token)).status
          if (status === 200) await new Promise((r) => setTimeout(r, 20))
        }
        const refusedAfter = Date.now() - released
        expect(await exited, output).toBe(0)
        expect(output).toContain(`revoked ${created.id}`)
        expect(status).toBe(401)
        // Well within the time B would otherwise keep trusting its answer: only the message can have told it.
        expect(refusedAfter).toBeLessThan(KEY_STATUS_TTL_MS / 2)
      } finally {
        await holder.end()
      }
    }, 30_000)

    it('continues a cursor from A on B', async () => {
      for (let i = 0; i < 5; i++) await call(i % 2 ? a : b, 'POST', '/use_cases', adminToken, { name: `paged ${i}` })
      const first = (await call(a, 'GET', '/use_cases?page_limit=3&q=paged', adminToken)).body
      const second = (
        await call(b, 'GET', `/use_cases?page_limit=3&q=paged&page_after=${first.pagination.next_cursor}`, adminToken)
      ).body
      expect([...first.items, ...second.items].map((u: { name: string }) => u.name)).toEqual([
        'paged 0',
        'paged 1',
        'paged 2',
        'paged 3',
        'paged 4',
      ])
    })

    it('answers a read on B with a write just made on A, though B had the page in its read cache', async () => {
      const path = '/use_cases?q=fresh&page_limit=100'
      const names = async (service: ServiceProcess) =>
        (await call(service, 'GET', path, adminToken)).body.items.map((u: { name: string }) => u.name)
      expect(await names(b)).toEqual([])
      expect(await names(b)).toEqual([])
      for (let i = 0; i < 3; i++) {
        expect((await call(a, 'POST', '/use_cases', adminToken, { name: `fresh ${i}` })).status).toBe(201)
        expect(await names(b)).toEqual(Array.from({ length: i + 1 }, (_v, j) => `fresh ${j}`))
      }
    })

    it('gives exactly one 201 and 49 × 422 already_exists for 50 concurrent creates of one name over A and B', async () => {
      const results = await Promise.all(
        Array.from({ length: 50 }, (_v, i) =>
          call(i % 2 ? a : b, 'POST', '/use_cases', adminToken, { name: 'Contended name' }),
        ),
      )
      const statuses = results.map((r) => r.status).sort()
      expect(statuses.filter((s) => s === 201)).toHaveLength(1)
      expect(statuses.filter((s) => s === 422)).toHaveLength(49)
      const winner = results.find((r) => r.status === 201)!.body.id
      expect(new Set(results.filter((r) => r.status === 422).map((r) => r.body.existing_id))).toEqual(new Set([winner]))
    })

    it('keeps the audit hash chain valid under concurrent writes from both instances', async () => {
      const results = await Promise.all(
        Array.from({ length: 40 }, (_v, i) =>
          call(i % 2 ? a : b, 'POST', '/use_cases', adminToken, { name: `parallel ${i}` }),
        ),
      )
      expect(results.map((r) => r.status)).toEqual(Array(40).fill(201))
      const verdict = (await call(b, 'GET', '/audit_logs/verify', adminToken)).body
      expect(verdict).toMatchObject({ ok: true, first_bad_id: null })
      expect(verdict.checked).toBeGreaterThan(40)
    })
  },
)

describe('SERVICE_WORKERS runs a cluster on one machine', () => {
  let db: TestDatabase
  let cluster: ServiceProcess
  beforeAll(async () => {
    db = await freshDatabase('sqlite')
    cluster = await startServiceProcess({
      ...db.env,
      SERVICE_WORKERS: '2',
      SERVICE_API_KEY: 'sk_cluster_test_key_0123456789abcdef',
      SERVICE_STARTER_LIBRARY: 'false',
    })
  }, 60_000)
  afterAll(async () => {
    await cluster?.stop()
    await db.drop()
  })

  it('serves concurrent writes from both workers on one SQLite file', async () => {
    const token = (
      await (
        await fetch(`${cluster.baseUrl}${P}/auth/token`, {
          method: 'POST',
          headers: { 'x-api-key': 'sk_cluster_test_key_0123456789abcdef', 'x-tenant': 'default' },
        })
      ).json()
    ).access_token
    const results = await Promise.all(
      Array.from({ length: 30 }, (_v, i) =>
        fetch(`${cluster.baseUrl}${P}/use_cases`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ name: `clustered ${i}` }),
        }).then((r) => r.status),
      ),
    )
    expect(results).toEqual(Array(30).fill(201))
    const verdict = await (
      await fetch(`${cluster.baseUrl}${P}/audit_logs/verify`, { headers: { authorization: `Bearer ${token}` } })
    ).json()
    expect(verdict.ok).toBe(true)
  })
})
