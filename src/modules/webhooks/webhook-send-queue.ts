import type { WebhookDeliveryRow, WebhookEndpointRow } from '../../db/tables.js'
import { Counts } from '../../shared/counts.js'
import { leaseOutlastsSend, maySend, PER_ENDPOINT, PER_TENANT_SENDS, room } from './webhook-schedule.js'
import type { EventRecord } from './webhooks.delivery-repo.js'

/** A claimed delivery, with what its send needs (read for the whole claimed batch at once). */
export interface Claimed {
  delivery: WebhookDeliveryRow
  endpoint: WebhookEndpointRow | undefined
  record: EventRecord | undefined
  /** The claimed batch's resources as JSON text, by `tenant/type/id` (read for the whole batch at once). */
  resources: Map<string, string>
}

/**
 * The deliveries this instance holds: waiting in their endpoint's queue, oldest first, and sending. How many more
 * it may take in hand and which may start are the rules of webhook-schedule.ts applied to these counts.
 */
export class SendQueue {
  /** Sends in flight per endpoint, and per tenant. */
  private readonly inFlight = new Counts()
  private readonly tenantInFlight = new Counts()
  /** Claimed deliveries waiting for a free slot of their endpoint and tenant, per endpoint, oldest first. */
  private readonly queued = new Map<string, Claimed[]>()
  private readonly sends = new Set<Promise<void>>()

  constructor(
    private readonly options: {
      /** The longest a send may take: one whose lease ends sooner is left for the lease to run out. */
      timeoutMs: number
      /** Aborted as the dispatcher stops: no send starts after. */
      signal: AbortSignal
      /** Sends one delivery and records its result; never rejects. */
      send: (claimed: Claimed) => Promise<void>
      /** Called as each send ends (its slot is free, and a turn may claim more). */
      ended: () => void
    },
  ) {}

  /** Deliveries in hand: sending, and waiting. */
  held(): number {
    return this.sends.size + this.waiting()
  }

  /** Deliveries in hand per tenant: waiting, and sending. */
  heldByTenant(): Counts {
    const byTenant = this.waitingByTenant()
    for (const [tenantId, n] of this.tenantInFlight) byTenant.add(tenantId, n)
    return byTenant
  }

  /** How many deliveries of this endpoint may be taken in hand now (see room() in webhook-schedule.ts). */
  room(tenantId: string, endpointId: string, inHand: number, tenantsHeld: Counts): number {
    const held = (this.queued.get(endpointId)?.length ?? 0) + this.inFlight.of(endpointId)
    return room(held, tenantsHeld.of(tenantId), inHand)
  }

  /**
   * The endpoints with PER_ENDPOINT waiting and the tenants with PER_TENANT_SENDS waiting, whose deliveries a claim
   * passes over: an endpoint's queue is refilled before it runs dry, so a fast endpoint always has its sends in flight.
   */
  full(): { endpoints: string[]; tenants: string[] } {
    return {
      endpoints: [...this.queued].filter(([, queue]) => queue.length >= PER_ENDPOINT).map(([id]) => id),
      tenants: [...this.waitingByTenant()].filter(([, n]) => n >= PER_TENANT_SENDS).map(([id]) => id),
    }
  }

  /** Adds deliveries in hand to their endpoints' send queues and starts what can start. */
  enqueue(batch: Claimed[]): void {
    for (const claimed of batch) {
      const queue = this.queued.get(claimed.delivery.endpoint_id) ?? []
      queue.push(claimed)
      this.queued.set(claimed.delivery.endpoint_id, queue)
    }
    this.start()
  }

  /** Forgets what waits for this endpoint; it stays pending under its lease. */
  drop(endpointId: string): void {
    this.queued.delete(endpointId)
  }

  /** Resolves once the sends in flight have ended. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.sends])
  }

  /** Empties the queues: the ids of the deliveries that were waiting. */
  takeWaiting(): string[] {
    const waiting = [...this.queued.values()].flat().map((c) => c.delivery.id)
    this.queued.clear()
    return waiting
  }

  private waiting(): number {
    let n = 0
    for (const queue of this.queued.values()) n += queue.length
    return n
  }

  /** Deliveries waiting for a send slot, per tenant (an endpoint's queue holds its tenant's only). */
  private waitingByTenant(): Counts {
    const byTenant = new Counts()
    for (const queue of this.queued.values()) {
      if (queue.length > 0) byTenant.add(queue[0].delivery.tenant_id, queue.length)
    }
    return byTenant
  }

  /**
   * Starts queued sends while their endpoints (PER_ENDPOINT) and tenants (PER_TENANT_SENDS) have free slots and
   * CONCURRENCY allows. An endpoint's queue drains as its sends end, without waiting for the next turn.
   */
  private start(): void {
    const { timeoutMs, signal, send, ended } = this.options
    for (const [endpointId, queue] of this.queued) {
      const tenantId = queue[0]?.delivery.tenant_id
      const free = () => maySend(this.inFlight.of(endpointId), this.tenantInFlight.of(tenantId), this.sends.size)
      while (queue.length > 0 && free() && !signal.aborted) {
        const claimed = queue.shift()!
        // This instance's lease runs out instead, and then any instance sends it.
        if (!leaseOutlastsSend(claimed.delivery.lease_until!, timeoutMs)) continue
        this.inFlight.add(endpointId, 1)
        this.tenantInFlight.add(tenantId, 1)
        const sending = send(claimed).finally(() => {
          this.sends.delete(sending)
          this.inFlight.add(endpointId, -1)
          this.tenantInFlight.add(tenantId, -1)
          this.start()
          ended()
        })
        this.sends.add(sending)
      }
      if (queue.length === 0) this.queued.delete(endpointId)
    }
  }
}
