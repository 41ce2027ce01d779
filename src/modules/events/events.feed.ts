import { EventEmitter } from 'node:events'
import type { Database } from '../../db/create-db.js'
import type { RedisClient } from '../../shared/redis.js'

const CHANNEL = 'aigov:audit-committed'

/**
 * Tells this instance's event streams that a tenant's audit log grew: at once for writes on this instance,
 * and through Redis pub/sub for writes on others. Streams also poll, so a lost message only delays them.
 */
export class AuditFeed extends EventEmitter<{ audit: [tenantId: string] }> {
  private subscriber: RedisClient | undefined

  constructor(
    private readonly database: Database,
    private readonly redis: RedisClient | undefined,
  ) {
    super()
    this.setMaxListeners(0)
  }

  /** True when other instances' commits reach this feed (through Redis), not only this instance's. */
  get hearsOtherInstances(): boolean {
    return this.redis !== undefined
  }

  /** How often a stream looks at the log when no message woke it. */
  get pollMs(): number {
    return this.hearsOtherInstances ? 5000 : 500
  }

  start(): void {
    this.database.commits.on('audit', this.onLocalCommit)
    if (!this.redis) return
    this.subscriber = this.redis.duplicate({ enableOfflineQueue: true })
    this.subscriber.on('error', () => undefined)
    this.subscriber.on('message', (_channel, tenantId) => this.emit('audit', tenantId))
    void this.subscriber.subscribe(CHANNEL).catch(() => undefined)
  }

  stop(): void {
    this.database.commits.off('audit', this.onLocalCommit)
    this.subscriber?.disconnect()
  }

  private readonly onLocalCommit = (tenantId: string) => {
    this.emit('audit', tenantId)
    this.redis?.publish(CHANNEL, tenantId).catch(() => undefined)
  }
}
