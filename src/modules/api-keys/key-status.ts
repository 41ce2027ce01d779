import { EventEmitter } from 'node:events'
import type { Kysely } from 'kysely'
import type { Tables } from '../../db/tables.js'
import type { Role } from '../../shared/context.js'
import { now } from '../../shared/ids.js'

/** How long a key's "still valid" answer is trusted before the database is asked again. */
export const KEY_STATUS_TTL_MS = 2000

/** What a request needs of its key: its name, its role now (not the one a token was issued with), and when it expires. */
export interface ActiveKey {
  name: string
  role: Role
  /** ms since the epoch; null: never. */
  expiresAt: number | null
}

interface Entry {
  /** The key while it is valid; null once revoked, expired or gone. */
  key: ActiveKey | null
  checkedAt: number
}

/**
 * Answers "is this API key still valid?" for every authenticated request without a query each time.
 * A revocation on this instance applies at once; on other instances within KEY_STATUS_TTL_MS
 * (sooner when a Redis fan-out marks it revoked). Tells its 'revoked' listeners (open event streams) both ways.
 */
export class KeyStatusCache extends EventEmitter<{ revoked: [tenantId: string, keyId: string] }> {
  private readonly entries = new Map<string, Entry>()
  private readonly inFlight = new Map<string, Promise<ActiveKey | null>>()

  constructor(private readonly db: Kysely<Tables>) {
    super()
  }

  /** The key's name and current role if it is still valid, else null. */
  activeKey(tenantId: string, keyId: string): Promise<ActiveKey | null> | ActiveKey | null {
    const cacheKey = `${tenantId}/${keyId}`
    const entry = this.entries.get(cacheKey)
    if (entry && Date.now() - entry.checkedAt < KEY_STATUS_TTL_MS) return entry.key
    let pending = this.inFlight.get(cacheKey)
    if (!pending) {
      pending = this.load(tenantId, keyId).then(
        (key) => {
          this.entries.set(cacheKey, { key, checkedAt: Date.now() })
          this.inFlight.delete(cacheKey)
          return key
        },
        (err) => {
          this.inFlight.delete(cacheKey)
          throw err
        },
      )
      this.inFlight.set(cacheKey, pending)
    }
    return pending
  }

  /** Marks a key revoked on this instance immediately. */
  markRevoked(tenantId: string, keyId: string): void {
    this.entries.set(`${tenantId}/${keyId}`, { key: null, checkedAt: Date.now() })
    this.emit('revoked', tenantId, keyId)
  }

  /** Drops what is known of a key, so the next request asks the database. */
  forget(tenantId: string, keyId: string): void {
    this.entries.delete(`${tenantId}/${keyId}`)
  }

  private async load(tenantId: string, keyId: string): Promise<ActiveKey | null> {
    const row = await this.db
      .selectFrom('api_keys')
      .select(['name', 'role', 'revoked_at', 'expires_at'])
      .where('tenant_id', '=', tenantId)
      .where('id', '=', keyId)
      .executeTakeFirst()
    const valid = row !== undefined && row.revoked_at === null && (row.expires_at === null || row.expires_at > now())
    return valid
      ? {
          name: row.name,
          role: row.role as Role,
          expiresAt: row.expires_at === null ? null : Date.parse(row.expires_at),
        }
      : null
  }
}
