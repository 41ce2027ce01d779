import { sql } from 'kysely'
import type { Database } from '../../db/create-db.js'
import type { AuditFeed } from '../events/events.feed.js'
import type { WebhookDeliveryRow, WebhookEndpointRow } from '../../db/tables.js'
import { type Ctx, systemCtx } from '../../shared/context.js'
import type { Deps } from '../../shared/deps.js'
import { idFloor, now } from '../../shared/ids.js'
import { CoalescedRuns } from '../../shared/coalesced-runs.js'
import { Counts } from '../../shared/counts.js'
import { LoopLoad } from '../../shared/loop-load.js'
import { runMutation, type Tx } from '../../shared/mutation.js'
import { SERVICE_VERSION } from '../../version.js'
import { decryptSecret } from './webhook-secrets.js'
import { WebhookSender } from './webhook-sender.js'
import type { ResolvedAddress } from './webhook-dns.js'
import {
  BUSY_AVERAGE_MS,
  backoffMs,
  claimLimit,
  fanOutLimit,
  maySend,
  PER_ENDPOINT,
  PER_TENANT_SENDS,
  parseRetryAfter,
  room,
  servedThisTurn,
  turnInterval,
  turnPlan,
} from './webhook-schedule.js'
import { bareHost, checkedAddresses } from './webhook-targets.js'
import { dispatchStatements, type EventRecord } from './webhooks.repo.js'
import { auditName, newDelivery } from './webhooks.service.js'

export { BUSY_RATE, PER_ENDPOINT, PER_TENANT_SENDS } from './webhook-schedule.js'

/** Commits that wake the loop (audit records, endpoints enabled): this instance's, and other instances' where the feed hears them. */
export type CommitFeed = Pick<AuditFeed, 'on' | 'off' | 'hearsOtherInstances'>

/** Returns resources of one type as the JSON text of their GET, by id; those that are gone are left out. */
export type ResourceResolver = (ctx: Ctx, resourceType: string, resourceIds: string[]) => Promise<Map<string, string>>

const DAY_MS = 24 * 3600 * 1000
/** A claimed delivery is this instance's for the send timeout and this much more; after a crash another instance takes it over. */
const LEASE_MARGIN_MS = 5_000
/**
 * How often the loop turns when nothing woke it: for retries come due, leases run out, and other instances'
 * commits, which wake it through the feed only when Redis carries them.
 */
const POLL_MS = 1000
const POLL_WITH_REDIS_MS = 5000
const RETENTION_MS = 30 * DAY_MS
const CLEANUP_EVERY_MS = 3600 * 1000
/** Decrypted signing secrets kept at most: a few per endpoint (current, previous), for many endpoints. */
const SECRETS_KEPT = 1000

/**
 * A lease: the delivery is this instance's until then, and due again then should its attempt go unrecorded. Due
 * only then, it leaves the range of due deliveries that claim() reads on every turn, which would otherwise pass
 * over every delivery in flight.
 */
const leased = (until: string) => ({ lease_until: until, next_attempt_at: until })
/** A lease given back: due at once, for any instance. */
const released = () => ({ lease_until: null, next_attempt_at: now() })

/** A claimed delivery, with what its send needs (read for the whole claimed batch at once). */
interface Claimed {
  delivery: WebhookDeliveryRow
  endpoint: WebhookEndpointRow | undefined
  record: EventRecord | undefined
  /** The claimed batch's resources as JSON text, by `tenant/type/id` (read for the whole batch at once). */
  resources: Map<string, string>
}

interface SendResult {
  status?: number
  error?: string
  retryAfterMs?: number
}

/** True when `action` matches one of the endpoint's patterns (`*`, `family.*`, or exact). */
export function matchesEvent(patterns: string[], action: string): boolean {
  return patterns.some((p) => p === '*' || p === action || (p.endsWith('.*') && action.startsWith(p.slice(0, -1))))
}

/**
 * Turns committed audit records into signed webhook deliveries and sends them. The audit log is the outbox:
 * one transaction per turn reads each endpoint's records after its cursor, queues a delivery for each match and
 * moves the cursor, so a record is queued exactly once whatever crashes. Deliveries are claimed with a lease
 * (PostgreSQL: SKIP LOCKED), so each is sent by one instance; a crashed instance's leases run out and another
 * instance sends them again (at least once).
 */
export class WebhookDispatcher {
  private readonly database: Database
  /** The longest a send may take: its host's lookup (WEBHOOK_DNS_TIMEOUT_MS), then its exchange (WEBHOOK_TIMEOUT_MS). */
  private readonly timeoutMs: number
  /** Sends in flight per endpoint, and per tenant. */
  private readonly inFlight = new Counts()
  private readonly tenantInFlight = new Counts()
  /** Claimed deliveries waiting for a free slot of their endpoint and tenant, per endpoint, oldest first. */
  private readonly queued = new Map<string, Claimed[]>()
  private readonly sends = new Set<Promise<void>>()
  private tenantsWithEndpoints = new Set<string>()
  private timer: NodeJS.Timeout | undefined
  /** The turns of the loop: TURN_MS (QUICK_TURN_MS) after the last one started, wakes in between sharing one. */
  private readonly turns = new CoalescedRuns(
    () => this.run(),
    () => Math.max(0, this.lastTurn + turnInterval(this.yielding, this.lastFannedOut) - Date.now()),
  )
  private lastTurn = 0
  private readonly loopLoad = new LoopLoad(BUSY_AVERAGE_MS)
  /** Whether the API kept the event loop busy as the last turn started (see BUSY_UTILIZATION). */
  private yielding = false
  /** Where the next yielding turn with too small a budget for every endpoint behind starts serving them. */
  private nextServed = 0
  /** Audit records the last turn fanned out: few mean light load, and the next turn may come soon. */
  private lastFannedOut = 0
  private stopped = false
  private lastCleanup = 0
  /** Acknowledged deliveries, recorded together on the next turn of the loop (one statement for many). */
  private succeeded: { id: string; status: number }[] = []
  /** The HTTP exchanges, on a thread of their own; every connection it opens goes to an address checked here. */
  private readonly sender: WebhookSender
  /**
   * Signing secrets by their stored ciphertext: decrypted once, not on every send. A rotation stores a new
   * ciphertext, so it is never served a stale secret.
   */
  private readonly secrets = new Map<string, string>()
  private readonly statements: ReturnType<typeof dispatchStatements>

  constructor(
    private readonly deps: Pick<Deps, 'database' | 'config' | 'webhookKey' | 'webhookDns' | 'log' | 'metrics'>,
    private readonly resolveResources: ResourceResolver,
    private readonly feed: CommitFeed,
  ) {
    this.database = deps.database
    this.statements = dispatchStatements(deps.database)
    this.timeoutMs = deps.config.webhookDnsTimeoutMs + deps.config.webhookTimeoutMs
    this.sender = new WebhookSender({ timeoutMs: deps.config.webhookTimeoutMs })
  }

  start(): void {
    this.feed.on('audit', this.onCommit)
    this.feed.on('webhookEndpoints', this.onEndpointEnabled)
    this.timer = setInterval(() => this.wake(), this.feed.hearsOtherInstances ? POLL_WITH_REDIS_MS : POLL_MS)
    this.timer.unref()
    this.wake()
  }

  /** Stops claiming, abandons sends in flight (their leases are released so another instance resumes them). */
  async stop(): Promise<void> {
    this.stopped = true
    clearInterval(this.timer)
    const turnsEnded = this.turns.stop()
    this.feed.off('audit', this.onCommit)
    this.feed.off('webhookEndpoints', this.onEndpointEnabled)
    await this.sender.stop()
    await Promise.allSettled([...this.sends])
    await turnsEnded
    if (this.succeeded.length > 0) await this.recordSucceeded(this.database.db, this.succeeded).catch(() => undefined)
    const waiting = [...this.queued.values()].flat().map((c) => c.delivery.id)
    this.queued.clear()
    if (waiting.length > 0)
      await this.database.db
        .updateTable('webhook_deliveries')
        .set(released())
        .where('id', 'in', waiting)
        .execute()
        .catch(() => undefined)
  }

  private readonly onCommit = (tenantId: string) => {
    if (this.tenantsWithEndpoints.has(tenantId)) this.wake()
  }

  /**
   * An endpoint created or enabled, here or on an instance the feed hears: its tenant's commits wake the loop from
   * now on, not only once a turn has read the endpoints again (up to POLL_MS, or POLL_WITH_REDIS_MS, later: seconds
   * of events sent late at the start of a subscription).
   */
  private readonly onEndpointEnabled = (tenantId: string) => {
    this.tenantsWithEndpoints.add(tenantId)
    this.wake()
  }

  /** Asks for a turn of the loop (see `turns`). */
  wake(): void {
    this.turns.request()
  }

  private async run(): Promise<void> {
    const sinceLastTurnMs = Date.now() - this.lastTurn
    this.lastTurn = Date.now()
    const load = this.loopLoad.sample()
    const { yielding, budget } = turnPlan(load, sinceLastTurnMs)
    this.yielding = yielding
    this.deps.metrics.webhookDeliveryYielding.set(yielding ? 1 : 0)
    try {
      const taken = await this.write(budget)
      await this.claim(budget - taken)
      if (Date.now() - this.lastCleanup > CLEANUP_EVERY_MS) await this.cleanup()
    } catch (err) {
      if (!this.stopped)
        this.deps.log.warn({ err: (err as Error).message }, 'webhook dispatch failed; retrying on the next poll')
    }
  }

  /**
   * The turn's writes, in one transaction: on SQLite one hold of the database's single writer, which the API's
   * writes wait for (another process's sleep at least 1 ms each time they find it taken), instead of one per
   * statement. They are the successes recorded since the last turn and the fan-out of every enabled endpoint whose
   * tenant's log has moved past its cursor. Fresh deliveries are leased to this instance as they are inserted and
   * go straight to its send queues, with the endpoint and records read for the fan-out and the resources read once
   * for all of them: claim() takes only the rest.
   */
  private async write(budget: number): Promise<number> {
    const endpoints = await this.database.db
      .selectFrom('webhook_endpoints as e')
      .innerJoin('tenants as t', 't.id', 'e.tenant_id')
      .select(['e.id', 'e.tenant_id', 'e.cursor_seq', 't.audit_seq'])
      .where('e.enabled', '=', 1)
      .orderBy('e.id')
      .execute()
    this.tenantsWithEndpoints = new Set(endpoints.map((e) => e.tenant_id))
    const turn = servedThisTurn(
      endpoints.filter((e) => e.audit_seq > e.cursor_seq),
      budget,
      this.nextServed,
    )
    this.nextServed = turn.nextServed
    const behind = turn.served
    this.lastFannedOut = 0
    if (behind.length === 0 && this.succeeded.length === 0) return 0
    // The records are read before the transaction, which is then only writes, held as briefly as it can be; a
    // tenant's endpoints at the same cursor share one read, so all read as many.
    const limit = fanOutLimit(budget, behind.length)
    const reads = new Map<string, EventRecord[]>()
    const pending: { tenantId: string; endpointId: string; cursor: number; records: EventRecord[] }[] = []
    for (const e of behind) {
      const key = `${e.tenant_id}/${e.cursor_seq}`
      let records = reads.get(key)
      if (!records) {
        records = await this.statements.eventsAfter(e.tenant_id, e.cursor_seq, limit)
        reads.set(key, records)
        if (records.length === limit) this.wake()
        this.lastFannedOut += records.length
      }
      pending.push({ tenantId: e.tenant_id, endpointId: e.id, cursor: e.cursor_seq, records })
    }
    const succeeded = this.succeeded
    this.succeeded = []
    let fresh: Omit<Claimed, 'resources'>[]
    try {
      fresh = await this.database.transaction(async (tx) => {
        await this.recordSucceeded(tx, succeeded)
        const fresh: Omit<Claimed, 'resources'>[] = []
        // What is in hand as the fan-out starts, with what it takes on the way: sends that end meanwhile only leave more room.
        const tenantsHeld = this.heldByTenant()
        let inHand = this.sends.size + this.waiting()
        for (const p of pending) {
          if (this.stopped) break
          const taken = await this.fanOutEndpoint(
            tx,
            p.tenantId,
            p.endpointId,
            p.cursor,
            p.records,
            this.room(p.tenantId, p.endpointId, inHand, tenantsHeld),
          )
          fresh.push(...taken)
          tenantsHeld.add(p.tenantId, taken.length)
          inHand += taken.length
        }
        return fresh
      })
    } catch (err) {
      // Recorded on the next turn; the fan-out is tried again from the same cursors.
      this.succeeded.push(...succeeded)
      throw err
    }
    if (fresh.length === 0) return 0
    // Should this read fail, the leases run out and claim() sends these deliveries.
    const resources = await this.resources(fresh.flatMap((f) => (f.record ? [f.record] : [])))
    this.enqueue(fresh.map((f) => ({ ...f, resources })))
    return fresh.length
  }

  /** How many deliveries of this endpoint may be taken in hand now (see room() in webhook-schedule.ts). */
  private room(tenantId: string, endpointId: string, inHand: number, tenantsHeld: Counts): number {
    const held = (this.queued.get(endpointId)?.length ?? 0) + this.inFlight.of(endpointId)
    return room(held, tenantsHeld.of(tenantId), inHand)
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
    let lock = tx
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('id', '=', endpointId)
    // Another instance fanning out this endpoint right now: leave it to that one.
    if (this.database.dialect === 'postgres') lock = lock.forUpdate().skipLocked()
    const endpoint = await lock.executeTakeFirst()
    // Fanned out since the records were read (by another instance): they are queued already.
    if (endpoint?.enabled !== 1 || endpoint.cursor_seq !== cursor || records.length === 0) return []
    const patterns = JSON.parse(endpoint.events) as string[]
    const at = now()
    const leaseUntil = this.leaseUntil()
    const fresh = records
      .filter((r) => matchesEvent(patterns, r.action))
      .map((record, i) => ({
        delivery: {
          ...newDelivery(tenantId, endpointId, record.id, record.action, at),
          ...(i < room && leased(leaseUntil)),
        },
        endpoint,
        record,
      }))
    const inserted =
      fresh.length === 0
        ? []
        : await this.statements.insertDeliveries(
            tx,
            tenantId,
            endpointId,
            at,
            fresh.map((f) => [f.delivery.id, f.record.id, f.record.action, f.delivery.lease_until]),
          )
    await tx
      .updateTable('webhook_endpoints')
      .set({ cursor_seq: records[records.length - 1].seq })
      .where('tenant_id', '=', tenantId)
      .where('id', '=', endpointId)
      .execute()
    // Only rows inserted here are sent from here: a record queued before (a conflict) keeps its own delivery.
    const ids = new Set(inserted)
    return fresh.filter((f) => f.delivery.lease_until !== null && ids.has(f.delivery.id))
  }

  /** A lease taken now: the send timeout and a margin. */
  private leaseUntil(): string {
    return new Date(Date.now() + this.timeoutMs + LEASE_MARGIN_MS).toISOString()
  }

  /**
   * Claims due deliveries of the endpoints with fewer than PER_ENDPOINT waiting and the tenants with fewer than
   * PER_TENANT_SENDS waiting (so they hold HELD_PER_ENDPOINT and HELD_PER_TENANT at most), reads the batch's endpoints and
   * audit records in one query each, and queues them for sending. An endpoint's queue drains as its sends finish,
   * without waiting for the next turn, so a fast endpoint is never held to PER_ENDPOINT sends per turn.
   */
  private async claim(budget: number): Promise<void> {
    const limit = claimLimit(budget, this.sends.size + this.waiting())
    if (limit <= 0 || this.stopped) return
    const { db, dialect } = this.database
    const at = now()
    // An endpoint's queue is refilled before it runs dry, so a fast endpoint always has its sends in flight.
    const busy = [...this.queued].filter(([, queue]) => queue.length >= PER_ENDPOINT).map(([id]) => id)
    const busyTenants = [...this.waitingByTenant()].filter(([, n]) => n >= PER_TENANT_SENDS).map(([id]) => id)
    let due = db
      .selectFrom('webhook_deliveries')
      .select('id')
      // A literal, so that the planner may read the index of pending deliveries, whose condition it is.
      .where('status', '=', sql.lit('pending'))
      .where('next_attempt_at', '<=', at)
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', at)]))
      .where('endpoint_id', 'in', db.selectFrom('webhook_endpoints').select('id').where('enabled', '=', 1))
      .orderBy('next_attempt_at')
      .limit(limit)
    if (busy.length > 0) due = due.where('endpoint_id', 'not in', busy)
    if (busyTenants.length > 0) due = due.where('tenant_id', 'not in', busyTenants)
    // Usually nothing is due (the fan-out leased the fresh deliveries): a read, then no write and no write lock.
    if (!(await due.limit(1).executeTakeFirst())) return
    if (dialect === 'postgres') due = due.forUpdate().skipLocked()
    const claimed = await db
      .updateTable('webhook_deliveries')
      .set(leased(this.leaseUntil()))
      .where('id', 'in', due)
      .returningAll()
      .execute()
    if (claimed.length === 0) return
    // A full batch means more may be due.
    if (claimed.length === limit) this.wake()
    const tenants = [...new Set(claimed.map((d) => d.tenant_id))]
    const endpointIds = [...new Set(claimed.map((d) => d.endpoint_id))]
    const auditIds = claimed.flatMap((d) => (d.audit_id === null ? [] : [d.audit_id]))
    const endpoints = new Map(
      (
        await db
          .selectFrom('webhook_endpoints')
          .selectAll()
          .where('tenant_id', 'in', tenants)
          .where('id', 'in', endpointIds)
          .execute()
      ).map((e) => [e.id, e]),
    )
    const records = new Map(
      auditIds.length === 0 ? [] : (await this.statements.eventsById(tenants, auditIds)).map((r) => [r.id, r]),
    )
    const resources = await this.resources(records.values())
    this.enqueue(
      claimed.map((delivery) => ({
        delivery,
        endpoint: endpoints.get(delivery.endpoint_id),
        record: delivery.audit_id === null ? undefined : records.get(delivery.audit_id),
        resources,
      })),
    )
  }

  /** Adds deliveries in hand to their endpoints' send queues and starts what can start. */
  private enqueue(batch: Claimed[]): void {
    for (const claimed of batch) {
      const queue = this.queued.get(claimed.delivery.endpoint_id) ?? []
      queue.push(claimed)
      this.queued.set(claimed.delivery.endpoint_id, queue)
    }
    this.sendQueued()
  }

  /** The records' resources, in one lookup per tenant and resource type: one statement for the rendered families. */
  private async resources(records: Iterable<EventRecord>): Promise<Map<string, string>> {
    const wanted = new Map<string, { tenantId: string; type: string; ids: Set<string> }>()
    for (const row of records) {
      if (row.resource_id === null) continue
      const key = `${row.tenant_id}/${row.resource_type}`
      const group = wanted.get(key) ?? { tenantId: row.tenant_id, type: row.resource_type, ids: new Set<string>() }
      group.ids.add(row.resource_id)
      wanted.set(key, group)
    }
    const found = new Map<string, string>()
    for (const [key, { tenantId, type, ids }] of wanted) {
      for (const [id, json] of await this.resolveResources(systemCtx(tenantId), type, [...ids]))
        found.set(`${key}/${id}`, json)
    }
    return found
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

  /** Deliveries in hand per tenant: waiting, and sending. */
  private heldByTenant(): Counts {
    const byTenant = this.waitingByTenant()
    for (const [tenantId, n] of this.tenantInFlight) byTenant.add(tenantId, n)
    return byTenant
  }

  /**
   * Starts queued sends while their endpoints (PER_ENDPOINT) and tenants (PER_TENANT_SENDS) have free slots and
   * CONCURRENCY allows.
   */
  private sendQueued(): void {
    for (const [endpointId, queue] of this.queued) {
      const tenantId = queue[0]?.delivery.tenant_id
      const free = () => maySend(this.inFlight.of(endpointId), this.tenantInFlight.of(tenantId), this.sends.size)
      while (queue.length > 0 && free() && !this.stopped) {
        const claimed = queue.shift()!
        // A send must end within its lease, or another instance could send it too; this one's lease runs out instead.
        if (Date.parse(claimed.delivery.lease_until!) - Date.now() < this.timeoutMs) continue
        this.inFlight.add(endpointId, 1)
        this.tenantInFlight.add(tenantId, 1)
        const send = this.deliver(claimed).finally(() => {
          this.sends.delete(send)
          this.inFlight.add(endpointId, -1)
          this.tenantInFlight.add(tenantId, -1)
          this.sendQueued()
          this.wake()
        })
        this.sends.add(send)
      }
      if (queue.length === 0) this.queued.delete(endpointId)
    }
  }

  private async deliver({ delivery, endpoint, record, resources }: Claimed): Promise<void> {
    try {
      // Deleted since it was queued: its deliveries went with it.
      if (!endpoint) return
      if (Date.parse(delivery.created_at) + DAY_MS < Date.now()) {
        await this.finish(delivery, { status: 'failed', last_error: 'gave up: not delivered within 24 h' })
        return
      }
      const event = this.eventBody(delivery, record, resources)
      if (event === null) {
        await this.finish(delivery, { status: 'failed', last_error: 'the audit record no longer exists' })
        return
      }
      const result = await this.post(endpoint, event.id, event.body)
      if (this.stopped) {
        await this.database.db.updateTable('webhook_deliveries').set(released()).where('id', '=', delivery.id).execute()
        return
      }
      await this.record(delivery, endpoint, result)
    } catch (err) {
      // The lease runs out and the delivery is tried again.
      if (!this.stopped)
        this.deps.log.warn(
          { err: (err as Error).message, delivery: delivery.id },
          'webhook delivery could not be recorded',
        )
    }
  }

  private eventBody(
    delivery: WebhookDeliveryRow,
    record: EventRecord | undefined,
    resources: Map<string, string>,
  ): { id: string; body: string } | null {
    if (delivery.payload !== null) return { id: `evt_${delivery.id}`, body: delivery.payload }
    if (!record) return null
    const resource =
      record.resource_id === null
        ? undefined
        : resources.get(`${record.tenant_id}/${record.resource_type}/${record.resource_id}`)
    const id = `evt_${record.id}`
    // The record's and the resource's JSON texts go in as they are: `data` is the record with `resource` as its last field.
    const head = JSON.stringify({
      id,
      type: record.action,
      created_at: record.created_at,
      tenant: record.tenant_id,
      sequence: record.seq,
    })
    return { id, body: `${head.slice(0, -1)},"data":${record.data.slice(0, -1)},"resource":${resource ?? 'null'}}}` }
  }

  /**
   * One signed POST: its host resolved (bounded per tenant, see WebhookResolver) and every address checked, the
   * connection made to those addresses only; no redirects followed, WEBHOOK_TIMEOUT_MS for the whole exchange.
   */
  private async post(endpoint: WebhookEndpointRow, eventId: string, body: string): Promise<SendResult> {
    const { config } = this.deps
    const url = new URL(endpoint.url)
    let addresses: ResolvedAddress[]
    try {
      addresses = await checkedAddresses(
        this.deps.webhookDns,
        endpoint.tenant_id,
        bareHost(url),
        config.webhookAllowPrivateNetworks,
      )
    } catch (err) {
      return { error: (err as Error).message }
    }
    const timestamp = Math.floor(Date.now() / 1000)
    const secrets: string[] = []
    try {
      secrets.push(this.secret(endpoint.secret))
      if (
        endpoint.previous_secret &&
        endpoint.previous_secret_expires_at &&
        endpoint.previous_secret_expires_at > now()
      ) {
        secrets.push(this.secret(endpoint.previous_secret))
      }
    } catch {
      return {
        error:
          'the signing secret cannot be decrypted: WEBHOOK_SECRET_KEY (or SERVICE_JWT_SECRET) changed since it was made; rotate the secret',
      }
    }
    const headers = {
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
      'user-agent': `aigov-webhooks/${SERVICE_VERSION}`,
      'webhook-id': eventId,
      'webhook-timestamp': String(timestamp),
    }
    const exchange = await this.sender.send(url.href, headers, body, secrets, addresses)
    return { status: exchange.status, error: exchange.error, retryAfterMs: parseRetryAfter(exchange.retryAfter) }
  }

  private secret(stored: string): string {
    let secret = this.secrets.get(stored)
    if (secret === undefined) {
      secret = decryptSecret(this.deps.webhookKey, stored)
      if (this.secrets.size >= SECRETS_KEPT) this.secrets.clear()
      this.secrets.set(stored, secret)
    }
    return secret
  }

  private async record(delivery: WebhookDeliveryRow, endpoint: WebhookEndpointRow, result: SendResult): Promise<void> {
    const { db } = this.database
    const at = now()
    const attempt = { attempts: delivery.attempts + 1, last_status_code: result.status ?? null, last_attempt_at: at }
    const status = result.status ?? 0
    if (status >= 200 && status < 300) {
      this.succeeded.push({ id: delivery.id, status })
      if (endpoint.failing_since !== null) {
        await db
          .updateTable('webhook_endpoints')
          .set({ failing_since: null })
          .where('tenant_id', '=', endpoint.tenant_id)
          .where('id', '=', endpoint.id)
          .execute()
      }
      return
    }
    const error = result.error ?? (result.status ? `the receiver answered ${result.status}` : 'no answer')
    // 410 Gone is the receiver saying "stop": Standard Webhooks asks senders to disable the endpoint.
    if (status === 410) {
      // What waits for this endpoint stays pending under its lease; disabled, the endpoint is claimed no more.
      this.queued.delete(endpoint.id)
      await this.finish(delivery, { ...attempt, status: 'failed', last_error: error })
      await this.disable(endpoint, 'the receiver answered 410 Gone')
      return
    }
    // The endpoint is marked failing before the attempt shows in its delivery log, so a reader of the log sees both.
    if (endpoint.failing_since === null) {
      await db
        .updateTable('webhook_endpoints')
        .set({ failing_since: at })
        .where('tenant_id', '=', endpoint.tenant_id)
        .where('id', '=', endpoint.id)
        .where('failing_since', 'is', null)
        .execute()
    } else if (Date.parse(endpoint.failing_since) + DAY_MS <= Date.now()) {
      await this.disable(endpoint, `every delivery has failed since ${endpoint.failing_since}`)
    }
    const next = Date.now() + Math.min(DAY_MS, result.retryAfterMs ?? backoffMs(attempt.attempts))
    const giveUp = next > Date.parse(delivery.created_at) + DAY_MS
    await db
      .updateTable('webhook_deliveries')
      .set({
        ...attempt,
        status: giveUp ? 'failed' : 'pending',
        last_error: error,
        next_attempt_at: giveUp ? null : new Date(next).toISOString(),
        lease_until: null,
        updated_at: at,
      })
      .where('tenant_id', '=', delivery.tenant_id)
      .where('id', '=', delivery.id)
      .execute()
  }

  private async finish(delivery: WebhookDeliveryRow, set: Partial<WebhookDeliveryRow>): Promise<void> {
    await this.database.db
      .updateTable('webhook_deliveries')
      .set({ ...set, next_attempt_at: null, lease_until: null, updated_at: now() })
      .where('tenant_id', '=', delivery.tenant_id)
      .where('id', '=', delivery.id)
      .execute()
  }

  /** Disables a failing endpoint, with its audit record (which other endpoints may receive as an event). */
  private async disable(endpoint: WebhookEndpointRow, reason: string): Promise<void> {
    await runMutation(this.database, systemCtx(endpoint.tenant_id), async (tx) => {
      const row = await tx
        .selectFrom('webhook_endpoints')
        .select(['enabled'])
        .where('tenant_id', '=', endpoint.tenant_id)
        .where('id', '=', endpoint.id)
        .executeTakeFirst()
      if (row?.enabled !== 1) return { result: undefined, audit: [] }
      const at = now()
      await tx
        .updateTable('webhook_endpoints')
        .set({ enabled: 0, disabled_reason: reason, updated_at: at })
        .where('tenant_id', '=', endpoint.tenant_id)
        .where('id', '=', endpoint.id)
        .execute()
      return {
        result: undefined,
        audit: {
          action: 'webhook_endpoint.disabled',
          resourceType: 'webhook_endpoint',
          resourceId: endpoint.id,
          resourceName: auditName(endpoint.url),
          changes: { enabled: [true, false] },
          metadata: { reason },
        },
      }
    })
    this.deps.log.warn({ endpoint: endpoint.id, tenant: endpoint.tenant_id, reason }, 'webhook endpoint disabled')
  }

  /** Marks acknowledged deliveries succeeded: one statement per status code. */
  private async recordSucceeded(tx: Tx, batch: { id: string; status: number }[]): Promise<void> {
    const at = now()
    for (const status of new Set(batch.map((b) => b.status))) {
      await this.statements.recordSucceeded(
        tx,
        status,
        batch.filter((b) => b.status === status).map((b) => b.id),
        at,
      )
    }
  }

  /**
   * Deletes what is done and older than RETENTION_MS, read through the primary key: an id's time is never earlier
   * than its delivery's creation. A retried delivery keeps its id and takes a new creation time, so that is tested too.
   */
  private async cleanup(): Promise<void> {
    this.lastCleanup = Date.now()
    const beforeMs = Date.now() - RETENTION_MS
    await this.database.db
      .deleteFrom('webhook_deliveries')
      .where('id', '<', idFloor('whd', beforeMs))
      .where('created_at', '<', new Date(beforeMs).toISOString())
      .where('status', '!=', 'pending')
      .execute()
  }
}
