import type { Database } from '../../db/create-db.js'
import { now } from '../../shared/ids.js'
import type { Tx } from '../../shared/mutation.js'
import { type ResourceResolver, resourcesOf } from './webhook-post.js'
import type { WebhookRecorder } from './webhook-recorder.js'
import { fanOutLimit, leaseUntil, servedThisTurn } from './webhook-schedule.js'
import type { Claimed, SendQueue } from './webhook-send-queue.js'
import {
  type DispatchStatements,
  type EventRecord,
  enabledEndpoints,
  leased,
  lockForFanOut,
} from './webhooks.delivery-repo.js'
import { updateEndpoint } from './webhooks.repo.js'
import { newDelivery } from './webhooks.service.js'

/** True when `action` matches one of the endpoint's patterns (`*`, `family.*`, or exact). */
export function matchesEvent(patterns: string[], action: string): boolean {
  return patterns.some((p) => p === '*' || p === action || (p.endsWith('.*') && action.startsWith(p.slice(0, -1))))
}

/**
 * The audit log read as an outbox: each enabled endpoint keeps a cursor into its tenant's log, and one transaction
 * per turn queues a delivery for each record after it that the endpoint's patterns match and moves the cursor, so a
 * record is queued exactly once whatever crashes.
 */
export class WebhookOutbox {
  /** The tenants with an enabled endpoint, as the last turn read them and as endpoints were enabled since. */
  private tenantsWithEndpoints = new Set<string>()
  /** Where the next yielding turn with too small a budget for every endpoint behind starts serving them. */
  private nextServed = 0
  /** Audit records the last turn fanned out: few mean light load, and the next turn may come soon. */
  lastFannedOut = 0

  constructor(
    private readonly deps: {
      database: Database
      statements: DispatchStatements
      queue: SendQueue
      recorder: WebhookRecorder
      resolveResources: ResourceResolver
      /** The longest a send may take (a lease outlasts it). */
      timeoutMs: number
      /** Aborted as the dispatcher stops: the fan-out stops between endpoints. */
      signal: AbortSignal
      /** Asks for another turn (a full batch read: more may wait). */
      wake: () => void
    },
  ) {}

  /** Whether a commit of this tenant may have something to fan out. */
  watches(tenantId: string): boolean {
    return this.tenantsWithEndpoints.has(tenantId)
  }

  /** An endpoint of this tenant was created or enabled. */
  watch(tenantId: string): void {
    this.tenantsWithEndpoints.add(tenantId)
  }

  /**
   * The turn's writes, in one transaction: on SQLite one hold of the database's single writer, which the API's
   * writes wait for (another process's sleep at least 1 ms each time they find it taken), instead of one per
   * statement. They are the successes recorded since the last turn and the fan-out of every enabled endpoint whose
   * tenant's log has moved past its cursor. Fresh deliveries are leased to this instance as they are inserted and
   * go straight to its send queues, with the endpoint and records read for the fan-out and the resources read once
   * for all of them: a claim takes only the rest. Returns how many it took in hand.
   */
  async write(budget: number): Promise<number> {
    const { database, statements, queue, recorder } = this.deps
    const endpoints = await enabledEndpoints(database.db)
    this.tenantsWithEndpoints = new Set(endpoints.map((e) => e.tenant_id))
    const turn = servedThisTurn(
      endpoints.filter((e) => e.audit_seq > e.cursor_seq),
      budget,
      this.nextServed,
    )
    this.nextServed = turn.nextServed
    const behind = turn.served
    this.lastFannedOut = 0
    if (behind.length === 0 && !recorder.hasSuccesses()) return 0
    // The records are read before the transaction, which is then only writes, held as briefly as it can be; a
    // tenant's endpoints at the same cursor share one read, so all read as many.
    const limit = fanOutLimit(budget, behind.length)
    const reads = new Map<string, EventRecord[]>()
    const pending: { tenantId: string; endpointId: string; cursor: number; records: EventRecord[] }[] = []
    for (const e of behind) {
      const key = `${e.tenant_id}/${e.cursor_seq}`
      let records = reads.get(key)
      if (!records) {
        records = await statements.eventsAfter(e.tenant_id, e.cursor_seq, limit)
        reads.set(key, records)
        if (records.length === limit) this.deps.wake()
        this.lastFannedOut += records.length
      }
      pending.push({ tenantId: e.tenant_id, endpointId: e.id, cursor: e.cursor_seq, records })
    }
    const succeeded = recorder.takeSuccesses()
    let fresh: Omit<Claimed, 'resources'>[]
    try {
      fresh = await database.groupedTransaction(async (tx) => {
        await recorder.recordSucceeded(tx, succeeded)
        const fresh: Omit<Claimed, 'resources'>[] = []
        // What is in hand as the fan-out starts, with what it takes on the way: sends that end meanwhile only leave more room.
        const tenantsHeld = queue.heldByTenant()
        let inHand = queue.held()
        for (const p of pending) {
          if (this.deps.signal.aborted) break
          const taken = await this.fanOutEndpoint(
            tx,
            p.tenantId,
            p.endpointId,
            p.cursor,
            p.records,
            queue.room(p.tenantId, p.endpointId, inHand, tenantsHeld),
          )
          fresh.push(...taken)
          tenantsHeld.add(p.tenantId, taken.length)
          inHand += taken.length
        }
        return fresh
      })
    } catch (err) {
      // Recorded on the next turn; the fan-out is tried again from the same cursors.
      recorder.giveBack(succeeded)
      throw err
    }
    if (fresh.length === 0) return 0
    // Should this read fail, the leases run out and a claim sends these deliveries.
    const resources = await resourcesOf(
      this.deps.resolveResources,
      fresh.flatMap((f) => (f.record ? [f.record] : [])),
    )
    queue.enqueue(fresh.map((f) => ({ ...f, resources })))
    return fresh.length
  }

  /**
   * Queues a delivery for each of `records` (the tenant's log after `cursor`) that the endpoint's patterns match
   * and moves its cursor; leases up to `room` of them to this instance and returns those, to send once committed.
   */
  private async fanOutEndpoint(
    tx: Tx,
    tenantId: string,
    endpointId: string,
    cursor: number,
    records: EventRecord[],
    room: number,
  ): Promise<Omit<Claimed, 'resources'>[]> {
    // None on PostgreSQL while another instance fans this endpoint out: it is left to that one.
    const endpoint = await lockForFanOut(tx, this.deps.database.dialect, tenantId, endpointId)
    // Fanned out since the records were read (by another instance): they are queued already.
    if (endpoint?.enabled !== 1 || endpoint.cursor_seq !== cursor || records.length === 0) return []
    const patterns = JSON.parse(endpoint.events) as string[]
    const at = now()
    const until = leaseUntil(this.deps.timeoutMs)
    const fresh = records
      .filter((r) => matchesEvent(patterns, r.action))
      .map((record, i) => ({
        delivery: {
          ...newDelivery(tenantId, endpointId, record.id, record.action, at),
          ...(i < room && leased(until)),
        },
        endpoint,
        record,
      }))
    const inserted =
      fresh.length === 0
        ? []
        : await this.deps.statements.insertDeliveries(
            tx,
            tenantId,
            endpointId,
            at,
            fresh.map((f) => [f.delivery.id, f.record.id, f.record.action, f.delivery.lease_until]),
          )
    await updateEndpoint(tx, tenantId, endpointId, { cursor_seq: records[records.length - 1].seq })
    // Only rows inserted here are sent from here: a record queued before (a conflict) keeps its own delivery.
    const ids = new Set(inserted)
    return fresh.filter((f) => f.delivery.lease_until !== null && ids.has(f.delivery.id))
  }
}
