import { camelize } from './case.js'
import type { Data } from './operations.js'

type HeadersLike = Headers | Record<string, string | string[] | undefined>

/** What the service POSTs to a webhook endpoint, camelCased like every record of this client. */
export interface WebhookEvent {
  id: string
  type: string
  createdAt: string
  tenant: string
  sequence: number | null
  data: Partial<Data<'getAuditLog'>> & { resource?: Record<string, unknown> | null; [key: string]: unknown }
}

export class WebhookVerificationError extends Error {}

/**
 * Checks a received webhook per Standard Webhooks and returns its event: the `webhook-signature` must hold a
 * `v1` HMAC-SHA256 by `secret` over `<webhook-id>.<webhook-timestamp>.<body>`, and the timestamp must be within
 * `toleranceSeconds` (default 300) of now, so a captured request cannot be replayed later. Pass the body exactly
 * as received (the raw text, not re-serialised JSON). Throws WebhookVerificationError otherwise.
 */
export async function verifyWebhook(
  secret: string,
  headers: HeadersLike,
  body: string,
  options: { toleranceSeconds?: number } = {},
): Promise<WebhookEvent> {
  const header = (name: string): string => {
    const value = headers instanceof Headers ? headers.get(name) : (headers[name] ?? headers[name.toLowerCase()])
    const text = Array.isArray(value) ? value[0] : value
    if (!text) throw new WebhookVerificationError(`missing ${name} header`)
    return text
  }
  const id = header('webhook-id')
  const timestamp = header('webhook-timestamp')
  const signatures = header('webhook-signature')
  const seconds = Number(timestamp)
  if (!/^\d+$/.test(timestamp) || Math.abs(Date.now() / 1000 - seconds) > (options.toleranceSeconds ?? 300)) {
    throw new WebhookVerificationError('webhook-timestamp is missing, malformed or too far from now')
  }
  const subtle = globalThis.crypto.subtle
  const key = await subtle.importKey(
    'raw',
    base64(secret.replace(/^whsec_/, '')),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['verify'],
  )
  const signed = new TextEncoder().encode(`${id}.${timestamp}.${body}`)
  for (const candidate of signatures.split(' ')) {
    const [version, signature] = candidate.split(',')
    if (version !== 'v1' || !signature) continue
    // subtle.verify compares in constant time.
    if (await subtle.verify('HMAC', key, base64(signature), signed)) return camelize(JSON.parse(body)) as WebhookEvent
  }
  throw new WebhookVerificationError('no webhook-signature matches this secret')
}

function base64(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text)
  const bytes = new Uint8Array(binary.length)
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i)
  return bytes
}
