import { EventEmitter } from 'node:events'
import type { Database } from '../../db/create-db.js'
import { type RedisClient, subscribe } from '../../shared/redis.js'

/** What the feed tells, each with the tenant it concerns: the commits of the database's `commits` it passes on. */
type Notices = { audit: [tenantId: string]; webhookEndpoints: [tenantId: string] }

/** The Redis channel of each notice. */
const CHANNELS: Record<keyof Notices, string> = {
  audit: 'aigov:audit-committed',
  webhookEndpoints: 'aigov:webhook-endpoints-enabled',
}
const NOTICES = Object.keys(CHANNELS) as (keyof Notices)[]

/**
 * Tells this instance that a tenant's audit log grew ('audit': event streams, webhook delivery) or that one of its
 * webhook endpoints was created or enabled ('webhookEndpoints': webhook delivery): at once for commits on this
 * instance, and through Redis pub/sub for commits on others. Its listeners also poll, so a lost message only
 * delays them.
 */
export class AuditFeed extends EventEmitter<Notices> {
  private subscriber: RedisClient | undefined
  private readonly relays = NOTICES.map((notice) => ({
    notice,
    relay: (tenantId: string) => {
      this.emit(notice, tenantId)
      this.redis?.publish(CHANNELS[notice], tenantId).catch(() => undefined)
    },
  }))

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
    for (const { notice, relay } of this.relays) this.database.commits.on(notice, relay)
    if (!this.redis) return
    const byChannel = new Map(NOTICES.map((notice) => [CHANNELS[notice], notice]))
    this.subscriber = subscribe(this.redis, [...byChannel.keys()], (channel, tenantId) => {
      const notice = byChannel.get(channel)
      if (notice) this.emit(notice, tenantId)
    })
  }

  stop(): void {
    for (const { notice, relay } of this.relays) this.database.commits.off(notice, relay)
    this.subscriber?.disconnect()
  }
}
