import { type RedisClient, subscribe } from '../../shared/redis.js'
import type { KeyStatusCache } from './key-status.js'

const CHANNEL = 'aigov:api-key-revoked'

const ANNOUNCE_WAIT_MS = 1000

/**
 * Tells every instance at once that a key was revoked (each also re-checks within KEY_STATUS_TTL_MS without Redis).
 * Resolves once Redis took the message, or after a second when it does not answer: a short-lived caller (the CLI)
 * waits for it before closing its connection.
 */
export async function announceRevocation(
  redis: RedisClient | undefined,
  tenantId: string,
  keyId: string,
): Promise<void> {
  if (!redis) return
  let timer: NodeJS.Timeout | undefined
  await Promise.race([
    redis.publish(CHANNEL, JSON.stringify({ tenantId, keyId })).catch(() => undefined),
    new Promise((resolve) => (timer = setTimeout(resolve, ANNOUNCE_WAIT_MS))),
  ])
  clearTimeout(timer)
}

/** Listens for revocations from other instances; returns the subscriber connection so it can be closed. */
export function listenForRevocations(redis: RedisClient, keyStatus: KeyStatusCache): RedisClient {
  return subscribe(redis, [CHANNEL], (_channel, message) => {
    try {
      const { tenantId, keyId } = JSON.parse(message) as { tenantId: string; keyId: string }
      keyStatus.markRevoked(tenantId, keyId)
    } catch {
      // Not ours: ignore.
    }
  })
}
