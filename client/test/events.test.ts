import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClient, verifyWebhook, WebhookVerificationError } from '../src/index.js'
import { STREAMS_PER_KEY } from '../../src/modules/events/events.routes.js'
import { startServiceProcess } from '../../test/helpers/process.js'
import { startReceiver, type Receiver } from '../../test/helpers/receiver.js'
import { startService, type TestService } from './service.js'

let service: TestService
let receiver: Receiver
const env = { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' }

beforeAll(async () => {
  service = await startService(env)
  receiver = await startReceiver()
})
afterAll(async () => {
  await service?.stop()
  await receiver?.close()
})

const clientFor = () =>
  createClient({ baseUrl: service.baseUrl, apiKey: service.apiKey, tenant: service.tenant, maxRetries: 0 })

describe('client: webhooks and the event stream', () => {
  it('manages an endpoint and verifies what it receives with verifyWebhook', async () => {
    const client = clientFor()
    const created = await client.webhookEndpoints.create({ url: receiver.url, events: ['use_case.created'] })
    expect(created.error).toBeNull()
    const { id, secret, secretShown } = created.data!
    expect(secretShown).toBe(true)
    if (!secret) throw new Error('a created endpoint carries its secret')
    await client.useCases.create({ name: 'Verified by the client' })
    const [received] = await receiver.until((got) => got.length === 1)
    const event = await verifyWebhook(secret, received.headers as Record<string, string>, received.body)
    expect(event).toMatchObject({
      type: 'use_case.created',
      tenant: service.tenant,
      data: { resourceName: 'Verified by the client', resource: { name: 'Verified by the client' } },
    })
    await expect(
      verifyWebhook(secret, received.headers as Record<string, string>, received.body.replace('Verified', 'Forged')),
    ).rejects.toThrow(WebhookVerificationError)
    await expect(
      verifyWebhook(
        'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
        received.headers as Record<string, string>,
        received.body,
      ),
    ).rejects.toThrow(WebhookVerificationError)
    const stale = {
      ...(received.headers as Record<string, string>),
      'webhook-timestamp': String(Math.floor(Date.now() / 1000) - 3600),
    }
    await expect(verifyWebhook(secret, stale, received.body)).rejects.toThrow(/timestamp/)

    // The receiver has the event before the service reads its answer: the log says so a moment later.
    const deadline = Date.now() + 5000
    let deliveries = await client.webhookEndpoints.deliveries.list(id)
    while (deliveries.data?.items[0]?.status !== 'succeeded' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20))
      deliveries = await client.webhookEndpoints.deliveries.list(id)
    }
    expect(deliveries.data?.items[0]).toMatchObject({ status: 'succeeded', eventType: 'use_case.created' })
    const listed = await client.webhookEndpoints.list()
    expect(listed.data?.items.map((e) => e.id)).toContain(id)
    expect((await client.webhookEndpoints.delete(id)).error).toBeNull()
  })

  it('streams events and resumes after the service restarts, losing and repeating nothing', async () => {
    const client = clientFor()
    const abort = new AbortController()
    const stream = client.events.stream({ action: 'use_case.created' }, { signal: abort.signal, reconnectDelayMs: 200 })
    const first = stream.next()
    // The stream connects on the first next(): give it a moment before writing.
    await new Promise((r) => setTimeout(r, 300))
    const a = (await client.useCases.create({ name: 'Before restart' })).data!
    expect((await first).value).toMatchObject({ type: 'use_case.created', record: { resourceId: a.id } })

    const port = service.process.port
    await service.process.stop()
    service.process = await startServiceProcess(service.env, port)
    const b = (await client.useCases.create({ name: 'After restart 1' })).data!
    const c = (await client.useCases.create({ name: 'After restart 2' })).data!
    const next = [(await stream.next()).value, (await stream.next()).value]
    expect(next.map((e) => e?.record.resourceId)).toEqual([b.id, c.id])
    abort.abort()
    expect((await stream.next()).done).toBe(true)
  })

  it('waits as long as the service asks when it has too many streams open, and stops waiting when aborted', async () => {
    const holders = new AbortController()
    const held = Array.from({ length: STREAMS_PER_KEY }, () =>
      clientFor().events.stream({}, { signal: holders.signal }),
    )
    for (const stream of held) void stream.next()
    await new Promise((r) => setTimeout(r, 300))

    const attempts: number[] = []
    const counting: typeof fetch = (input, init) => {
      if (String(input).includes('/events')) attempts.push(Date.now())
      return fetch(input, init)
    }
    const client = createClient({
      baseUrl: service.baseUrl,
      apiKey: service.apiKey,
      tenant: service.tenant,
      maxRetries: 0,
      fetch: counting,
    })
    const abort = new AbortController()
    const refused = client.events.stream({}, { signal: abort.signal, reconnectDelayMs: 50 })
    const ended = refused.next()
    await new Promise((r) => setTimeout(r, 1000))
    // Refused with a Retry-After of several seconds: one attempt, not one every 50 ms.
    expect(attempts).toHaveLength(1)
    const abortedAt = Date.now()
    abort.abort()
    expect((await ended).done).toBe(true)
    expect(Date.now() - abortedAt).toBeLessThan(500)
    holders.abort()
  })

  it('throws when the service refuses the stream', async () => {
    const stream = clientFor().events.stream({ colour: 'blue' } as never)
    await expect(stream.next()).rejects.toThrow()
  })
})
