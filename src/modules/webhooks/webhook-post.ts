import type { WebhookDeliveryRow, WebhookEndpointRow } from '../../db/tables.js'
import { type Ctx, systemCtx } from '../../shared/context.js'
import type { Deps } from '../../shared/deps.js'
import { now } from '../../shared/ids.js'
import { SERVICE_VERSION } from '../../version.js'
import type { ResolvedAddress } from './webhook-dns.js'
import { parseRetryAfter } from './webhook-schedule.js'
import { decryptSecret } from './webhook-secrets.js'
import { WebhookSender } from './webhook-sender.js'
import { bareHost, checkedAddresses } from './webhook-targets.js'
import type { EventRecord } from './webhooks.delivery-repo.js'

/** Returns resources of one type as the JSON text of their GET, by id; those that are gone are left out. */
export type ResourceResolver = (ctx: Ctx, resourceType: string, resourceIds: string[]) => Promise<Map<string, string>>

/** What one attempt came to: the receiver's status, or why there was none, and how long it asked to wait. */
export interface SendResult {
  status?: number
  error?: string
  retryAfterMs?: number
}

/** Decrypted signing secrets kept at most: a few per endpoint (current, previous), for many endpoints. */
const SECRETS_KEPT = 1000

/**
 * The records' resources as JSON text by `tenant/type/id`, in one lookup per tenant and resource type: one
 * statement for the rendered families.
 */
export async function resourcesOf(
  resolve: ResourceResolver,
  records: Iterable<EventRecord>,
): Promise<Map<string, string>> {
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
    for (const [id, json] of await resolve(systemCtx(tenantId), type, [...ids])) found.set(`${key}/${id}`, json)
  }
  return found
}

/** A delivery's event: its id and JSON text (a ping's stored payload, or its audit record's); null when the record is gone. */
export function eventBody(
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
 * Signed POSTs: each one's host resolved (bounded per tenant, see WebhookResolver) and every address checked, the
 * connection made to those addresses only, by the sending thread (webhook-sender.ts), which signs the request.
 */
export class WebhookPoster {
  /** The HTTP exchanges, on a thread of their own; every connection it opens goes to an address checked here. */
  private readonly sender: WebhookSender
  /**
   * Signing secrets by their stored ciphertext: decrypted once, not on every send. A rotation stores a new
   * ciphertext, so it is never served a stale secret.
   */
  private readonly secrets = new Map<string, string>()

  constructor(private readonly deps: Pick<Deps, 'config' | 'webhookKey' | 'webhookDns'>) {
    this.sender = new WebhookSender({ timeoutMs: deps.config.webhookTimeoutMs })
  }

  /** One signed POST of `body`: no redirects followed, WEBHOOK_TIMEOUT_MS for the whole exchange. */
  async post(endpoint: WebhookEndpointRow, eventId: string, body: string): Promise<SendResult> {
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

  /** Ends the sending thread: sends in flight end with an error, later ones at once. */
  stop(): Promise<void> {
    return this.sender.stop()
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
}
