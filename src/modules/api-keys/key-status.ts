import type { Kysely } from 'kysely'
import type { Tables } from '../../db/tables.js'
import { now } from '../../shared/ids.js'

/** How long a key's "still valid" answer is trusted before the database is asked again. */
export const KEY_STATUS_TTL_MS = 2000

interface Entry {
  /** The key's name while it is valid; null once revoked, expired or gone. */
  name: string | null
  checkedAt: number
}

/**
 * Answers "is this API key still valid?" for every authenticated request without a query each time.
 * A revocation on this instance applies at once; on other instances within KEY_STATUS_TTL_MS
 * (sooner when a Redis fan-out calls `forget`).
 */
export class KeyStatusCache {
  private readonly entries = new Map<string, Entry>()
  private readonly inFlight = new Map<string, Promise<string | null>>()

  constructor(private readonly db: Kysely<Tables>) {}

  /** The key's name if it is still valid, else null. */
  activeKeyName(tenantId: string, keyId: string): Promise<string | null> | string | null {
    const cacheKey = `${tenantId}/${keyId}`
    const entry = this.entries.get(cacheKey)
    if (entry && Date.now() - entry.checkedAt < KEY_STATUS_TTL_MS) return entry.name
    let pending = this.inFlight.get(cacheKey)
    if (!pending) {
      pending = this.load(tenantId, keyId).then(
        (name) => {
          this.entries.set(cacheKey, { name, checkedAt: Date.now() })
          this.inFlight.delete(cacheKey)
          return name
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
    this.entries.set(`${tenantId}/${keyId}`, { name: null, checkedAt: Date.now() })
  }

  /** Drops what is known of a key, so the next request asks the database. */
  forget(tenantId: string, keyId: string): void {
    this.entries.delete(`${tenantId}/${keyId}`)
  }

  private async load(tenantId: string, keyId: string): Promise<string | null> {
    const row = await this.db
      .selectFrom('api_keys')
      .select(['name', 'revoked_at', 'expires_at'])
      .where('tenant_id', '=', tenantId)
      .where('id', '=', keyId)
      .executeTakeFirst()
    const valid = row !== undefined && row.revoked_at === null && (row.expires_at === null || row.expires_at > now())
    return valid ? row.name : null
  }
}
