import type { WebhookDeliveryRow, WebhookEndpointRow } from '../../db/tables.js'
import { systemCtx } from '../../shared/context.js'
import type { Deps } from '../../shared/deps.js'
import { now } from '../../shared/ids.js'
import { runMutation, type Tx } from '../../shared/mutation.js'
import type { SendResult } from './webhook-post.js'
import { backoffMs } from './webhook-schedule.js'
import type { SendQueue } from './webhook-send-queue.js'
import { deleteFinishedBefore, type DispatchStatements, markFailing } from './webhooks.delivery-repo.js'
import { findEndpoint, updateDelivery, updateEndpoint } from './webhooks.repo.js'
import { auditName } from './webhooks.service.js'

const DAY_MS = 24 * 3600 * 1000
const RETENTION_MS = 30 * DAY_MS

/** An acknowledged delivery, to be marked succeeded. */
export interface Success {
  id: string
  status: number
}

/**
 * Records what each attempt came to. A success is kept and written with the next turn's writes (one statement for
 * many); a failure is written at once, due again after its backoff (or Retry-After), failed once 24 h have passed
 * since the delivery was made; an endpoint answering 410 Gone, or failing for 24 h, is disabled with an audit record.
 */
export class WebhookRecorder {
  /** Acknowledged deliveries, recorded together on the next turn of the loop. */
  private succeeded: Success[] = []

  constructor(
    private readonly deps: Pick<Deps, 'database' | 'log'> & { statements: DispatchStatements; queue: SendQueue },
  ) {}

  /** Whether successes wait to be recorded. */
  hasSuccesses(): boolean {
    return this.succeeded.length > 0
  }

  /** The successes waiting, handed to the caller to record (see recordSucceeded); give them back should that fail. */
  takeSuccesses(): Success[] {
    const succeeded = this.succeeded
    this.succeeded = []
    return succeeded
  }

  giveBack(batch: Success[]): void {
    this.succeeded.push(...batch)
  }

  /** Marks acknowledged deliveries succeeded: one statement per status code. */
  async recordSucceeded(tx: Tx, batch: Success[]): Promise<void> {
    const at = now()
    for (const status of new Set(batch.map((b) => b.status))) {
      await this.deps.statements.recordSucceeded(
        tx,
        status,
        batch.filter((b) => b.status === status).map((b) => b.id),
        at,
      )
    }
  }

  /** Records the successes waiting, as the dispatcher stops (best effort: unrecorded, they are sent again). */
  async flush(): Promise<void> {
    if (this.succeeded.length > 0)
      await this.recordSucceeded(this.deps.database.db, this.succeeded).catch(() => undefined)
  }

  /** Records the result of an attempt. */
  async record(delivery: WebhookDeliveryRow, endpoint: WebhookEndpointRow, result: SendResult): Promise<void> {
    const { db } = this.deps.database
    const at = now()
    const attempt = { attempts: delivery.attempts + 1, last_status_code: result.status ?? null, last_attempt_at: at }
    const status = result.status ?? 0
    if (status >= 200 && status < 300) {
      this.succeeded.push({ id: delivery.id, status })
      if (endpoint.failing_since !== null)
        await updateEndpoint(db, endpoint.tenant_id, endpoint.id, { failing_since: null })
      return
    }
    const error = result.error ?? (result.status ? `the receiver answered ${result.status}` : 'no answer')
    // 410 Gone is the receiver saying "stop": Standard Webhooks asks senders to disable the endpoint.
    if (status === 410) {
      // What waits for this endpoint stays pending under its lease; disabled, the endpoint is claimed no more.
      this.deps.queue.drop(endpoint.id)
      await this.finish(delivery, { ...attempt, status: 'failed', last_error: error })
      await this.disable(endpoint, 'the receiver answered 410 Gone')
      return
    }
    // The endpoint is marked failing before the attempt shows in its delivery log, so a reader of the log sees both.
    if (endpoint.failing_since === null) {
      await markFailing(db, endpoint.tenant_id, endpoint.id, at)
    } else if (Date.parse(endpoint.failing_since) + DAY_MS <= Date.now()) {
      await this.disable(endpoint, `every delivery has failed since ${endpoint.failing_since}`)
    }
    const next = Date.now() + Math.min(DAY_MS, result.retryAfterMs ?? backoffMs(attempt.attempts))
    const giveUp = next > Date.parse(delivery.created_at) + DAY_MS
    await updateDelivery(db, delivery.tenant_id, delivery.id, {
      ...attempt,
      status: giveUp ? 'failed' : 'pending',
      last_error: error,
      next_attempt_at: giveUp ? null : new Date(next).toISOString(),
      lease_until: null,
      updated_at: at,
    })
  }

  /** Whether the delivery was made more than 24 h ago: it is given up, not sent. */
  expired(delivery: WebhookDeliveryRow): boolean {
    return Date.parse(delivery.created_at) + DAY_MS < Date.now()
  }

  /** Ends a delivery without another attempt. */
  async finish(delivery: WebhookDeliveryRow, set: Partial<WebhookDeliveryRow>): Promise<void> {
    await updateDelivery(this.deps.database.db, delivery.tenant_id, delivery.id, {
      ...set,
      next_attempt_at: null,
      lease_until: null,
      updated_at: now(),
    })
  }

  /** Deletes what is done and older than RETENTION_MS. */
  async deleteExpired(): Promise<void> {
    await deleteFinishedBefore(this.deps.database.db, Date.now() - RETENTION_MS)
  }

  /** Disables a failing endpoint, with its audit record (which other endpoints may receive as an event). */
  private async disable(endpoint: WebhookEndpointRow, reason: string): Promise<void> {
    await runMutation(this.deps.database, systemCtx(endpoint.tenant_id), async (tx) => {
      const row = await findEndpoint(tx, endpoint.tenant_id, endpoint.id)
      if (row?.enabled !== 1) return { result: undefined, audit: [] }
      await updateEndpoint(tx, endpoint.tenant_id, endpoint.id, {
        enabled: 0,
        disabled_reason: reason,
        updated_at: now(),
      })
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
}
