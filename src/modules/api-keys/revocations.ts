import type { RedisClient } from '../../shared/redis.js'
import type { KeyStatusCache } from './key-status.js'

const CHANNEL = 'aigov:api-key-revoked'

/** Tells every instance at once that a key was revoked (each also re-checks within KEY_STATUS_TTL_MS without Redis). */
export function announceRevocation(redis: RedisClient | undefined, tenantId: string, keyId: string): void {
  redis?.publish(CHANNEL, JSON.stringify({ tenantId, keyId })).catch(() => undefined)
}

/** Listens for revocations from other instances; returns the subscriber connection so it can be closed. */
export function listenForRevocations(redis: RedisClient, keyStatus: KeyStatusCache): RedisClient {
  const subscriber = redis.duplicate({ enableOfflineQueue: true })
  subscriber.on('error', () => undefined)
  subscriber.on('message', (_channel, message) => {
    try {
      const { tenantId, keyId } = JSON.parse(message) as { tenantId: string; keyId: string }
      keyStatus.markRevoked(tenantId, keyId)
    } catch {
      // Not ours: ignore.
    }
  })
  void subscriber.subscribe(CHANNEL).catch(() => undefined)
  return subscriber
}
