import { Webhook } from 'standardwebhooks'
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest'
import { AuditFeed } from '../../../src/modules/events/events.feed.js'
import { encryptSecret, webhookEncryptionKey } from '../../../src/modules/webhooks/webhook-secrets.js'
import {
  BUSY_RATE,
  PER_ENDPOINT,
  PER_TENANT_SENDS,
  WebhookDispatcher,
} from '../../../src/modules/webhooks/webhooks.delivery.js'
import { ENDPOINTS_PER_TENANT, newDelivery } from '../../../src/modules/webhooks/webhooks.service.js'
import { backdatedId } from '../../../src/shared/ids.js'
import { eventually } from '../../helpers/eventually.js'
import { describeEachDialect, REDIS_URL, startTestApp, type TestApp } from '../../helpers/harness.js'
import { ok, type Received, type Receiver, startReceiver } from '../../helpers/receiver.js'

const headersOf = (r: Received) => Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k, String(v)]))

describeEachDialect('webhooks', (dialect) => {
  let t: TestApp
  let admin: ReturnType<TestApp['as']>
  const receivers: Receiver[] = []
  const receiver = async (...args: Parameters<typeof startReceiver>) => {
    const r = await startReceiver(...args)
    receivers.push(r)
    return r
  }
  const endpoint = async (url: string, events = ['*'], tenant = 'acme') => {
    const res = await t.as(tenant, 'admin')({ method: 'POST', url: '/webhook_endpoints', payload: { url, events } })
    expect(res.statusCode, res.body).toBe(201)
    return res.json() as { id: string; secret: string }
  }
  const useCase = async (name: string) => {
    const res = await admin({ method: 'POST', url: '/use_cases', payload: { name } })
    expect(res.statusCode, res.body).toBe(201)
    return res.json() as { id: string }
  }
  const deliveries = async (endpointId: string, query = '') =>
    (await admin({ method: 'GET', url: `/webhook_endpoints/${endpointId}/deliveries${query}` })).json().items as any[]

  // The API's load, as the dispatcher sees it: the loop runs code nearly all the time, with a turn between chunks.
  const busyFor = async (ms: number) => {
    for (const end = Date.now() + ms; Date.now() < end; ) {
      for (const chunk = Date.now() + 40; Date.now() < chunk; );
      await new Promise((resolve) => setImmediate(resolve))
    }
  }

  beforeAll(async () => {
    t = await startTestApp(dialect, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' })
    admin = t.as('acme', 'admin')
  })
  afterEach(async () => {
    // Endpoints from one test must not receive the next test's events.
    for (const e of (await admin({ method: 'GET', url: '/webhook_endpoints?page_limit=100' })).json().items) {
      await admin({ method: 'DELETE', url: `/webhook_endpoints/${e.id}` })
    }
    await Promise.all(receivers.splice(0).map((r) => r.close()))
  })
  afterAll(async () => t?.close())

  it('creates, reads, updates and deletes endpoints; the secret is shown once and stored encrypted', async () => {
    const created = await admin({
      method: 'POST',
      url: '/webhook_endpoints',
      payload: { url: 'https://hooks.example.com/x', description: 'Jira', events: ['use_case.*'] },
    })
    expect(created.statusCode).toBe(201)
    const body = created.json()
    expect(body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expect(created.headers.location).toBe(`/api/v1/integration/webhook_endpoints/${body.id}`)
    expect(body).toMatchObject({
      url: 'https://hooks.example.com/x',
      description: 'Jira',
      events: ['use_case.*'],
      enabled: true,
      disabled_reason: null,
    })
    const got = await admin({ method: 'GET', url: `/webhook_endpoints/${body.id}` })
    expect(got.json()).not.toHaveProperty('secret')
    expect(got.body).not.toContain(body.secret)
    const patched = await admin({
      method: 'PATCH',
      url: `/webhook_endpoints/${body.id}`,
      payload: { events: ['*'], enabled: false },
    })
    expect(patched.json()).toMatchObject({ events: ['*'], enabled: false })
    const listed = await admin({ method: 'GET', url: '/webhook_endpoints' })
    expect(listed.json().items.map((e: { id: string }) => e.id)).toContain(body.id)
    // Neither the database nor the audit log holds the secret in the clear.
    const stored = await t.deps.database.db
      .selectFrom('webhook_endpoints')
      .select('secret')
      .where('id', '=', body.id)
      .executeTakeFirstOrThrow()
    expect(stored.secret).not.toContain(body.secret.slice(6))
    const audit = await t.deps.database.db
      .selectFrom('audit_logs')
      .selectAll()
      .where('resource_id', '=', body.id)
      .execute()
    expect(audit.map((a) => a.action)).toEqual(['webhook_endpoint.created', 'webhook_endpoint.updated'])
    expect(JSON.stringify(audit)).not.toContain(body.secret.slice(6))
    expect((await admin({ method: 'DELETE', url: `/webhook_endpoints/${body.id}` })).statusCode).toBe(204)
    expect((await admin({ method: 'GET', url: `/webhook_endpoints/${body.id}` })).statusCode).toBe(404)
  })

  it('refuses bad input, other roles and other tenants', async () => {
    const bad = async (payload: Record<string, unknown>, field: string) => {
      const res = await admin({ method: 'POST', url: '/webhook_endpoints', payload })
      expect(res.statusCode, res.body).toBe(422)
      expect(JSON.stringify(res.json().errors)).toContain(field)
    }
    await bad({ url: 'ftp://example.com/x', events: ['*'] }, 'url')
    await bad({ url: 'not a url', events: ['*'] }, 'url')
    await bad({ url: 'https://user:pw@example.com/x', events: ['*'] }, 'url')
    await bad({ url: 'https://example.com/x', events: [] }, 'events')
    await bad({ url: 'https://example.com/x', events: ['use_case.*.x'] }, 'events')
    await bad({ url: 'https://example.com/x', events: ['*'], secret: 'mine' }, 'secret')
    const long = `https://hooks.example.com/${'x'.repeat(2000)}`
    const accepted = await admin({ method: 'POST', url: '/webhook_endpoints', payload: { url: long, events: ['*'] } })
    expect(accepted.statusCode, accepted.body).toBe(201)
    await admin({ method: 'DELETE', url: `/webhook_endpoints/${accepted.json().id}` })
    const writer = t.as('acme', 'write')
    expect((await writer({ method: 'GET', url: '/webhook_endpoints' })).statusCode).toBe(403)
    const mine = await endpoint('https://hooks.example.com/y')
    const other = t.as('globex', 'admin')
    expect((await other({ method: 'GET', url: `/webhook_endpoints/${mine.id}` })).statusCode).toBe(404)
    expect(
      (await other({ method: 'PATCH', url: `/webhook_endpoints/${mine.id}`, payload: { enabled: false } })).statusCode,
    ).toBe(404)
    expect((await other({ method: 'DELETE', url: `/webhook_endpoints/${mine.id}` })).statusCode).toBe(404)
    expect((await other({ method: 'GET', url: `/webhook_endpoints/${mine.id}/deliveries` })).statusCode).toBe(404)
    expect((await other({ method: 'POST', url: `/webhook_endpoints/${mine.id}/rotate_secret` })).statusCode).toBe(404)
  })

  it(`refuses a tenant's endpoint beyond ${ENDPOINTS_PER_TENANT}, writing nothing, and takes one again after a delete`, async () => {
    const make = (n: number) =>
      admin({
        method: 'POST',
        url: '/webhook_endpoints',
        payload: { url: `http://127.0.0.1:9/hook-${n}`, events: ['*'], enabled: false },
      })
    const made: string[] = []
    for (let n = 0; n < ENDPOINTS_PER_TENANT; n++) {
      const res = await make(n)
      expect(res.statusCode, res.body).toBe(201)
      made.push(res.json().id)
    }
    const auditBefore = (
      await admin({ method: 'GET', url: '/audit_logs?resource_type=webhook_endpoint&sort=-created_at&page_limit=1' })
    ).json().items[0].id
    const refused = await make(ENDPOINTS_PER_TENANT)
    expect(refused.statusCode).toBe(409)
    expect(refused.json()).toMatchObject({
      code: 'conflict',
      detail: expect.stringContaining(`${ENDPOINTS_PER_TENANT} webhook endpoints`),
    })
    expect((await admin({ method: 'GET', url: '/webhook_endpoints?page_limit=100' })).json().items).toHaveLength(
      ENDPOINTS_PER_TENANT,
    )
    expect(
      (
        await admin({ method: 'GET', url: '/audit_logs?resource_type=webhook_endpoint&sort=-created_at&page_limit=1' })
      ).json().items[0].id,
    ).toBe(auditBefore)
    // Another tenant's count is its own.
    const theirs = await t.as(
      'globex',
      'admin',
    )({
      method: 'POST',
      url: '/webhook_endpoints',
      payload: { url: 'http://127.0.0.1:9/theirs', events: ['*'], enabled: false },
    })
    expect(theirs.statusCode, theirs.body).toBe(201)
    await t.as('globex', 'admin')({ method: 'DELETE', url: `/webhook_endpoints/${theirs.json().id}` })
    expect((await admin({ method: 'DELETE', url: `/webhook_endpoints/${made[0]}` })).statusCode).toBe(204)
    expect((await make(ENDPOINTS_PER_TENANT)).statusCode).toBe(201)
  })

  it('delivers matching audit records, signed so that the standardwebhooks library verifies them', async () => {
    const r = await receiver()
    const { id, secret } = await endpoint(r.url, ['use_case.*'])
    await admin({ method: 'POST', url: '/vendors', payload: { name: 'Not subscribed' } })
    const uc = await useCase('Signed event')
    const [event] = await r.until((got) => got.some((e) => e.json.type === 'use_case.created'))
    const payload = new Webhook(secret).verify(event.body, headersOf(event)) as any
    expect(payload).toMatchObject({
      type: 'use_case.created',
      tenant: 'acme',
      data: { resource_id: uc.id, resource: { id: uc.id, name: 'Signed event' } },
    })
    expect(payload.id).toMatch(/^evt_al_/)
    expect(event.headers['webhook-id']).toBe(payload.id)
    expect(Number.isInteger(payload.sequence)).toBe(true)
    // Tampering is detected by the independent verifier.
    expect(() => new Webhook(secret).verify(event.body.replace('Signed', 'Forged'), headersOf(event))).toThrow()
    expect(r.received.every((e) => e.json.type.startsWith('use_case.'))).toBe(true)
    const log = await eventually(async () => {
      const items = await deliveries(id, '?status=succeeded')
      return items.length === 1 && items
    })
    expect(log[0]).toMatchObject({
      event_type: 'use_case.created',
      attempts: 1,
      last_status_code: 200,
      next_attempt_at: null,
      event_id: payload.id,
    })
  })

  it('delivers to a target given by name, resolved for the sending thread', async () => {
    const r = await receiver()
    await endpoint(r.url.replace('127.0.0.1', 'localhost'), ['use_case.created'])
    const uc = await useCase('Sent by name')
    const [event] = await r.until((got) => got.some((e) => e.json.data.resource_id === uc.id))
    expect(event.json.type).toBe('use_case.created')
  })

  it('sends an audit record queued before once, when its endpoint is fanned out from an earlier cursor again', async () => {
    const r = await receiver()
    const { id } = await endpoint(r.url, ['use_case.created'])
    await useCase('Queued once')
    const [first] = await r.until((got) => got.length === 1)
    // As after a crash between queueing and moving the cursor: the next fan-out reads the record again.
    await t.deps.database.db
      .updateTable('webhook_endpoints')
      .set({ cursor_seq: first.json.sequence - 1 })
      .where('id', '=', id)
      .execute()
    await useCase('Queued after')
    await r.until((got) => got.some((e) => e.json.data.resource_name === 'Queued after'))
    // Given time to send a duplicate, none comes.
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(r.received.map((e) => e.json.data.resource_name)).toEqual(['Queued once', 'Queued after'])
    expect(await deliveries(id)).toHaveLength(2)
  })

  it("carries the resource as its GET answers and the audit record as the log's GET does", async () => {
    const r = await receiver()
    await endpoint(r.url, ['use_case.updated', 'model.created', 'vendor.created'])
    const owner = (
      await admin({ method: 'POST', url: '/users', payload: { email: 'events@example.com', name: 'Event owner' } })
    ).json()
    const single = (await admin({ method: 'POST', url: '/custom_fields', payload: { name: 'Ticket' } })).json()
    const multiple = (
      await admin({ method: 'POST', url: '/custom_fields', payload: { name: 'Tags', multiple: true } })
    ).json()
    const uc = await useCase('Governed event')
    const patch = await admin({
      method: 'PATCH',
      url: `/use_cases/${uc.id}`,
      payload: {
        owner: { owner_id: owner.id, owner_type: 'user' },
        custom_fields: [
          { custom_field_id: single.id, value: 'AI-7' },
          { custom_field_id: multiple.id, value: ['b', 'a'] },
        ],
        regions: ['EU'],
      },
    })
    expect(patch.statusCode, patch.body).toBe(200)
    const model = (await admin({ method: 'POST', url: '/models', payload: { name: 'Event model' } })).json()
    const vendor = (await admin({ method: 'POST', url: '/vendors', payload: { name: 'Event vendor' } })).json()
    const got = await r.until((all) => all.length === 3)
    for (const [type, path] of [
      ['use_case.updated', `/use_cases/${uc.id}`],
      ['model.created', `/models/${model.id}`],
      ['vendor.created', `/vendors/${vendor.id}`],
    ]) {
      const event = got.find((e) => e.json.type === type)!.json
      const { resource, ...record } = event.data
      expect(resource).toEqual((await admin({ method: 'GET', url: path })).json())
      expect(record).toEqual((await admin({ method: 'GET', url: `/audit_logs/${record.id}` })).json())
      expect(Object.keys(event)).toEqual(['id', 'type', 'created_at', 'tenant', 'sequence', 'data'])
      expect(Object.keys(event.data).at(-1)).toBe('resource')
    }
    expect(got.find((e) => e.json.type === 'use_case.updated')!.json.data.resource).toMatchObject({
      owner: { owner_id: owner.id, name: 'Event owner' },
      custom_fields: [expect.anything(), expect.anything()],
    })
  })

  it('sends a deleted resource as null and a ping on test', async () => {
    const r = await receiver()
    const { id, secret } = await endpoint(r.url, ['use_case.deleted'])
    const uc = await useCase('Short-lived')
    await admin({ method: 'DELETE', url: `/use_cases/${uc.id}` })
    const [deleted] = await r.until((got) => got.length === 1)
    expect(deleted.json).toMatchObject({ type: 'use_case.deleted', data: { resource_id: uc.id, resource: null } })
    expect((await admin({ method: 'POST', url: `/webhook_endpoints/${id}/test` })).statusCode).toBe(202)
    const got = await r.until((all) => all.some((e) => e.json.type === 'ping'))
    const ping = got.find((e) => e.json.type === 'ping')!
    expect(new Webhook(secret).verify(ping.body, headersOf(ping))).toMatchObject({
      type: 'ping',
      data: { endpoint_id: id },
    })
  })

  it('retries a receiver that fails twice, honouring Retry-After, then succeeds', async () => {
    const r = await receiver((n, _req, res) =>
      n < 2 ? res.writeHead(503, { 'retry-after': '0' }).end() : res.writeHead(204).end(),
    )
    const { id } = await endpoint(r.url, ['use_case.created'])
    await useCase('Flaky receiver')
    await r.until((got) => got.length === 3)
    expect(new Set(r.received.map((e) => e.headers['webhook-id'])).size).toBe(1)
    const [delivery] = await eventually(async () => {
      const items = await deliveries(id)
      return items[0]?.status === 'succeeded' && items
    })
    expect(delivery).toMatchObject({ attempts: 3, last_status_code: 204, last_error: null })
    expect((await admin({ method: 'GET', url: `/webhook_endpoints/${id}` })).json().failing_since).toBeNull()
  })

  it('backs off without Retry-After, marks the endpoint failing, and retries on request', async () => {
    const r = await receiver((_n, _req, res) => res.writeHead(500).end())
    const { id } = await endpoint(r.url, ['use_case.created'])
    const sentAt = Date.now()
    await useCase('Failing receiver')
    const [failed] = await eventually(async () => {
      const items = await deliveries(id, '?event_type=use_case.created')
      return items[0]?.attempts === 1 && items
    })
    expect(failed).toMatchObject({ status: 'pending', last_status_code: 500, last_error: 'the receiver answered 500' })
    const wait = Date.parse(failed.next_attempt_at) - sentAt
    expect(wait).toBeGreaterThanOrEqual(2000)
    expect(wait).toBeLessThanOrEqual(15_000)
    expect((await admin({ method: 'GET', url: `/webhook_endpoints/${id}` })).json().failing_since).not.toBeNull()
    r.behave(ok)
    const retried = await admin({ method: 'POST', url: `/webhook_endpoints/${id}/deliveries/${failed.id}/retry` })
    expect(retried.statusCode).toBe(202)
    await eventually(async () => (await deliveries(id))[0]?.status === 'succeeded')
    expect((await admin({ method: 'GET', url: `/webhook_endpoints/${id}` })).json().failing_since).toBeNull()
    expect(
      (await admin({ method: 'POST', url: `/webhook_endpoints/${id}/deliveries/whd_nope/retry` })).statusCode,
    ).toBe(404)
  })

  it('disables an endpoint that answers 410, with an audit record', async () => {
    const r = await receiver((_n, _req, res) => res.writeHead(410).end())
    const { id } = await endpoint(r.url, ['use_case.created'])
    await useCase('Gone receiver')
    const disabled = await eventually(async () => {
      const e = (await admin({ method: 'GET', url: `/webhook_endpoints/${id}` })).json()
      return !e.enabled && e
    })
    expect(disabled.disabled_reason).toContain('410')
    const audit = (
      await admin({ method: 'GET', url: `/audit_logs?action=webhook_endpoint.disabled&resource_id=${id}` })
    ).json().items
    expect(audit).toHaveLength(1)
    expect(audit[0].actor.type).toBe('system')
    expect((await deliveries(id))[0]).toMatchObject({ status: 'failed', last_status_code: 410 })
  })

  it('disables an endpoint failing for 24 h', async () => {
    const r = await receiver((_n, _req, res) => res.writeHead(502).end())
    const { id } = await endpoint(r.url, ['use_case.created'])
    await t.deps.database.db
      .updateTable('webhook_endpoints')
      .set({ failing_since: new Date(Date.now() - 25 * 3600_000).toISOString() })
      .where('id', '=', id)
      .execute()
    await useCase('Long dead receiver')
    await eventually(async () => !(await admin({ method: 'GET', url: `/webhook_endpoints/${id}` })).json().enabled)
    expect(
      (await admin({ method: 'GET', url: `/audit_logs?action=webhook_endpoint.disabled&resource_id=${id}` })).json()
        .items,
    ).toHaveLength(1)
  })

  it('signs with the old and the new secret after a rotation', async () => {
    const r = await receiver()
    const { id, secret: old } = await endpoint(r.url, ['use_case.created'])
    // A send before the rotation: the secret it decrypted must not outlive the rotation.
    await useCase('Before rotation')
    const [before] = await r.until((got) => got.length === 1)
    expect(String(before.headers['webhook-signature']).split(' ')).toHaveLength(1)
    const rotated = await admin({ method: 'POST', url: `/webhook_endpoints/${id}/rotate_secret` })
    expect(rotated.statusCode).toBe(200)
    const fresh = rotated.json().secret as string
    expect(fresh).not.toBe(old)
    await useCase('After rotation')
    const event = (await r.until((got) => got.length === 2))[1]
    expect(String(event.headers['webhook-signature']).split(' ')).toHaveLength(2)
    expect(new Webhook(fresh).verify(event.body, headersOf(event))).toMatchObject({ type: 'use_case.created' })
    expect(new Webhook(old).verify(event.body, headersOf(event))).toMatchObject({ type: 'use_case.created' })
  })

  it('records a secret it cannot decrypt (the key setting changed) as a failed attempt', async () => {
    const r = await receiver()
    const { id } = await endpoint(r.url, ['use_case.created'])
    const otherKey = webhookEncryptionKey('another-key-material-that-is-32-bytes-long')
    await t.deps.database.db
      .updateTable('webhook_endpoints')
      .set({ secret: encryptSecret(otherKey, 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw') })
      .where('id', '=', id)
      .execute()
    await useCase('Undecryptable')
    const [failed] = await eventually(async () => {
      const items = await deliveries(id)
      return items[0]?.attempts === 1 && items
    })
    expect(failed.last_error).toContain('cannot be decrypted')
    expect(r.received).toHaveLength(0)
  })

  it('keeps the delivery log 30 days', async () => {
    const { id } = await endpoint('https://hooks.example.com/old', ['nothing.matches'])
    const day = 24 * 3600_000
    // Made `idAgeMs` ago and last (re)created `ageMs` ago: a retry gives a delivery a new creation time, not a new id.
    const row = (ageMs: number, idAgeMs = ageMs) => {
      const at = new Date(Date.now() - ageMs).toISOString()
      return {
        ...newDelivery('acme', id, null, 'ping', at),
        id: backdatedId('whd', Date.now() - idAgeMs),
        status: 'succeeded' as const,
        next_attempt_at: null,
      }
    }
    const [old, recent, retried] = [row(31 * day), row(29 * day), row(1 * day, 40 * day)]
    await t.deps.database.db.insertInto('webhook_deliveries').values([old, recent, retried]).execute()
    // A fresh dispatcher cleans up as it starts (then hourly).
    const dispatcher = new WebhookDispatcher(t.deps, async () => new Map(), new AuditFeed(t.deps.database, undefined))
    dispatcher.start()
    try {
      await eventually(async () => (await deliveries(id)).length === 2)
      expect((await deliveries(id)).map((d) => d.id).sort()).toEqual([retried.id, recent.id])
    } finally {
      await dispatcher.stop()
    }
  })

  it('keeps delivering to a fast endpoint while another hangs', async () => {
    const hanging = await receiver(() => undefined)
    const fast = await receiver()
    await endpoint(hanging.url, ['use_case.created'])
    await endpoint(fast.url, ['use_case.created'])
    const count = PER_ENDPOINT + 8
    for (let i = 0; i < count; i++) await useCase(`Busy ${i}`)
    await fast.until((got) => got.length === count, 5000)
    // The hanging endpoint holds a bounded number of sends, never all of them.
    expect(hanging.received.length).toBeLessThanOrEqual(PER_ENDPOINT)
  })

  it('yields to a busy event loop, sending a bounded share of a backlog, and sends the rest once the load ends', async () => {
    const r = await receiver()
    const { id } = await endpoint(r.url, ['use_case.created'])
    await admin({ method: 'PATCH', url: `/webhook_endpoints/${id}`, payload: { enabled: false } })
    const seqOf = async () =>
      Number(
        (
          await t.deps.database.db
            .selectFrom('tenants')
            .select('audit_seq')
            .where('id', '=', 'acme')
            .executeTakeFirstOrThrow()
        ).audit_seq,
      )
    const start = await seqOf()
    const backlog = 3 * BUSY_RATE
    for (let i = 0; i < backlog; i++) await useCase(`Backlog ${i}`)
    await busyFor(1500)
    // Enabled now, with its cursor where the backlog starts: every one of those records is still to be sent.
    await admin({ method: 'PATCH', url: `/webhook_endpoints/${id}`, payload: { enabled: true } })
    await t.deps.database.db.updateTable('webhook_endpoints').set({ cursor_seq: start }).where('id', '=', id).execute()
    const seconds = 1.5
    await busyFor(seconds * 1000)
    const cursor = Number(
      (
        await t.deps.database.db
          .selectFrom('webhook_endpoints')
          .select('cursor_seq')
          .where('id', '=', id)
          .executeTakeFirstOrThrow()
      ).cursor_seq,
    )
    // Some of it, never starved; at most BUSY_RATE a second (and a turn's rounding), where an idle loop takes 500 a turn.
    expect(cursor).toBeGreaterThan(start)
    expect(cursor - start).toBeLessThanOrEqual(BUSY_RATE * seconds + 50)
    // What an operator sees meanwhile: this instance yielding, and the events still to be queued.
    const gauge = async (name: string) =>
      Number(/ (\S+)$/.exec(await t.deps.metrics.registry.getSingleMetricAsString(name))?.[1])
    expect(await gauge('aigov_webhook_delivery_yielding')).toBe(1)
    const behind = await gauge('aigov_webhook_events_behind')
    // Sending resumes once the load ends, so compare with the cursor read after the gauge (a cursor only moves on).
    const cursorAfter = Number(
      (
        await t.deps.database.db
          .selectFrom('webhook_endpoints')
          .select('cursor_seq')
          .where('id', '=', id)
          .executeTakeFirstOrThrow()
      ).cursor_seq,
    )
    expect(behind).toBeGreaterThanOrEqual(start + backlog - cursorAfter)
    await r.until((got) => got.length === backlog, 10_000)
    expect(new Set(r.received.map((got) => got.json.id)).size).toBe(backlog)
    await eventually(
      async () =>
        (await gauge('aigov_webhook_events_behind')) === 0 && (await gauge('aigov_webhook_delivery_yielding')) === 0,
    )
    // Three seconds of busy loop and a backlog created one by one: more than the default on a loaded machine.
  }, 60_000)

  it('holds a yielding turn to its budget however many endpoints are behind, serving them in turn', async () => {
    const r = await receiver()
    const tenants = ['acme', 'globex']
    const ids: string[] = []
    for (const tenant of tenants) {
      for (let n = 0; n < ENDPOINTS_PER_TENANT; n++) {
        const res = await t.as(
          tenant,
          'admin',
        )({
          method: 'POST',
          url: '/webhook_endpoints',
          payload: { url: r.url, events: ['use_case.created'], enabled: false },
        })
        expect(res.statusCode, res.body).toBe(201)
        ids.push(res.json().id)
      }
    }
    const db = t.deps.database.db
    const starts = new Map(
      (await db.selectFrom('tenants').select(['id', 'audit_seq']).where('id', 'in', tenants).execute()).map((row) => [
        row.id,
        Number(row.audit_seq),
      ]),
    )
    const perTenant = 5
    for (const tenant of tenants) {
      for (let i = 0; i < perTenant; i++)
        expect(
          (await t.as(tenant, 'admin')({ method: 'POST', url: '/use_cases', payload: { name: `Many ${i}` } }))
            .statusCode,
        ).toBe(201)
    }
    try {
      await busyFor(1500)
      // Every endpoint enabled at once with its backlog before it: more endpoints behind than a yielding turn may take records.
      for (const tenant of tenants)
        await db
          .updateTable('webhook_endpoints')
          .set({ enabled: 1, cursor_seq: starts.get(tenant)! })
          .where('tenant_id', '=', tenant)
          .execute()
      const seconds = 1.5
      await busyFor(seconds * 1000)
      const cursors = await db
        .selectFrom('webhook_endpoints')
        .select(['tenant_id', 'cursor_seq'])
        .where('id', 'in', ids)
        .execute()
      // On PostgreSQL each of a turn's statements waits for a gap in the load, and a turn of 50 endpoints may not end
      // within it: the bound is what is checked here (the test above checks that a backlog moves while yielding).
      const fannedOut = cursors.reduce((n, c) => n + Number(c.cursor_seq) - starts.get(c.tenant_id)!, 0)
      expect(fannedOut).toBeLessThanOrEqual(BUSY_RATE * seconds + 50)
      await r.until((got) => got.length === ids.length * perTenant, 15_000)
    } finally {
      for (const id of ids) await db.deleteFrom('webhook_endpoints').where('id', '=', id).execute()
    }
  })

  it("keeps another tenant's events going out at once while one tenant's many endpoints all hang", async () => {
    // Enough hanging endpoints to hold every send slot and every delivery in hand, were a tenant's share not bounded.
    const hanging = await Promise.all(Array.from({ length: 9 }, () => receiver(() => undefined)))
    for (const r of hanging) await endpoint(r.url, ['use_case.created'])
    for (let i = 0; i < 140; i++) await useCase(`Held ${i}`)
    const heldSends = () => hanging.reduce((n, r) => n + r.received.length, 0)
    await eventually(async () => heldSends() >= PER_TENANT_SENDS)
    const other = t.as('globex', 'admin')
    const fast = await receiver()
    const fastEndpoint = await endpoint(fast.url, ['use_case.created'], 'globex')
    try {
      expect((await other({ method: 'POST', url: '/use_cases', payload: { name: 'Not held up' } })).statusCode).toBe(
        201,
      )
      // Well within the hanging sends' 10 s timeout: nothing of the other tenant waits for them.
      await fast.until((got) => got.length === 1, 2000)
      expect(heldSends()).toBeLessThanOrEqual(PER_TENANT_SENDS)
    } finally {
      await other({ method: 'DELETE', url: `/webhook_endpoints/${fastEndpoint.id}` })
    }
  })
})

describeEachDialect('webhook send timeout', (dialect) => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp(dialect, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_TIMEOUT_MS: '300' })
  })
  afterAll(async () => t?.close())

  it('gives up on a receiver that does not answer within WEBHOOK_TIMEOUT_MS and tries again later', async () => {
    const hanging = await startReceiver(() => undefined)
    try {
      const admin = t.as('acme', 'admin')
      const created = await admin({
        method: 'POST',
        url: '/webhook_endpoints',
        payload: { url: hanging.url, events: ['use_case.created'] },
      })
      expect(created.statusCode, created.body).toBe(201)
      await admin({ method: 'POST', url: '/use_cases', payload: { name: 'Never answered' } })
      const deadline = Date.now() + 5000
      let items: any[] = []
      while (!(items[0]?.attempts > 0) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50))
        items = (await admin({ method: 'GET', url: `/webhook_endpoints/${created.json().id}/deliveries` })).json().items
      }
      expect(items[0]).toMatchObject({
        status: 'pending',
        attempts: 1,
        last_status_code: null,
        last_error: 'no answer within 0.3 s',
      })
      expect(Date.parse(items[0].next_attempt_at)).toBeGreaterThan(Date.parse(items[0].last_attempt_at))
      expect(hanging.received).toHaveLength(1)
    } finally {
      await hanging.close()
    }
  })
})

describeEachDialect('webhook targets', (dialect) => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp(dialect)
  })
  afterAll(async () => t?.close())

  it('refuses loopback, private, link-local and metadata targets at create, in every spelling', async () => {
    const admin = t.as('acme', 'admin')
    const refused = [
      'http://127.0.0.1:9/x',
      'http://localhost/x',
      'http://10.1.2.3/x',
      'http://192.168.0.1/x',
      'http://169.254.169.254/latest/meta-data',
      'http://[::1]/x',
      'http://[::ffff:127.0.0.1]/x',
      'http://100.64.0.1/x',
      'http://0.0.0.0/x',
      // Other IPv4 that is not public: broadcast, multicast, IETF, benchmarking, documentation, reserved, "this network".
      'http://255.255.255.255/',
      'http://224.0.0.1/',
      'http://192.0.0.170/',
      'http://198.18.0.1/',
      'http://203.0.113.5/',
      'http://240.0.0.1/',
      'http://0.1.2.3/',
      'http://172.16.0.1/',
      // IPv4 as a URL may spell it: decimal, octal, hex, short, percent-encoded, a trailing dot.
      'http://2130706433/',
      'http://0x7f.1/',
      'http://127.1/',
      'http://0177.0.0.1/',
      'http://0x7f000001/',
      'http://017700000001/',
      'http://%31%32%37.0.0.1/',
      'http://127.0.0.1./',
      'http://3232235521/',
      'http://2852039166/latest/meta-data',
      'http://10.1/',
      'http://0/',
      // localhost in every case and with a trailing dot, and its subdomains (RFC 6761: loopback, never asked of DNS).
      'http://LOCALHOST/',
      'http://localhost./',
      'http://api.localhost/',
      // IPv4-compatible (::/96), -mapped (also in hex), -translated.
      'http://[::127.0.0.1]/',
      'http://[::7f00:1]/',
      'http://[0:0:0:0:0:0:127.0.0.1]/',
      'http://[::10.0.0.1]/',
      'http://[::8.8.8.8]/',
      'http://[::ffff:7f00:1]/',
      'http://[::ffff:a9fe:a9fe]/',
      'http://[0:0:0:0:0:ffff:10.0.0.1]/',
      'http://[::ffff:0:7f00:1]/',
      // NAT64 with a private IPv4, and its local-use prefix; 6to4 with a private IPv4; Teredo with a private server or client.
      'http://[64:ff9b::7f00:1]/',
      'http://[64:ff9b::10.0.0.1]/',
      'http://[64:ff9b::a9fe:a9fe]/',
      'http://[64:ff9b:1::808:808]/',
      'http://[2002:7f00:1::1]/',
      'http://[2002:a9fe:a9fe::1]/',
      'http://[2002:c0a8:1::1]/',
      'http://[2001:0:a00:1::f7f7:f7f7]/',
      'http://[2001:0:808:808::f5ff:fffe]/',
      // IPv6 that is not global unicast: unspecified, site-local, unique local, link-local, multicast, discard, documentation, outside 2000::/3.
      'http://[::]/',
      'http://[fec0::1]/',
      'http://[fc00::1]/',
      'http://[fd12:3456::1]/',
      'http://[fe80::1]/',
      'http://[ff02::1]/',
      'http://[100::1]/',
      'http://[2001:db8::1]/',
      'http://[4000::1]/',
      'http://[3fff::1]/',
      'https://[::ffff:169.254.169.254]:443/',
    ]
    for (const url of refused) {
      const res = await admin({ method: 'POST', url: '/webhook_endpoints', payload: { url, events: ['*'] } })
      expect(res.statusCode, url).toBe(422)
      expect(res.json().errors[0].field).toBe('url')
    }
    // Public addresses stay allowed, also inside IPv6 (disabled: nothing is sent to them).
    for (const url of [
      'http://8.8.8.8/x',
      'http://[2606:4700:4700::1111]/x',
      'http://[::ffff:8.8.8.8]/x',
      'http://[64:ff9b::808:808]/x',
      'http://[2002:808:808::1]/x',
      'http://[2001:0:808:808::f7f7:f7f7]/x',
    ]) {
      const res = await admin({
        method: 'POST',
        url: '/webhook_endpoints',
        payload: { url, events: ['*'], enabled: false },
      })
      expect(res.statusCode, `${url}: ${res.body}`).toBe(201)
      await admin({ method: 'DELETE', url: `/webhook_endpoints/${res.json().id}` })
    }
  })

  it('refuses a private target at send time too, by address and by a name resolving to one', async () => {
    const r = await startReceiver()
    try {
      const admin = t.as('acme', 'admin')
      await admin({ method: 'GET', url: '/system/ping' })
      const at = new Date().toISOString()
      // As if the addresses had been allowed when they were created: the sends must still refuse them. A name is
      // resolved for the sending thread by the service's checked lookup.
      const targets = {
        whep_01jd3k8m9v4q2w6e8r0t2y4u6i: r.url,
        whep_01jd3k8m9v4q2w6e8r0t2y4u6j: r.url.replace('127.0.0.1', 'localhost'),
      }
      for (const [id, url] of Object.entries(targets)) {
        await t.deps.database.db
          .insertInto('webhook_endpoints')
          .values({
            id,
            tenant_id: 'acme',
            url,
            description: null,
            events: '["*"]',
            enabled: 1,
            secret: encryptSecret(t.deps.webhookKey, 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'),
            previous_secret: null,
            previous_secret_expires_at: null,
            cursor_seq: 0,
            failing_since: null,
            disabled_reason: null,
            created_at: at,
            updated_at: at,
          })
          .execute()
      }
      await admin({ method: 'POST', url: '/use_cases', payload: { name: 'Never sent' } })
      for (const [id, url] of Object.entries(targets)) {
        const deadline = Date.now() + 10_000
        let items: any[] = []
        while (Date.now() < deadline) {
          items = (await admin({ method: 'GET', url: `/webhook_endpoints/${id}/deliveries` })).json().items
          if (items.some((d) => d.attempts > 0)) break
          await new Promise((res) => setTimeout(res, 50))
        }
        expect(items.find((d) => d.attempts > 0)?.last_error, url).toContain('private')
      }
      expect(r.received).toHaveLength(0)
    } finally {
      await r.close()
    }
  })
})

describeEachDialect('webhook secrets and Idempotency-Key replays', (dialect) => {
  for (const withRedis of REDIS_URL ? [false, true] : [false]) {
    it(`replays a create or a rotation once, without its secret, and stores none${withRedis ? ' (Redis)' : ''}`, async () => {
      const t = await startTestApp(dialect, withRedis ? { REDIS_URL: REDIS_URL! } : {})
      try {
        const admin = t.as('idem-hooks', 'admin')
        const create = {
          method: 'POST' as const,
          url: '/webhook_endpoints',
          headers: { 'idempotency-key': 'hook-once' },
          payload: { url: 'https://hooks.example.com/i', events: ['*'] },
        }
        const first = await admin(create)
        expect(first.statusCode, first.body).toBe(201)
        expect(first.json()).toMatchObject({ secret_shown: true, secret: expect.stringMatching(/^whsec_/) })
        const replay = await admin(create)
        expect(replay.statusCode).toBe(201)
        expect(replay.headers['idempotent-replayed']).toBe('true')
        expect(replay.headers.location).toBe(first.headers.location)
        const { secret, secret_shown: _shown, ...endpoint } = first.json()
        expect(replay.json()).toEqual({ ...endpoint, secret_shown: false })
        expect((await admin({ method: 'GET', url: '/webhook_endpoints' })).json().items).toHaveLength(1)

        const rotate = {
          method: 'POST' as const,
          url: `/webhook_endpoints/${endpoint.id}/rotate_secret`,
          headers: { 'idempotency-key': 'rotate-once' },
        }
        const rotated = await admin(rotate)
        expect(rotated.statusCode).toBe(200)
        expect(rotated.json()).toMatchObject({
          id: endpoint.id,
          secret_shown: true,
          secret: expect.stringMatching(/^whsec_/),
        })
        const rotatedAgain = await admin(rotate)
        expect(rotatedAgain.headers['idempotent-replayed']).toBe('true')
        expect(rotatedAgain.json()).toMatchObject({ id: endpoint.id, secret_shown: false })
        expect(rotatedAgain.json()).not.toHaveProperty('secret')
        // The replay rotated nothing: one rotation in the audit log.
        const rotations = await t.deps.database.db
          .selectFrom('audit_logs')
          .select('id')
          .where('action', '=', 'webhook_endpoint.secret_rotated')
          .execute()
        expect(rotations).toHaveLength(1)

        const secrets = [secret as string, rotated.json().secret as string].map((s) => s.slice('whsec_'.length))
        const stored = await t.deps.database.db.selectFrom('idempotency_records').select('response').execute()
        for (const s of secrets) expect(JSON.stringify(stored)).not.toContain(s)
        if (withRedis) {
          const keys = await t.deps.redis!.keys('aigov:idem:*')
          expect(keys.length).toBeGreaterThan(0)
          for (const key of keys) for (const s of secrets) expect((await t.deps.redis!.get(key)) ?? '').not.toContain(s)
        } else expect(stored).toHaveLength(2)
      } finally {
        await t.close()
      }
    })
  }
})
