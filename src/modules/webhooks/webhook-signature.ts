import { createHmac } from 'node:crypto'

/**
 * The Standard Webhooks `webhook-signature` header of a request, one signature per secret, space-separated:
 * `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`, keyed by the secret's base64 bytes
 * after its `whsec_` prefix.
 */
export function signatureHeader(id: string, timestamp: string, body: string, secrets: readonly string[]): string {
  const message = `${id}.${timestamp}.${body}`
  return secrets
    .map(
      (secret) =>
        `v1,${createHmac('sha256', Buffer.from(secret.replace(/^whsec_/, ''), 'base64'))
          .update(message)
          .digest('base64')}`,
    )
    .join(' ')
}
