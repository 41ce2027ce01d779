import type { Kysely } from 'kysely'
import type { Tables } from '../../db/tables.js'

/** What oidc-provider hands its adapter: a record's fields, with the few the adapter indexes. */
export interface StoredPayload {
  grantId?: string
  uid?: string
  userCode?: string
  consumed?: number
  [key: string]: unknown
}

/** The interface oidc-provider expects of its storage, one instance per kind of record. */
export interface ProviderAdapter {
  upsert(id: string, payload: StoredPayload, expiresIn: number): Promise<void>
  find(id: string): Promise<StoredPayload | undefined>
  findByUid(uid: string): Promise<StoredPayload | undefined>
  findByUserCode(userCode: string): Promise<StoredPayload | undefined>
  consume(id: string): Promise<void>
  destroy(id: string): Promise<void>
  revokeByGrantId(grantId: string): Promise<void>
}

/**
 * oidc-provider's records in the one `oauth_records` table, on SQLite and PostgreSQL alike, so every instance
 * sees the same clients, grants and tokens and a revocation holds everywhere at once. An expired record is never
 * returned; expired ones of a kind are deleted as new ones of that kind are written.
 */
export function oauthAdapter(db: Kysely<Tables>): new (kind: string) => ProviderAdapter {
  const live = () => new Date().toISOString()
  return class OauthRecords implements ProviderAdapter {
    constructor(private readonly kind: string) {}

    async upsert(id: string, payload: StoredPayload, expiresIn: number): Promise<void> {
      const row = {
        payload: JSON.stringify(payload),
        expires_at: expiresIn ? new Date(Date.now() + expiresIn * 1000).toISOString() : null,
        grant_id: payload.grantId ?? null,
        uid: payload.uid ?? null,
        user_code: payload.userCode ?? null,
      }
      await db.deleteFrom('oauth_records').where('kind', '=', this.kind).where('expires_at', '<', live()).execute()
      await db
        .insertInto('oauth_records')
        .values({ kind: this.kind, id, ...row })
        .onConflict((oc) => oc.columns(['kind', 'id']).doUpdateSet(row))
        .execute()
    }

    find(id: string) {
      return this.findBy('id', id)
    }

    findByUid(uid: string) {
      return this.findBy('uid', uid)
    }

    findByUserCode(userCode: string) {
      return this.findBy('user_code', userCode)
    }

    async consume(id: string): Promise<void> {
      const found = await this.find(id)
      if (!found) return
      await db
        .updateTable('oauth_records')
        .set({ payload: JSON.stringify({ ...found, consumed: Math.floor(Date.now() / 1000) }) })
        .where('kind', '=', this.kind)
        .where('id', '=', id)
        .execute()
    }

    async destroy(id: string): Promise<void> {
      await db.deleteFrom('oauth_records').where('kind', '=', this.kind).where('id', '=', id).execute()
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      // Every kind: a revoked grant takes its codes, access and refresh tokens with it.
      await db.deleteFrom('oauth_records').where('grant_id', '=', grantId).execute()
    }

    private async findBy(column: 'id' | 'uid' | 'user_code', value: string): Promise<StoredPayload | undefined> {
      const row = await db
        .selectFrom('oauth_records')
        .select(['payload', 'expires_at'])
        .where('kind', '=', this.kind)
        .where(column, '=', value)
        .executeTakeFirst()
      if (!row || (row.expires_at !== null && row.expires_at <= live())) return undefined
      return JSON.parse(row.payload) as StoredPayload
    }
  }
}
