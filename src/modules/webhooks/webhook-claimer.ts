import type { Database } from '../../db/create-db.js'
import { now } from '../../shared/ids.js'
import { type ResourceResolver, resourcesOf } from './webhook-post.js'
import { claimLimit, leaseUntil } from './webhook-schedule.js'
import type { SendQueue } from './webhook-send-queue.js'
import { anyDue, claimDue, type DispatchStatements, type DueFilter, endpointsById } from './webhooks.delivery-repo.js'

/**
 * Takes due deliveries in hand under a lease (PostgreSQL: SKIP LOCKED), so each is sent by one instance; a crashed
 * instance's leases run out and another instance sends them again (at least once). Due are retries, what the
 * fan-out queued beyond what it could take in hand, and what another instance gave back or left behind.
 */
export class WebhookClaimer {
  constructor(
    private readonly deps: {
      database: Database
      statements: DispatchStatements
      queue: SendQueue
      resolveResources: ResourceResolver
      /** The longest a send may take (a lease outlasts it). */
      timeoutMs: number
      /** Aborted as the dispatcher stops: nothing more is claimed. */
      signal: AbortSignal
      /** Asks for another turn (a full batch claimed: more may be due). */
      wake: () => void
    },
  ) {}

  /**
   * Claims due deliveries of the endpoints with fewer than PER_ENDPOINT waiting and the tenants with fewer than
   * PER_TENANT_SENDS waiting (so they hold HELD_PER_ENDPOINT and HELD_PER_TENANT at most), reads the batch's endpoints and
   * audit records in one query each, and queues them for sending.
   */
  async claim(budget: number): Promise<void> {
    const { database, statements, queue } = this.deps
    const limit = claimLimit(budget, queue.held())
    if (limit <= 0 || this.deps.signal.aborted) return
    const { db, dialect } = database
    const full = queue.full()
    const due: DueFilter = { at: now(), limit, skipEndpoints: full.endpoints, skipTenants: full.tenants }
    // Usually nothing is due (the fan-out leased the fresh deliveries): a read, then no write and no write lock.
    if (!(await anyDue(db, due))) return
    const claimed = await claimDue(db, dialect, due, leaseUntil(this.deps.timeoutMs))
    if (claimed.length === 0) return
    // A full batch means more may be due.
    if (claimed.length === limit) this.deps.wake()
    const tenants = [...new Set(claimed.map((d) => d.tenant_id))]
    const endpointIds = [...new Set(claimed.map((d) => d.endpoint_id))]
    const auditIds = claimed.flatMap((d) => (d.audit_id === null ? [] : [d.audit_id]))
    const endpoints = new Map((await endpointsById(db, tenants, endpointIds)).map((e) => [e.id, e]))
    const records = new Map(
      auditIds.length === 0 ? [] : (await statements.eventsById(tenants, auditIds)).map((r) => [r.id, r]),
    )
    const resources = await resourcesOf(this.deps.resolveResources, records.values())
    queue.enqueue(
      claimed.map((delivery) => ({
        delivery,
        endpoint: endpoints.get(delivery.endpoint_id),
        record: delivery.audit_id === null ? undefined : records.get(delivery.audit_id),
        resources,
      })),
    )
  }
}
