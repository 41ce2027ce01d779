import type { Database } from '../../db/create-db.js'
import type { Deps } from '../../shared/deps.js'
import { CoalescedRuns } from '../../shared/coalesced-runs.js'
import { LoopLoad } from '../../shared/loop-load.js'
import type { AuditFeed } from '../events/events.feed.js'
import { WebhookClaimer } from './webhook-claimer.js'
import { WebhookOutbox } from './webhook-outbox.js'
import { eventBody, type ResourceResolver, WebhookPoster } from './webhook-post.js'
import { WebhookRecorder } from './webhook-recorder.js'
import { BUSY_AVERAGE_MS, turnInterval, turnPlan } from './webhook-schedule.js'
import { type Claimed, SendQueue } from './webhook-send-queue.js'
import { dispatchStatements, releaseLeases } from './webhooks.delivery-repo.js'

export type { ResourceResolver } from './webhook-post.js'
export { BUSY_RATE, PER_ENDPOINT, PER_TENANT_SENDS } from './webhook-schedule.js'

/** Commits that wake the loop (audit records, endpoints enabled): this instance's, and other instances' where the feed hears them. */
export type CommitFeed = Pick<AuditFeed, 'on' | 'off' | 'hearsOtherInstances'>

/**
 * How often the loop turns when nothing woke it: for retries come due, leases run out, and other instances'
 * commits, which wake it through the feed only when Redis carries them.
 */
const POLL_MS = 1000
const POLL_WITH_REDIS_MS = 5000
const CLEANUP_EVERY_MS = 3600 * 1000

/**
 * Turns committed audit records into signed webhook deliveries and sends them, in parts: the outbox fans the log
 * out into deliveries (webhook-outbox.ts), the claimer takes due ones in hand under a lease (webhook-claimer.ts),
 * the send queue starts them as the schedule's limits allow (webhook-send-queue.ts, webhook-schedule.ts), the
 * poster makes each signed POST (webhook-post.ts) and the recorder writes what it came to (webhook-recorder.ts).
 * This loop runs the turns, sends one delivery from its queue to its record, and stops them all.
 */
export class WebhookDispatcher {
  private readonly database: Database
  /** The longest a send may take: its host's lookup (WEBHOOK_DNS_TIMEOUT_MS), then its exchange (WEBHOOK_TIMEOUT_MS). */
  private readonly timeoutMs: number
  private readonly stopping = new AbortController()
  private readonly poster: WebhookPoster
  private readonly queue: SendQueue
  private readonly recorder: WebhookRecorder
  private readonly outbox: WebhookOutbox
  private readonly claimer: WebhookClaimer
  private timer: NodeJS.Timeout | undefined
  /** The turns of the loop: TURN_MS (QUICK_TURN_MS) after the last one started, wakes in between sharing one. */
  private readonly turns = new CoalescedRuns(
    () => this.run(),
    () => Math.max(0, this.lastTurn + turnInterval(this.yielding, this.outbox.lastFannedOut) - Date.now()),
  )
  private lastTurn = 0
  private readonly loopLoad = new LoopLoad(BUSY_AVERAGE_MS)
  /** Whether the API kept the event loop busy as the last turn started (see BUSY_UTILIZATION). */
  private yielding = false
  private lastCleanup = 0

  constructor(
    private readonly deps: Pick<Deps, 'database' | 'config' | 'webhookKey' | 'webhookDns' | 'log' | 'metrics'>,
    resolveResources: ResourceResolver,
    private readonly feed: CommitFeed,
  ) {
    this.database = deps.database
    const statements = dispatchStatements(deps.database)
    this.timeoutMs = deps.config.webhookDnsTimeoutMs + deps.config.webhookTimeoutMs
    const { signal } = this.stopping
    const wake = () => this.wake()
    this.poster = new WebhookPoster(deps)
    this.queue = new SendQueue({ timeoutMs: this.timeoutMs, signal, send: (c) => this.deliver(c), ended: wake })
    this.recorder = new WebhookRecorder({ database: deps.database, log: deps.log, statements, queue: this.queue })
    const parts = { database: deps.database, statements, queue: this.queue, resolveResources, signal, wake }
    this.outbox = new WebhookOutbox({ ...parts, recorder: this.recorder, timeoutMs: this.timeoutMs })
    this.claimer = new WebhookClaimer({ ...parts, timeoutMs: this.timeoutMs })
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
    this.stopping.abort()
    clearInterval(this.timer)
    const turnsEnded = this.turns.stop()
    this.feed.off('audit', this.onCommit)
    this.feed.off('webhookEndpoints', this.onEndpointEnabled)
    await this.poster.stop()
    await this.queue.settled()
    await turnsEnded
    await this.recorder.flush()
    const waiting = this.queue.takeWaiting()
    if (waiting.length > 0) await releaseLeases(this.database.db, waiting).catch(() => undefined)
  }

  private readonly onCommit = (tenantId: string) => {
    if (this.outbox.watches(tenantId)) this.wake()
  }

  /**
   * An endpoint created or enabled, here or on an instance the feed hears: its tenant's commits wake the loop from
   * now on, not only once a turn has read the endpoints again (up to POLL_MS, or POLL_WITH_REDIS_MS, later: seconds
   * of events sent late at the start of a subscription).
   */
  private readonly onEndpointEnabled = (tenantId: string) => {
    this.outbox.watch(tenantId)
    this.wake()
  }

  /** Asks for a turn of the loop (see `turns`). */
  wake(): void {
    this.turns.request()
  }

  /** One turn: the outbox's writes, then a claim of what is due within the turn's budget, and hourly the retention. */
  private async run(): Promise<void> {
    const sinceLastTurnMs = Date.now() - this.lastTurn
    this.lastTurn = Date.now()
    const load = this.loopLoad.sample()
    const { yielding, budget } = turnPlan(load, sinceLastTurnMs)
    this.yielding = yielding
    this.deps.metrics.webhookDeliveryYielding.set(yielding ? 1 : 0)
    try {
      const taken = await this.outbox.write(budget)
      await this.claimer.claim(budget - taken)
      if (Date.now() - this.lastCleanup > CLEANUP_EVERY_MS) {
        this.lastCleanup = Date.now()
        await this.recorder.deleteExpired()
      }
    } catch (err) {
      if (!this.stopping.signal.aborted)
        this.deps.log.warn({ err: (err as Error).message }, 'webhook dispatch failed; retrying on the next poll')
    }
  }

  /** Sends one delivery in hand and records what it came to; never rejects (unrecorded, its lease runs out). */
  private async deliver({ delivery, endpoint, record, resources }: Claimed): Promise<void> {
    try {
      // Deleted since it was queued: its deliveries went with it.
      if (!endpoint) return
      if (this.recorder.expired(delivery)) {
        await this.recorder.finish(delivery, { status: 'failed', last_error: 'gave up: not delivered within 24 h' })
        return
      }
      const event = eventBody(delivery, record, resources)
      if (event === null) {
        await this.recorder.finish(delivery, { status: 'failed', last_error: 'the audit record no longer exists' })
        return
      }
      const result = await this.poster.post(endpoint, event.id, event.body)
      if (this.stopping.signal.aborted) {
        await releaseLeases(this.database.db, [delivery.id])
        return
      }
      await this.recorder.record(delivery, endpoint, result)
    } catch (err) {
      // The lease runs out and the delivery is tried again.
      if (!this.stopping.signal.aborted)
        this.deps.log.warn(
          { err: (err as Error).message, delivery: delivery.id },
          'webhook delivery could not be recorded',
        )
    }
  }
}
