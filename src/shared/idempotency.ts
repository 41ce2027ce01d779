import type { FastifyBaseLogger } from 'fastify'
import type { Database } from '../db/create-db.js'
import { isUniqueViolation } from '../db/create-db.js'
import { type RedisClient, warnAtMostEveryMinute } from './redis.js'

export interface StoredResponse {
  status: number
  headers: Record<string, string>
  body: string
}

export type Claim =
  | { kind: 'claimed' }
  | { kind: 'replay'; response: StoredResponse }
  | { kind: 'mismatch' }
  | { kind: 'pending' }

/** Where first responses live: a claim marks a key as in flight, complete stores the response, release forgets it. */
export interface IdempotencyStore {
  claim(id: string, fingerprint: string): Promise<Claim>
  complete(id: string, fingerprint: string, response: StoredResponse): Promise<void>
  release(id: string): Promise<void>
}

export const RESPONSE_TTL_MS = 24 * 60 * 60 * 1000
/** A claim whose request never finished (a crash) frees the key after this long. */
export const PENDING_TTL_MS = 60 * 1000

interface Entry {
  fingerprint: string
  state: 'pending' | 'done'
  response: StoredResponse | null
}

function toClaim(entry: Entry, fingerprint: string): Claim {
  if (entry.fingerprint !== fingerprint) return { kind: 'mismatch' }
  return entry.state === 'done' && entry.response ? { kind: 'replay', response: entry.response } : { kind: 'pending' }
}

export function databaseIdempotencyStore(database: Database): IdempotencyStore {
  const { db } = database
  const expiresIn = (ms: number) => new Date(Date.now() + ms).toISOString()
  const store: IdempotencyStore = {
    async claim(id, fingerprint) {
      for (let attempt = 0; attempt < 2; attempt++) {
        try {
          await db
            .insertInto('idempotency_records')
            .values({ id, fingerprint, state: 'pending', response: null, expires_at: expiresIn(PENDING_TTL_MS) })
            .execute()
          return { kind: 'claimed' }
        } catch (err) {
          if (!isUniqueViolation(err)) throw err
        }
        const row = await db.selectFrom('idempotency_records').selectAll().where('id', '=', id).executeTakeFirst()
        if (!row) continue
        if (row.expires_at <= new Date().toISOString()) {
          await db
            .deleteFrom('idempotency_records')
            .where('id', '=', id)
            .where('expires_at', '=', row.expires_at)
            .execute()
          continue
        }
        return toClaim(
          {
            fingerprint: row.fingerprint,
            state: row.state,
            response: row.response ? (JSON.parse(row.response) as StoredResponse) : null,
          },
          fingerprint,
        )
      }
      return { kind: 'pending' }
    },
    async complete(id, _fingerprint, response) {
      await db
        .updateTable('idempotency_records')
        .set({ state: 'done', response: JSON.stringify(response), expires_at: expiresIn(RESPONSE_TTL_MS) })
        .where('id', '=', id)
        .execute()
    },
    async release(id) {
      await db.deleteFrom('idempotency_records').where('id', '=', id).where('state', '=', 'pending').execute()
    },
  }
  return store
}

export function redisIdempotencyStore(redis: RedisClient): IdempotencyStore {
  const key = (id: string) => `aigov:idem:${id}`
  return {
    async claim(id, fingerprint) {
      const pending: Entry = { fingerprint, state: 'pending', response: null }
      if ((await redis.set(key(id), JSON.stringify(pending), 'PX', PENDING_TTL_MS, 'NX')) === 'OK')
        return { kind: 'claimed' }
      const stored = await redis.get(key(id))
      return stored ? toClaim(JSON.parse(stored) as Entry, fingerprint) : { kind: 'pending' }
    },
    async complete(id, fingerprint, response) {
      const done: Entry = { fingerprint, state: 'done', response }
      await redis.set(key(id), JSON.stringify(done), 'PX', RESPONSE_TTL_MS)
    },
    async release(id) {
      await redis.del(key(id))
    },
  }
}

/** Redis when it answers, the database when it does not: a Redis outage never fails a request. */
export function idempotencyStore(
  database: Database,
  redis: RedisClient | undefined,
  log: FastifyBaseLogger,
): IdempotencyStore {
  const fallback = databaseIdempotencyStore(database)
  if (!redis) return fallback
  const primary = redisIdempotencyStore(redis)
  const warn = warnAtMostEveryMinute(log)
  const either =
    <A extends unknown[], R>(op: (store: IdempotencyStore) => (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        return await op(primary)(...args)
      } catch (err) {
        warn({ err: (err as Error).message }, 'idempotency records fell back to the database: redis unreachable')
        return op(fallback)(...args)
      }
    }
  return {
    claim: either((s) => s.claim),
    complete: either((s) => s.complete),
    release: either((s) => s.release),
  }
}
