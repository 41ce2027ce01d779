import type { OutgoingHttpHeaders, ServerResponse } from 'node:http'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { AppError } from '../../http/errors.js'
import { Counts } from '../../shared/counts.js'
import type { Metrics } from '../../shared/metrics.js'
import { KEY_STATUS_TTL_MS, type KeyStatusCache } from '../api-keys/key-status.js'
import { StreamBudget } from './events.budget.js'
import type { AuditFeed } from './events.feed.js'
import { EventStreamHeaders, EventStreamQuery } from './events.schemas.js'
import { BATCH_BYTES, BATCH_RECORDS, type EventsService } from './events.service.js'

/** Open streams allowed per API key on one instance: each holds a connection and polls the log. */
export const STREAMS_PER_KEY = 5
/**
 * Open streams allowed per tenant on one instance, whatever its keys: each of a tenant's commits wakes every one of
 * its streams, and each reads the log, so a tenant with many keys would otherwise set that cost for every tenant.
 */
export const STREAMS_PER_TENANT = 20
/**
 * Retry-After of a refused stream, in seconds: a slot frees only when another stream of the key or tenant closes,
 * which no one can foresee, so ask clients to come back in a few seconds rather than at their reconnect pace.
 */
export const STREAM_RETRY_AFTER_S = 5

/**
 * Bytes of records all event streams of an instance hold at most at once (read, rendered, not yet taken by their
 * clients): what a stream reads past it waits, so the heap does not grow with the streams or the records.
 */
export const STREAMS_BUFFER_BYTES = 16 * 1024 * 1024
/**
 * The share of STREAMS_BUFFER_BYTES one tenant's streams hold at most: streams its clients do not read keep only
 * that tenant's other streams waiting (until they are closed as slow), not every tenant's.
 */
export const TENANT_STREAMS_BUFFER_BYTES = STREAMS_BUFFER_BYTES / 8

export interface EventRouteOptions {
  /** How often an idle stream sends a comment line (EVENTS_HEARTBEAT_MS, 15 s). */
  heartbeatMs: number
  /** How long a stream waits for its client to take a batch before it closes it (EVENTS_SLOW_CLIENT_MS, 10 s). */
  slowClientMs: number
}

type EndReason = 'slow_client' | 'revoked' | 'expired'

/** What a stream's end tells its client, when the service ended it for a reason the client can act on. */
const FAREWELL: Record<Exclude<EndReason, 'slow_client'>, string> = {
  revoked: ': stream ended: its API key has been revoked\n\n',
  expired: ': stream ended: its access token has expired; resume with Last-Event-ID and a new one\n\n',
}

/** The longest delay setTimeout keeps (about 24.8 days); a later expiry is looked at again then. */
const MAX_TIMER_MS = 2 ** 31 - 1

export function eventRoutes(
  events: EventsService,
  feed: AuditFeed,
  keyStatus: KeyStatusCache,
  metrics: Pick<Metrics, 'eventStreamsEnded'>,
  options: EventRouteOptions,
): FastifyPluginAsyncTypebox {
  const { heartbeatMs, slowClientMs } = options
  const openByKey = new Counts()
  const openByTenant = new Counts()
  const budget = new StreamBudget(STREAMS_BUFFER_BYTES, TENANT_STREAMS_BUFFER_BYTES)
  /** Every open stream's end, and those of each API key (tenant/key) for its revocation. */
  const streams = new Set<(reason?: EndReason) => void>()
  const byKey = new Map<string, Set<(reason?: EndReason) => void>>()
  const onRevoked = (tenantId: string, keyId: string) => {
    for (const end of byKey.get(`${tenantId}/${keyId}`) ?? []) end('revoked')
  }

  return async (app) => {
    keyStatus.on('revoked', onRevoked)
    app.addHook('onClose', async () => {
      keyStatus.off('revoked', onRevoked)
    })
    // Streams never end on their own: end them so closing the server does not wait on them.
    app.addHook('preClose', async () => {
      for (const end of streams) end()
    })

    app.get(
      '/events',
      {
        schema: {
          operationId: 'streamEvents',
          summary: 'Stream the tenant’s audit records as they commit (server-sent events)',
          description:
            `Each event has the record id as \`id\`, its action as \`event\` and the audit record as \`data\`. Resume after a disconnect with \`Last-Event-ID\` (browsers send it themselves) or \`?after=<audit id>\`; without either, the stream starts at the end of the log. A comment line every 15 s keeps proxies from closing an idle stream. At most ${STREAMS_PER_KEY} streams per API key and ${STREAMS_PER_TENANT} per tenant on each instance (429, with a Retry-After of ${STREAM_RETRY_AFTER_S} s).\n\n` +
            `The stream sends the log in batches of at most ${BATCH_BYTES / 1024} KiB (or ${BATCH_RECORDS} records; a larger record goes alone) and sends the next only once the client has taken the last: a client that has not taken a batch within ${slowClientMs / 1000} s (\`EVENTS_SLOW_CLIENT_MS\`) has fallen behind and is disconnected; it reconnects with \`Last-Event-ID\` and misses nothing. All streams of an instance hold at most ${STREAMS_BUFFER_BYTES / 1024 / 1024} MiB of records at once (${TENANT_STREAMS_BUFFER_BYTES / 1024 / 1024} MiB per tenant); past that, streams wait their turn. The stream ends when its access token expires or its API key is revoked or expires (at once on the instance that revoked it, within 5 s on the others).`,
          tags: ['events'],
          querystring: EventStreamQuery,
          headers: EventStreamHeaders,
          response: {
            200: {
              description: 'An endless `text/event-stream`.',
              content: { 'text/event-stream': { schema: { type: 'string' } } },
            },
          },
        },
      },
      async (req, reply) => {
        const { after, ...filter } = req.query
        let seq = await events.startSeq(req.ctx, req.headers['last-event-id'] ?? after)
        const key = req.ctx.actor.id ?? 'system'
        const tenantId = req.ctx.tenantId
        const retry = { retry_after: STREAM_RETRY_AFTER_S }
        if (openByKey.of(key) >= STREAMS_PER_KEY)
          throw new AppError(
            'rate_limited',
            `this API key already has ${STREAMS_PER_KEY} event streams open on this instance`,
            undefined,
            retry,
          )
        if (openByTenant.of(tenantId) >= STREAMS_PER_TENANT)
          throw new AppError(
            'rate_limited',
            `this tenant already has ${STREAMS_PER_TENANT} event streams open on this instance`,
            undefined,
            retry,
          )
        openByKey.add(key, 1)
        openByTenant.add(tenantId, 1)

        const res = reply.raw
        reply.hijack()
        res.writeHead(200, {
          ...(reply.getHeaders() as OutgoingHttpHeaders),
          'content-type': 'text/event-stream; charset=utf-8',
          'cache-control': 'no-store',
          connection: 'keep-alive',
          'x-accel-buffering': 'no',
        })
        res.write('retry: 2000\n\n')

        const stop = new AbortController()
        const { signal } = stop
        let endedFor: EndReason | undefined
        const end = (reason?: EndReason) => {
          if (signal.aborted) return
          endedFor = reason
          if (reason) metrics.eventStreamsEnded.inc({ reason })
          stop.abort()
        }
        const keyId = req.ctx.actor.type === 'api_key' ? req.ctx.actor.id : null
        const keyRef = `${tenantId}/${keyId}`
        streams.add(end)
        if (keyId !== null) byKey.set(keyRef, (byKey.get(keyRef) ?? new Set()).add(end))
        res.on('close', () => end())
        res.on('error', () => end())

        const unwatch = watchCredentials(tenantId, keyId, req.ctx.expiresAt, end)
        // A client that has not taken what it was sent needs no keep-alive, and gets nothing more queued.
        const heartbeat = setInterval(() => res.writableNeedDrain || res.write(': heartbeat\n\n'), heartbeatMs)
        let dirty = false
        let wake: (() => void) | undefined
        const onAudit = (committed: string) => {
          if (committed !== tenantId) return
          dirty = true
          wake?.()
        }
        feed.on('audit', onAudit)

        try {
          stream: while (!signal.aborted) {
            dirty = false
            const plan = await events.plan(req.ctx, seq, filter)
            for (const batch of plan.batches) {
              const release = await budget.take(tenantId, batch.bytes, signal)
              try {
                let flowing = true
                for (const event of await events.read(req.ctx, batch, filter)) {
                  if (signal.aborted) break stream
                  flowing = res.write(event)
                }
                // A slow reader holds the stream back instead of growing this process's buffers, for a bounded time.
                if (!flowing && !(await drained(res, slowClientMs, signal))) {
                  end('slow_client')
                  break stream
                }
              } finally {
                release()
              }
            }
            seq = plan.upTo
            if (dirty || plan.batches.length > 0) continue
            await new Promise<void>((resolve) => {
              const done = () => {
                clearTimeout(timer)
                signal.removeEventListener('abort', done)
                wake = undefined
                resolve()
              }
              const timer = setTimeout(done, feed.pollMs)
              wake = done
              signal.addEventListener('abort', done)
            })
          }
        } catch (err) {
          // The client reconnects with Last-Event-ID and loses nothing.
          if (!signal.aborted) req.log.warn({ err: (err as Error).message }, 'event stream ended by an error')
        } finally {
          end()
          streams.delete(end)
          const ofKey = byKey.get(keyRef)
          ofKey?.delete(end)
          if (ofKey?.size === 0) byKey.delete(keyRef)
          clearInterval(heartbeat)
          unwatch()
          feed.off('audit', onAudit)
          openByKey.add(key, -1)
          openByTenant.add(tenantId, -1)
          finish(res, endedFor, slowClientMs)
        }
      },
    )
  }

  /**
   * Ends the stream when its credentials lapse: at the token's (or key's) expiry, and when a look at the key (as
   * every request takes) finds it revoked by another instance whose word did not come through Redis.
   */
  function watchCredentials(
    tenantId: string,
    keyId: string | null,
    expiresAt: number | undefined,
    end: (reason: EndReason) => void,
  ): () => void {
    let expiry: NodeJS.Timeout | undefined
    const atExpiry = () => {
      const left = expiresAt! - Date.now()
      if (left <= 0) end('expired')
      else expiry = setTimeout(atExpiry, Math.min(left, MAX_TIMER_MS))
    }
    if (expiresAt !== undefined) atExpiry()
    const look = async () => {
      if ((await keyStatus.activeKey(tenantId, keyId!)) === null)
        end(expiresAt !== undefined && expiresAt <= Date.now() ? 'expired' : 'revoked')
    }
    // A failed look (the database away) ends nothing: the next one, or the stream's own reads, will tell.
    const looking =
      keyId === null ? undefined : setInterval(() => void look().catch(() => undefined), KEY_STATUS_TTL_MS)
    return () => {
      clearTimeout(expiry)
      clearInterval(looking)
    }
  }
}

/** True once `res` has handed what it holds to the kernel, false when `ms` pass first or the stream ends. */
function drained(res: ServerResponse, ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      clearTimeout(timer)
      res.off('drain', onDrain)
      signal.removeEventListener('abort', onAbort)
      resolve(ok)
    }
    const onDrain = () => done(true)
    const onAbort = () => done(false)
    const timer = setTimeout(() => done(false), ms)
    res.on('drain', onDrain)
    signal.addEventListener('abort', onAbort)
  })
}

/**
 * Closes the response: a slow client's at once (what it has not taken goes; it resumes with Last-Event-ID), any
 * other's after what it was sent, and no later than `ms` from now, so a client that stops reading holds nothing.
 */
function finish(res: ServerResponse, reason: EndReason | undefined, ms: number): void {
  if (res.destroyed) return
  if (reason === 'slow_client') {
    res.destroy()
    return
  }
  if (reason) res.write(FAREWELL[reason])
  res.end()
  if (res.writableFinished) return
  const guard = setTimeout(() => res.destroy(), ms)
  res.once('finish', () => clearTimeout(guard)).once('close', () => clearTimeout(guard))
}
