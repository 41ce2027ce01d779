import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { LRUCache } from 'lru-cache'
import { Type } from 'typebox'
import { anyOf, anyOfValue } from '../db/any-of.js'
import type { Database } from '../db/create-db.js'
import { utcDay } from '../shared/today.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * false: this GET is never answered from the read cache (streams, checks of the stored data itself). `daily`:
     * for the queries it names the answer also depends on today's date (UTC), which the ETag then carries.
     */
    readCache?: boolean | { daily(query: unknown): boolean }
  }
  interface FastifyRequest {
    readCacheMiss: { key: string; etag: string } | null
    /** The tenant's audit chain position the read cache has just read: where the route's reads start (ItemCache). */
    readAt: number | null
  }
}

export interface CachedAnswer {
  etag: string
  body: Buffer
  contentType: string
}

/** Rendered answers by tenant and URL (the read model's `answers`). */
export type AnswerCache = LRUCache<string, CachedAnswer>

const NOT_MODIFIED = Type.Null({ description: 'Not Modified: the `If-None-Match` ETag is still current.' })

/**
 * ETags and a cache of rendered answers for the GET routes of this scope, whose answers depend only on the
 * tenant's records and the URL.
 *
 * Every change to a tenant's records appends to the tenant's audit chain in the same transaction, so the
 * chain head (sequence number and hash) names one state of everything the tenant holds. An answer rendered
 * at a head stays exact for as long as the head stays put: each request reads the head (one indexed row; requests
 * that arrive together share a read begun after they arrived: on SQLite those of one turn of the event loop, on
 * PostgreSQL those of one round trip) and is answered from memory when nothing changed, on every instance sharing
 * the database. The head is read before the answer is rendered, so an answer is never older than the head it is
 * filed under (if it is newer, that head has already moved on and nobody reads it again). Changes made in the
 * database behind the service's back are not seen until the tenant's next write.
 */
export type ReadCacheOutcome = 'hit' | 'not_modified' | 'miss'

export function installReadCache(
  scope: FastifyInstance,
  database: Database,
  cache: AnswerCache | null,
  observe: (outcome: ReadCacheOutcome) => void,
): void {
  type Head = { audit_seq: number; audit_head: string }
  const etagOf = (head: Head) => `"${head.audit_seq}-${head.audit_head.slice(0, 16)}"`
  const { db, dialect } = database
  const headsQuery = db
    .selectFrom('tenants')
    .select(['id', 'audit_seq', 'audit_head'])
    .where(anyOf(dialect, 'id'))
    .compile()
  const tenantHead = sharedReads(async (tenantIds: string[]): Promise<Map<string, Head>> => {
    const { rows } = await db.executeQuery<Head & { id: string }>({
      ...headsQuery,
      parameters: [anyOfValue(dialect, tenantIds)],
    })
    return new Map(rows.map((row) => [row.id, row]))
  })

  // SQLite: the heads of a turn's requests in one read on this thread, unless the connection is in a group commit's
  // transaction then (those requests wait for it with tenantHead).
  const headsOfTurn =
    dialect === 'sqlite'
      ? readsOfTurn((tenantIds: string[]) =>
          database.readNow<Head & { id: string }>({ ...headsQuery, parameters: [anyOfValue(dialect, tenantIds)] }),
        )
      : null

  scope.decorateRequest('readCacheMiss', null)
  scope.decorateRequest('readAt', null)

  // A 304 only for what would be a 200: from a cached 200 of this very URL at this head, else once the route has
  // validated the request and found its record (onSend), so a current ETag reveals nothing about other URLs.
  type Daily = ((query: unknown) => boolean) | undefined
  const answerFromCache = (req: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void, daily: Daily) => {
    // Called back outside the hook: a throw must reach the request, not the event loop.
    const answer = (head: Head) => {
      try {
        answerAt(req, reply, head, done, daily)
      } catch (err) {
        done(err as Error)
      }
    }
    const shared = () => void tenantHead(req.ctx.tenantId).then((read) => answer(read!), done)
    if (!headsOfTurn) return shared()
    headsOfTurn(req.ctx.tenantId, (err, head) => (err ? done(err) : head === undefined ? shared() : answer(head)))
  }
  const answerAt = (
    req: FastifyRequest,
    reply: FastifyReply,
    head: Head,
    done: (err?: Error) => void,
    daily: Daily,
  ) => {
    const etag = daily?.(req.query) ? `${etagOf(head).slice(0, -1)}-${utcDay().replaceAll('-', '')}"` : etagOf(head)
    reply.header('cache-control', 'private, no-cache')
    const key = `${req.ctx.tenantId} ${req.url}`
    const cached = cache?.get(key)
    if (cached?.etag === etag) {
      if (ifNoneMatch(req.headers['if-none-match'], etag)) {
        observe('not_modified')
        reply.header('etag', etag).code(304).send()
        return
      }
      observe('hit')
      reply.header('etag', etag).header('content-type', cached.contentType).send(cached.body)
      return
    }
    observe('miss')
    req.readCacheMiss = { key, etag }
    // The route's reads start from this head: the records kept rendered need not read it again (ItemCache).
    req.readAt = head.audit_seq
    done()
  }

  scope.addHook('onRoute', (route) => {
    if (route.method !== 'GET' || route.config?.readCache === false) return
    const response = (((route.schema ??= {}) as { response?: Record<string, unknown> }).response ??= {})
    response[304] ??= NOT_MODIFIED
    // A route's own hook, after the rate limiter's (also per route): a cached answer still counts against
    // the limit, and authentication (a scope hook) has run before either.
    const hooks = route.onRequest
    // The route's `daily` is read here once, not from req.routeOptions (a new object on every call) per request.
    const { readCache } = route.config ?? {}
    const daily = typeof readCache === 'object' ? readCache.daily : undefined
    const hook = (req: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) =>
      answerFromCache(req, reply, done, daily)
    route.onRequest = [...(hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks]), hook]
  })

  scope.addHook('onSend', (req, reply, payload, done) => {
    const miss = req.readCacheMiss
    if (!miss || reply.statusCode !== 200) return done(null, payload)
    reply.header('etag', miss.etag)
    // Encoded once: the bytes filed are the bytes sent (a string would be measured and encoded again to be sent).
    const body =
      cache && req.method === 'GET'
        ? Buffer.isBuffer(payload)
          ? payload
          : typeof payload === 'string'
            ? Buffer.from(payload)
            : undefined
        : undefined
    if (cache && body)
      cache.set(miss.key, { etag: miss.etag, body, contentType: String(reply.getHeader('content-type')) })
    if (ifNoneMatch(req.headers['if-none-match'], miss.etag)) {
      reply.code(304).removeHeader('content-type')
      return done(null, null)
    }
    done(null, body ?? payload)
  })
}

/**
 * Lets concurrent requests share reads, without any request getting a read that began before it arrived (it could
 * miss a write that the caller saw acknowledged): one read is under way at a time, and requests arriving meanwhile,
 * whatever their keys, wait for the next, which starts when that read ends and reads all their keys at once. On
 * PostgreSQL every query is a round trip whose sending and answer cost the service more than the query costs the
 * database: the chain heads of a mix of tenants read one query per request before, one per round trip now.
 */
export function sharedReads<T>(
  readMany: (keys: string[]) => Promise<Map<string, T>>,
): (key: string) => Promise<T | undefined> {
  let underWay: Promise<unknown> | undefined
  let next: { keys: Set<string>; read: Promise<Map<string, T>> } | undefined
  const start = (keys: Set<string>): Promise<Map<string, T>> => {
    const read = readMany([...keys])
    const ended = read.catch(() => undefined)
    underWay = ended
    void ended.then(() => {
      if (underWay === ended) underWay = undefined
    })
    return read
  }
  return (key) => {
    if (!underWay) return start(new Set([key])).then((found) => found.get(key))
    if (!next) {
      const keys = new Set<string>()
      next = {
        keys,
        read: underWay.then(() => {
          next = undefined
          return start(keys)
        }),
      }
    }
    next.keys.add(key)
    return next.read.then((found) => found.get(key))
  }
}

/**
 * The rows of the keys asked for in this turn of the event loop, read in one synchronous call as the turn ends (its
 * check phase, so after every request the turn parsed), and each asker answered then; a key the read did not find,
 * or a read that could not run (`readNow` gave undefined), is answered undefined. Every read begins after its askers
 * asked. Answers must not throw. One read per turn rather than per request, because a read per request cost a
 * sizeable share of a cached GET's thread time (measured by npm run bench; bench/results/design-measurements.md).
 */
export function readsOfTurn<R extends { id: string }>(
  readNow: (keys: string[]) => R[] | undefined,
): (key: string, answer: (err: Error | undefined, row: R | undefined) => void) => void {
  type Answer = (err: Error | undefined, row: R | undefined) => void
  let waiting: Map<string, Answer[]> | undefined
  const answerAll = () => {
    const turn = waiting!
    waiting = undefined
    let rows: R[] | undefined
    try {
      rows = readNow([...turn.keys()])
    } catch (err) {
      for (const answers of turn.values()) for (const answer of answers) answer(err as Error, undefined)
      return
    }
    const found = new Map(rows?.map((row) => [row.id, row]))
    for (const [key, answers] of turn) for (const answer of answers) answer(undefined, found.get(key))
  }
  return (key: string, answer: Answer) => {
    if (!waiting) {
      waiting = new Map()
      setImmediate(answerAll)
    }
    const answers = waiting.get(key)
    if (answers) answers.push(answer)
    else waiting.set(key, [answer])
  }
}

/** RFC 9110 §13.1.2: `*`, or a list of entity tags compared weakly (a W/ prefix matches too). */
function ifNoneMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false
  if (header.trim() === '*') return true
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag)
}
