import type { OutgoingHttpHeaders } from 'node:http'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { AppError } from '../../http/errors.js'
import { Counts } from '../../shared/counts.js'
import type { AuditFeed } from './events.feed.js'
import { EventStreamHeaders, EventStreamQuery } from './events.schemas.js'
import type { EventsService } from './events.service.js'

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

/** `heartbeatMs`: how often an idle stream sends a comment line (EVENTS_HEARTBEAT_MS, 15 s). */
export function eventRoutes(events: EventsService, feed: AuditFeed, heartbeatMs: number): FastifyPluginAsyncTypebox {
  const openByKey = new Counts()
  const openByTenant = new Counts()
  const streams = new Set<() => void>()

  return async (app) => {
    // Streams never end on their own: end them so closing the server does not wait on them.
    app.addHook('preClose', async () => {
      for (const end of streams) end()
    })

    app.get('/events', {
      schema: {
        operationId: 'streamEvents',
        summary: 'Stream the tenant’s audit records as they commit (server-sent events)',
        description:
          `Each event has the record id as \`id\`, its action as \`event\` and the audit record as \`data\`. Resume after a disconnect with \`Last-Event-ID\` (browsers send it themselves) or \`?after=<audit id>\`; without either, the stream starts at the end of the log. A comment line every 15 s keeps proxies from closing an idle stream. At most ${STREAMS_PER_KEY} streams per API key and ${STREAMS_PER_TENANT} per tenant on each instance (429, with a Retry-After of ${STREAM_RETRY_AFTER_S} s).`,
        tags: ['events'],
        querystring: EventStreamQuery,
        headers: EventStreamHeaders,
        response: { 200: { description: 'An endless `text/event-stream`.', content: { 'text/event-stream': { schema: { type: 'string' } } } } },
      },
    }, async (req, reply) => {
      const { after, ...filter } = req.query
      let seq = await events.startSeq(req.ctx, req.headers['last-event-id'] ?? after)
      const key = req.ctx.actor.id ?? 'system'
      const tenantId = req.ctx.tenantId
      const retry = { retry_after: STREAM_RETRY_AFTER_S }
      if (openByKey.of(key) >= STREAMS_PER_KEY) throw new AppError('rate_limited', `this API key already has ${STREAMS_PER_KEY} event streams open on this instance`, undefined, retry)
      if (openByTenant.of(tenantId) >= STREAMS_PER_TENANT) throw new AppError('rate_limited', `this tenant already has ${STREAMS_PER_TENANT} event streams open on this instance`, undefined, retry)
      openByKey.add(key, 1)
      openByTenant.add(tenantId, 1)

      const res = reply.raw
      reply.hijack()
      res.writeHead(200, { ...(reply.getHeaders() as OutgoingHttpHeaders), 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive', 'x-accel-buffering': 'no' })
      res.write('retry: 2000\n\n')

      let closed = false
      let dirty = false
      let wake: (() => void) | undefined
      const onAudit = (tenantId: string) => {
        if (tenantId !== req.ctx.tenantId) return
        dirty = true
        wake?.()
      }
      const heartbeat = setInterval(() => res.write(': heartbeat\n\n'), heartbeatMs)
      const finish = () => {
        if (closed) return
        closed = true
        streams.delete(finish)
        clearInterval(heartbeat)
        feed.off('audit', onAudit)
        wake?.()
        openByKey.add(key, -1)
        openByTenant.add(tenantId, -1)
      }
      feed.on('audit', onAudit)
      res.on('close', finish)
      streams.add(finish)

      try {
        while (!closed) {
          dirty = false
          const batch = await events.after(req.ctx, seq, filter)
          seq = batch.seq
          // A slow reader holds the stream back instead of growing this process's buffers.
          if (batch.events.length > 0 && !res.write(batch.events.join(''))) await new Promise((r) => res.once('drain', r).once('close', r))
          if (dirty || batch.events.length > 0) continue
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, feed.pollMs)
            wake = () => {
              clearTimeout(timer)
              resolve()
            }
          })
          wake = undefined
        }
      } catch (err) {
        // The client reconnects with Last-Event-ID and loses nothing.
        req.log.warn({ err: (err as Error).message }, 'event stream ended by an error')
      } finally {
        finish()
        res.end()
      }
    })
  }
}
