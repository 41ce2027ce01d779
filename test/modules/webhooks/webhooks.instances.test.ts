import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../../src/app.js'
import { closeDeps, createDeps, createLogger, openDatabase } from '../../../src/main.js'
import type { Config } from '../../../src/config.js'
import type { DialectName } from '../../../src/db/create-db.js'
import {
  describeEachDialect,
  freshDatabase,
  POSTGRES_URL,
  PREFIX,
  REDIS_URL,
  startTestApp,
  type TestApp,
  type TestDatabase,
} from '../../helpers/harness.js'
import { type ServiceProcess, startServiceProcess } from '../../helpers/process.js'
import { ok, type Receiver, startReceiver } from '../../helpers/receiver.js'

const createdIds = (r: Receiver) =>
  r.received.filter((e) => e.json.type === 'use_case.created').map((e) => e.json.id as string)

interface Instance {
  app: FastifyInstance
  close(): Promise<void>
}

/** Another instance of the service on `config`'s database, ready, with webhook delivery on. */
async function deliveringInstance(config: Config): Promise<Instance> {
  const own = { ...config, webhookDelivery: true }
  const log = createLogger(own)
  const deps = await createDeps(own, log, openDatabase(own, log))
  const app = await buildApp(deps)
  await app.ready()
  return {
    app,
    async close() {
      await app.close()
      await closeDeps(deps)
    },
  }
}

/**
 * For a suite: a test app on `dialect` with `env` (private webhook targets allowed), a second instance with delivery
 * on over the same database (started with it, or by the test through `startSecond`) and a receiver; all closed after.
 */
function instancesOnOneDatabase(dialect: DialectName, env: Record<string, string>, secondAtStart: boolean) {
  const suite = {} as {
    app: TestApp
    second: Instance | undefined
    receiver: Receiver
    startSecond(): Promise<Instance>
  }
  suite.startSecond = async () => (suite.second = await deliveringInstance(suite.app.config))
  beforeAll(async () => {
    suite.app = await startTestApp(dialect, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', ...env })
    if (secondAtStart) await suite.startSecond()
    suite.receiver = await startReceiver()
  })
  afterAll(async () => {
    await suite.second?.close()
    await suite.app?.close()
    await suite.receiver?.close()
  })
  return suite
}

describe('webhook delivery survives kill -9 [sqlite]', () => {
  let db: TestDatabase
  let service: ServiceProcess
  let receiver: Receiver
  const key = `sk_webhook_crash_${Date.now()}_abcdefghijklmnopqrstuv`
  const env = (database: TestDatabase) => ({
    ...database.env,
    SERVICE_JWT_SECRET: 'crash-test-secret-that-is-long-enough-0123',
    SERVICE_API_KEY: key,
    SERVICE_TENANT: 'acme',
    SERVICE_STARTER_LIBRARY: 'false',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    RATE_LIMIT_PER_MINUTE: '100000',
  })
  const call = async (method: string, path: string, token: string, body?: unknown) => {
    const res = await fetch(`${service.baseUrl}${PREFIX}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    return { status: res.status, body: await res.json() }
  }

  beforeAll(async () => {
    db = await freshDatabase('sqlite')
    receiver = await startReceiver(() => undefined)
  })
  afterAll(async () => {
    await service?.stop('SIGKILL')
    await receiver?.close()
    await db?.drop()
  })

  it('delivers every event pending at the crash after the restart', async () => {
    service = await startServiceProcess(env(db))
    const token = (
      await (
        await fetch(`${service.baseUrl}${PREFIX}/auth/token`, {
          method: 'POST',
          headers: { 'x-api-key': key, 'x-tenant': 'acme' },
        })
      ).json()
    ).access_token
    expect(
      (await call('POST', '/webhook_endpoints', token, { url: receiver.url, events: ['use_case.created'] })).status,
    ).toBe(201)
    const expected: string[] = []
    for (let i = 0; i < 20; i++) {
      const created = await call('POST', '/use_cases', token, { name: `Crash ${i}` })
      expect(created.status).toBe(201)
      const audit = await call('GET', `/audit_logs?resource_id=${created.body.id}`, token)
      expected.push(`evt_${audit.body.items[0].id}`)
    }
    // Some sends are in flight to the hanging receiver (leased), the rest queued or not yet fanned out.
    await receiver.until((got) => got.length > 0)
    await service.stop('SIGKILL')
    // What reached the receiver unanswered counts for nothing: every event must arrive again and be acknowledged.
    receiver.received.length = 0
    receiver.behave(ok)
    service = await startServiceProcess(env(db))
    // Leases of the dead process run out (15 s), then those are sent again.
    await receiver.until(() => expected.every((id) => createdIds(receiver).includes(id)), 30_000)
  }, 60_000)
})

describe.skipIf(!POSTGRES_URL)(
  `two instances on one PostgreSQL database deliver each event once${POSTGRES_URL ? '' : ' — skipped: needs DATABASE_URL (PostgreSQL)'}`,
  () => {
    const suite = instancesOnOneDatabase('postgres', {}, true)

    it('sends every one of 200 events exactly once', async () => {
      const { app: t, second, receiver } = suite
      const token = await t.token('acme', 'admin')
      const headers = { authorization: `Bearer ${token}` }
      const created = await t.app.inject({
        method: 'POST',
        url: `${PREFIX}/webhook_endpoints`,
        headers,
        payload: { url: receiver.url, events: ['use_case.created'] },
      })
      expect(created.statusCode).toBe(201)
      // Ten writers at a time, alternating between the instances.
      for (let batch = 0; batch < 20; batch++) {
        const writes = Array.from({ length: 10 }, (_v, i) =>
          (i % 2 ? second!.app : t.app).inject({
            method: 'POST',
            url: `${PREFIX}/use_cases`,
            headers,
            payload: { name: `Twin ${batch}-${i}` },
          }),
        )
        for (const res of await Promise.all(writes)) expect(res.statusCode, res.body).toBe(201)
      }
      await receiver.until((got) => got.length >= 200, 20_000)
      await new Promise((r) => setTimeout(r, 1500))
      const ids = createdIds(receiver)
      expect(ids).toHaveLength(200)
      expect(new Set(ids).size).toBe(200)
    }, 60_000)
  },
)

describeEachDialect(
  'an instance with WEBHOOK_DELIVERY=false serves the API and leaves its events to one that delivers',
  (dialect) => {
    const suite = instancesOnOneDatabase(dialect, { WEBHOOK_DELIVERY: 'false' }, false)

    it('sends nothing itself; an instance started later on the same database sends every event once', async () => {
      const { app: apiOnly, receiver } = suite
      expect(apiOnly.config.webhookDelivery).toBe(false)
      const call = apiOnly.as('acme', 'admin')
      const endpoint = await call({
        method: 'POST',
        url: `${PREFIX}/webhook_endpoints`,
        payload: { url: receiver.url, events: ['use_case.created'] },
      })
      expect(endpoint.statusCode).toBe(201)
      for (let i = 0; i < 10; i++)
        expect(
          (await call({ method: 'POST', url: `${PREFIX}/use_cases`, payload: { name: `API only ${i}` } })).statusCode,
        ).toBe(201)
      // Long enough for a delivering instance to have sent them several times over (its quiet turns are 50 ms apart).
      await new Promise((r) => setTimeout(r, 1500))
      expect(receiver.received).toHaveLength(0)
      const waiting = await call({ method: 'GET', url: `${PREFIX}/webhook_endpoints/${endpoint.json().id}/deliveries` })
      expect(waiting.json().items).toEqual([])

      await suite.startSecond()
      await receiver.until((got) => got.length >= 10, 10_000)
      await new Promise((r) => setTimeout(r, 500))
      const ids = createdIds(receiver)
      expect(ids).toHaveLength(10)
      expect(new Set(ids).size).toBe(10)
      const delivered = await call({
        method: 'GET',
        url: `${PREFIX}/webhook_endpoints/${endpoint.json().id}/deliveries?status=succeeded`,
      })
      expect(delivered.json().items).toHaveLength(10)
    }, 30_000)
  },
)

describe.skipIf(!(POSTGRES_URL && REDIS_URL))(
  `an endpoint made and writes on an API-only instance wake the delivering one through Redis${POSTGRES_URL && REDIS_URL ? '' : ' — skipped: needs PostgreSQL and Redis'}`,
  () => {
    const suite = instancesOnOneDatabase('postgres', { WEBHOOK_DELIVERY: 'false', REDIS_URL: REDIS_URL! }, true)

    it('sends each event within a second, from the first one after the endpoint is made, where reading the log and the endpoints would take up to five', async () => {
      const { app: apiOnly, receiver } = suite
      const call = apiOnly.as('acme', 'admin')
      // The delivering instance read the endpoints as it started (none then), and reads them again every 5 s with
      // Redis: the first event arriving within 1 s means the endpoint's notice reached it; each next one, a commit's.
      expect(
        (
          await call({
            method: 'POST',
            url: `${PREFIX}/webhook_endpoints`,
            payload: { url: receiver.url, events: ['use_case.created'] },
          })
        ).statusCode,
      ).toBe(201)
      for (let i = 0; i < 3; i++) {
        expect(
          (await call({ method: 'POST', url: `${PREFIX}/use_cases`, payload: { name: `Woken ${i}` } })).statusCode,
        ).toBe(201)
        await receiver.until((got) => got.length === i + 1, 1000)
      }
      expect(createdIds(receiver)).toHaveLength(3)
    }, 30_000)
  },
)
