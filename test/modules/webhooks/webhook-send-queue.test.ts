import { describe, expect, it } from 'vitest'
import { PER_ENDPOINT, PER_TENANT_SENDS, room } from '../../../src/modules/webhooks/webhook-schedule.js'
import { type Claimed, SendQueue } from '../../../src/modules/webhooks/webhook-send-queue.js'
import { newDelivery } from '../../../src/modules/webhooks/webhooks.service.js'
import { Counts } from '../../../src/shared/counts.js'

const TIMEOUT_MS = 10_000

/** A queue whose sends stay in flight until the test ends them, one by one, by delivery id. */
function queueWithSends(signal = new AbortController().signal) {
  const inFlight = new Map<string, () => void>()
  let ended = 0
  const queue = new SendQueue({
    timeoutMs: TIMEOUT_MS,
    signal,
    send: (claimed) => new Promise<void>((resolve) => inFlight.set(claimed.delivery.id, resolve)),
    ended: () => ended++,
  })
  const end = async (id: string) => {
    inFlight.get(id)!()
    inFlight.delete(id)
    await new Promise((resolve) => setImmediate(resolve))
  }
  return { queue, inFlight, end, ended: () => ended }
}

const claimed = (tenantId: string, endpointId: string, leaseMs = TIMEOUT_MS + 5000): Claimed => ({
  delivery: {
    ...newDelivery(tenantId, endpointId, null, 'ping', new Date().toISOString()),
    lease_until: new Date(Date.now() + leaseMs).toISOString(),
  },
  endpoint: undefined,
  record: undefined,
  resources: new Map(),
})
const many = (n: number, tenantId: string, endpointId: string) =>
  Array.from({ length: n }, () => claimed(tenantId, endpointId))

describe('the webhook send queue', () => {
  it('starts PER_ENDPOINT sends of an endpoint, keeps the rest waiting in order, and starts the next as one ends', async () => {
    const { queue, inFlight, end, ended } = queueWithSends()
    const batch = many(PER_ENDPOINT + 3, 't1', 'e1')
    queue.enqueue(batch)
    expect(inFlight.size).toBe(PER_ENDPOINT)
    expect(queue.held()).toBe(PER_ENDPOINT + 3)
    expect([...inFlight.keys()]).toEqual(batch.slice(0, PER_ENDPOINT).map((c) => c.delivery.id))
    await end(batch[0].delivery.id)
    expect(ended()).toBe(1)
    expect(inFlight.has(batch[PER_ENDPOINT].delivery.id)).toBe(true)
    expect(queue.held()).toBe(PER_ENDPOINT + 2)
    // Another endpoint's sends start beside the first's full slots.
    const other = many(2, 't1', 'e2')
    queue.enqueue(other)
    for (const c of other) expect(inFlight.has(c.delivery.id)).toBe(true)
  })

  it('passes over an endpoint with PER_ENDPOINT waiting and a tenant with PER_TENANT_SENDS waiting in a claim', () => {
    const { queue } = queueWithSends()
    queue.enqueue(many(2 * PER_ENDPOINT, 't1', 'full'))
    queue.enqueue(many(2 * PER_ENDPOINT - 1, 't1', 'almost'))
    expect(queue.full()).toEqual({ endpoints: ['full'], tenants: [] })
    // Enough endpoints of one tenant that PER_TENANT_SENDS are in flight, and as many wait.
    const endpoints = (2 * PER_TENANT_SENDS) / PER_ENDPOINT
    const { queue: busy } = queueWithSends()
    for (let i = 0; i < endpoints; i++) busy.enqueue(many(PER_ENDPOINT, 't2', `e${i}`))
    expect(busy.held()).toBe(2 * PER_TENANT_SENDS)
    expect(busy.full().tenants).toEqual(['t2'])
    expect(busy.heldByTenant().of('t2')).toBe(2 * PER_TENANT_SENDS)
    // The room the schedule gives for what the queue holds: the endpoint's sends, its tenant's and all.
    expect(busy.room('t2', 'e0', busy.held(), busy.heldByTenant())).toBe(
      room(PER_ENDPOINT, 2 * PER_TENANT_SENDS, 2 * PER_TENANT_SENDS),
    )
    expect(busy.room('t3', 'new', busy.held(), new Counts())).toBe(room(0, 0, 2 * PER_TENANT_SENDS))
  })

  it('sends nothing whose lease would end before the send could, and nothing once stopped', async () => {
    const stopping = new AbortController()
    const { queue, inFlight } = queueWithSends(stopping.signal)
    const short = claimed('t1', 'e1', TIMEOUT_MS - 1)
    queue.enqueue([short])
    expect(inFlight.size).toBe(0)
    expect(queue.held()).toBe(0)
    stopping.abort()
    const waiting = many(3, 't1', 'e1')
    queue.enqueue(waiting)
    expect(inFlight.size).toBe(0)
    expect(queue.takeWaiting()).toEqual(waiting.map((c) => c.delivery.id))
    expect(queue.held()).toBe(0)
  })

  it('forgets what waits for a dropped endpoint, and settles once the sends in flight end', async () => {
    const { queue, inFlight, end } = queueWithSends()
    queue.enqueue(many(PER_ENDPOINT + 4, 't1', 'gone'))
    queue.drop('gone')
    expect(queue.held()).toBe(PER_ENDPOINT)
    let settled = false
    const settling = queue.settled().then(() => {
      settled = true
    })
    const ids = [...inFlight.keys()]
    for (const id of ids.slice(1)) await end(id)
    expect(settled).toBe(false)
    await end(ids[0])
    await settling
    expect(queue.held()).toBe(0)
  })
})
