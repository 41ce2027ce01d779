import type { WebhookDeliveryRow, WebhookEndpointRow } from '../../db/tables.js'
import { AppError, conflict, invalid, notFound } from '../../http/errors.js'
import type { Columns } from '../../shared/catalog.js'
import type { Ctx } from '../../shared/context.js'
import type { Deps } from '../../shared/deps.js'
import { newId, now } from '../../shared/ids.js'
import { derive, flag, ID, list, plain, stored, TIME } from '../../shared/fields.js'
import { auditedUpdate, runMutation } from '../../shared/mutation.js'
import { keyset, type Page, toPage } from '../../shared/pagination.js'
import * as repo from './webhooks.repo.js'
import type {
  WebhookDelivery,
  WebhookDeliveryListQuery,
  WebhookEndpoint,
  WebhookEndpointCreate,
  WebhookEndpointListQuery,
  WebhookEndpointUpdate,
  WebhookEndpointWithSecret,
} from './webhooks.schemas.js'
import { encryptSecret, generateWebhookSecret } from './webhook-secrets.js'
import { bareHost, BlockedTargetError, checkedAddresses, urlProblem } from './webhook-targets.js'

export type WebhooksService = ReturnType<typeof createWebhooksService>

/** After a rotation the previous secret also signs for this long, so receivers can switch without losing events. */
export const PREVIOUS_SECRET_GRACE_MS = 24 * 3600 * 1000

/** Each field of a webhook endpoint, once (see shared/fields.ts); its secrets are never in the item. */
const fields = derive<WebhookEndpointRow, WebhookEndpoint, WebhookEndpointCreate, WebhookEndpointUpdate>({
  id: ID,
  url: plain(),
  description: plain(),
  events: list(),
  enabled: flag({ default: true }),
  // The sender sets these when it gives up on an endpoint; re-enabling clears them.
  disabled_reason: stored(),
  failing_since: stored(),
  created_at: TIME,
  updated_at: TIME,
})

/**
 * Endpoints of one tenant at most. Every turn of the dispatcher reads every enabled endpoint and fans each of a
 * tenant's events out to all of its endpoints, so their number is a cost the tenant would otherwise set for every
 * tenant. Concurrent creates may pass it by a few: it is a bound, not a quota.
 */
export const ENDPOINTS_PER_TENANT = 50

export function createWebhooksService(deps: Pick<Deps, 'database' | 'config' | 'webhookKey' | 'webhookDns'>) {
  const { database, config, webhookKey, webhookDns } = deps
  const { db } = database

  async function requireEndpoint(ctx: Ctx, id: string, tx = db): Promise<WebhookEndpointRow> {
    const row = await repo.findEndpoint(tx, ctx.tenantId, id)
    if (!row) throw notFound('webhook endpoint', id)
    return row
  }

  /**
   * Refuses a URL by its form, or because its host resolves to an address a webhook may not reach. The lookup is
   * the tenant's, bounded by WEBHOOK_DNS_TIMEOUT_MS; with private networks allowed there is nothing to look up.
   */
  async function checkUrl(ctx: Ctx, url: string): Promise<void> {
    const problem = urlProblem(url)
    if (problem) throw invalid('url', problem)
    if (config.webhookAllowPrivateNetworks) return
    try {
      await checkedAddresses(webhookDns, ctx.tenantId, bareHost(new URL(url)), false)
    } catch (err) {
      if (err instanceof BlockedTargetError)
        throw invalid('url', `${err.message}; allowed only with WEBHOOK_ALLOW_PRIVATE_NETWORKS=true`)
      // A name that does not resolve (yet, or in time) may later: every send resolves and checks it again.
    }
  }

  return {
    async list(ctx: Ctx, query: WebhookEndpointListQuery): Promise<Page<WebhookEndpoint>> {
      const ks = keyset(query)
      return toPage(await repo.listEndpoints(db, ctx.tenantId, ks), ks, toEndpoint)
    },

    async get(ctx: Ctx, id: string): Promise<WebhookEndpoint> {
      return toEndpoint(await requireEndpoint(ctx, id))
    },

    /** Creates an endpoint; its signing secret is in the result and, encrypted, in the database only. */
    async create(ctx: Ctx, input: WebhookEndpointCreate): Promise<WebhookEndpointWithSecret> {
      await checkUrl(ctx, input.url)
      const secret = generateWebhookSecret()
      const at = now()
      const created = await runMutation(database, ctx, async (tx) => {
        if ((await repo.countEndpoints(tx, ctx.tenantId)) >= ENDPOINTS_PER_TENANT) {
          throw conflict(
            `this tenant has ${ENDPOINTS_PER_TENANT} webhook endpoints, the most it may have: delete one to make another`,
          )
        }
        const row: WebhookEndpointRow = {
          id: newId('whep'),
          tenant_id: ctx.tenantId,
          ...(fields.createColumns(input, ctx) as Columns<WebhookEndpointRow>),
          secret: encryptSecret(webhookKey, secret),
          previous_secret: null,
          previous_secret_expires_at: null,
          // Events from this transaction on, its own creation included.
          cursor_seq: await repo.tenantAuditSeq(tx, ctx.tenantId),
          failing_since: null,
          disabled_reason: null,
          created_at: at,
          updated_at: at,
        }
        await repo.insertEndpoint(tx, row)
        const endpoint = toEndpoint(row)
        return {
          result: { ...endpoint, secret, secret_shown: true },
          audit: {
            action: 'webhook_endpoint.created',
            resourceType: 'webhook_endpoint',
            resourceId: row.id,
            resourceName: auditName(row.url),
            metadata: { events: input.events, enabled: endpoint.enabled },
          },
        }
      })
      if (created.enabled) database.commits.emit('webhookEndpoints', ctx.tenantId)
      return created
    },

    async update(ctx: Ctx, id: string, input: WebhookEndpointUpdate): Promise<WebhookEndpoint> {
      if (input.url !== undefined) await checkUrl(ctx, input.url)
      const updated = await runMutation(database, ctx, async (tx) => {
        const row = await requireEndpoint(ctx, id, tx)
        const changes: Partial<WebhookEndpointRow> = fields.updateColumns(input, ctx)
        const before = toEndpoint(row)
        const after = toEndpoint({ ...row, ...changes })
        const enabling = !before.enabled && after.enabled
        return auditedUpdate(
          {
            before,
            after: enabling ? { ...after, disabled_reason: null, failing_since: null } : after,
            fields: fields.audited,
            audit: {
              action: 'webhook_endpoint.updated',
              resourceType: 'webhook_endpoint',
              resourceId: id,
              resourceName: auditName(after.url),
            },
          },
          async (updatedAt) => {
            await repo.updateEndpoint(tx, ctx.tenantId, id, {
              ...changes,
              updated_at: updatedAt,
              // A disabled endpoint queues nothing; enabled again, it takes events from now on.
              ...(enabling
                ? {
                    cursor_seq: await repo.tenantAuditSeq(tx, ctx.tenantId),
                    failing_since: null,
                    disabled_reason: null,
                  }
                : {}),
            })
          },
        )
      })
      if (updated.enabled) database.commits.emit('webhookEndpoints', ctx.tenantId)
      return updated
    },

    async remove(ctx: Ctx, id: string): Promise<void> {
      await runMutation(database, ctx, async (tx) => {
        const row = await requireEndpoint(ctx, id, tx)
        await repo.deleteEndpoint(tx, ctx.tenantId, id)
        return {
          result: undefined,
          audit: {
            action: 'webhook_endpoint.deleted',
            resourceType: 'webhook_endpoint',
            resourceId: id,
            resourceName: auditName(row.url),
          },
        }
      })
    },

    /** A new signing secret; the previous one keeps signing alongside it for PREVIOUS_SECRET_GRACE_MS. */
    async rotateSecret(ctx: Ctx, id: string): Promise<WebhookEndpointWithSecret> {
      const secret = generateWebhookSecret()
      return runMutation(database, ctx, async (tx) => {
        const row = await requireEndpoint(ctx, id, tx)
        const at = now()
        const set = {
          secret: encryptSecret(webhookKey, secret),
          previous_secret: row.secret,
          previous_secret_expires_at: new Date(Date.parse(at) + PREVIOUS_SECRET_GRACE_MS).toISOString(),
          updated_at: at,
        }
        await repo.updateEndpoint(tx, ctx.tenantId, id, set)
        return {
          result: { ...toEndpoint({ ...row, ...set }), secret, secret_shown: true },
          audit: {
            action: 'webhook_endpoint.secret_rotated',
            resourceType: 'webhook_endpoint',
            resourceId: id,
            resourceName: auditName(row.url),
            metadata: { previous_secret_expires_at: set.previous_secret_expires_at },
          },
        }
      })
    },

    /** Queues a `ping` event to the endpoint (even a disabled one), delivered like any other. */
    async test(ctx: Ctx, id: string): Promise<WebhookDelivery> {
      return runMutation(database, ctx, async (tx) => {
        const endpoint = await requireEndpoint(ctx, id, tx)
        const at = now()
        const deliveryId = newId('whd')
        const payload = {
          id: `evt_${deliveryId}`,
          type: 'ping',
          created_at: at,
          tenant: ctx.tenantId,
          sequence: null,
          data: { endpoint_id: id, message: 'ping' },
        }
        const row: WebhookDeliveryRow = {
          ...newDelivery(ctx.tenantId, endpoint.id, null, 'ping', at),
          id: deliveryId,
          payload: JSON.stringify(payload),
        }
        await repo.insertDelivery(tx, row)
        return {
          result: toDelivery(row),
          audit: {
            action: 'webhook_endpoint.tested',
            resourceType: 'webhook_endpoint',
            resourceId: id,
            resourceName: auditName(endpoint.url),
            subObjectType: 'webhook_delivery',
            subObjectId: row.id,
          },
        }
      })
    },

    /**
     * Each endpoint with its delivery counts (the log's 30 days), last success, and the tenant's audit records after
     * its cursor (not yet queued: a busy API, or no instance delivering), for operators.
     */
    async health(ctx: Ctx): Promise<EndpointHealth[]> {
      const rows = await repo.deliveryHealth(db, ctx.tenantId)
      const logEnd = await repo.tenantAuditSeq(db, ctx.tenantId)
      const endpoints: EndpointHealth[] = []
      let cursor: string | undefined
      do {
        const ks = keyset({ page_limit: 100, page_after: cursor })
        const stored = await repo.listEndpoints(db, ctx.tenantId, ks)
        const cursors = new Map(stored.map((e) => [e.id, e.cursor_seq]))
        const page = toPage(stored, ks, toEndpoint)
        for (const endpoint of page.items) {
          const mine = rows.filter((r) => r.endpoint_id === endpoint.id)
          const count = (status: string) => Number(mine.find((r) => r.status === status)?.count ?? 0)
          const lastSuccess = mine.find((r) => r.status === 'succeeded')?.last_attempt_at ?? null
          const behind = endpoint.enabled ? logEnd - cursors.get(endpoint.id)! : 0
          endpoints.push({
            ...endpoint,
            pending: count('pending'),
            behind,
            succeeded: count('succeeded'),
            failed: count('failed'),
            last_success_at: lastSuccess,
          })
        }
        cursor = page.pagination.next_cursor ?? undefined
      } while (cursor)
      return endpoints
    },

    async listDeliveries(
      ctx: Ctx,
      endpointId: string,
      query: WebhookDeliveryListQuery,
    ): Promise<Page<WebhookDelivery>> {
      await requireEndpoint(ctx, endpointId)
      const { page_limit, page_after, ...filter } = query
      const ks = keyset({ page_limit, page_after, sort: '-id' })
      return toPage(await repo.listDeliveries(db, ctx.tenantId, endpointId, filter, ks), ks, toDelivery)
    },

    /** Sends a delivery again as soon as possible, whatever its state; its 24 h retry window starts afresh. */
    async retryDelivery(ctx: Ctx, endpointId: string, deliveryId: string): Promise<WebhookDelivery> {
      return runMutation(database, ctx, async (tx) => {
        const endpoint = await requireEndpoint(ctx, endpointId, tx)
        const row = await repo.findDelivery(tx, ctx.tenantId, endpointId, deliveryId)
        if (!row) throw notFound('webhook delivery', deliveryId)
        if (row.status === 'pending' && row.lease_until !== null && row.lease_until > now())
          throw new AppError('conflict', `delivery ${deliveryId} is being sent right now`)
        const at = now()
        const set = {
          status: 'pending' as const,
          next_attempt_at: at,
          created_at: at,
          updated_at: at,
          lease_until: null,
        }
        await repo.updateDelivery(tx, ctx.tenantId, deliveryId, set)
        return {
          result: toDelivery({ ...row, ...set }),
          audit: {
            action: 'webhook_delivery.retried',
            resourceType: 'webhook_endpoint',
            resourceId: endpointId,
            resourceName: auditName(endpoint.url),
            subObjectType: 'webhook_delivery',
            subObjectId: deliveryId,
            subObjectName: row.event_type,
          },
        }
      })
    },
  }
}

export type EndpointHealth = WebhookEndpoint & {
  pending: number
  behind: number
  succeeded: number
  failed: number
  last_success_at: string | null
}

/** An endpoint's name in its audit records: its URL, cut to what an audit record's name holds. */
export function auditName(url: string): string {
  return url.length <= 512 ? url : `${url.slice(0, 511)}…`
}

export function newDelivery(
  tenantId: string,
  endpointId: string,
  auditId: string | null,
  eventType: string,
  at: string,
): WebhookDeliveryRow {
  return {
    id: newId('whd'),
    tenant_id: tenantId,
    endpoint_id: endpointId,
    audit_id: auditId,
    event_type: eventType,
    payload: null,
    status: 'pending',
    attempts: 0,
    last_status_code: null,
    last_error: null,
    last_attempt_at: null,
    next_attempt_at: at,
    lease_until: null,
    created_at: at,
    updated_at: at,
  }
}

export const toEndpoint = (row: WebhookEndpointRow): WebhookEndpoint => fields.toItem(row)

export function toDelivery(row: WebhookDeliveryRow): WebhookDelivery {
  return {
    id: row.id,
    endpoint_id: row.endpoint_id,
    event_id: row.audit_id ? `evt_${row.audit_id}` : `evt_${row.id}`,
    event_type: row.event_type,
    status: row.status,
    attempts: row.attempts,
    last_status_code: row.last_status_code,
    last_error: row.last_error,
    last_attempt_at: row.last_attempt_at,
    next_attempt_at: row.status === 'pending' ? row.next_attempt_at : null,
    created_at: row.created_at,
    updated_at: row.updated_at,
  }
}
