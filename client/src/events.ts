import { camelize } from './case.js'
import { type Core, sleep } from './core.js'
import { ClientRequestError } from './errors.js'
import type { Data, Query } from './operations.js'

type AuditLog = Data<'getAuditLog'>

/** One record of the live stream: its id (where a resumed stream continues), its action, the audit record. */
export interface AuditEvent {
  id: string
  type: string
  record: AuditLog
}

export interface StreamOptions {
  /** Start after this audit record id (default: from now on). */
  after?: string
  signal?: AbortSignal
  /** Wait before reconnecting after the connection drops, or longer when the service asks (Retry-After). Default 1000. */
  reconnectDelayMs?: number
}

/**
 * The tenant's audit records as they commit, forever: after a disconnect it reconnects with Last-Event-ID and
 * continues after the last record it yielded, so nothing is lost or repeated. Ends when `signal` aborts or the
 * loop breaks; throws ClientRequestError when the service refuses the stream (bad filter, no access).
 */
export async function* streamEvents(
  core: Core,
  query: Omit<Query<'streamEvents'>, 'after'> = {},
  options: StreamOptions = {},
): AsyncGenerator<AuditEvent, void, undefined> {
  let last = options.after
  const delay = options.reconnectDelayMs ?? 1000
  for (;;) {
    if (options.signal?.aborted) return
    let wait = delay
    const controller = new AbortController()
    const onAbort = () => controller.abort()
    options.signal?.addEventListener('abort', onAbort, { once: true })
    try {
      const opened = await core.openStream('/events', query, last ? { 'last-event-id': last } : {}, controller.signal)
      if (opened.error) {
        const status = opened.error.status
        if (status !== undefined && status < 500 && status !== 429) throw new ClientRequestError(opened.error)
        // Too many streams open, or the service unwell: come back when it says, never sooner than our own pace.
        wait = Math.max(delay, (opened.error.retryAfter ?? 0) * 1000)
      } else {
        for await (const event of parse(opened.data)) {
          last = event.id
          yield event
        }
      }
    } catch (err) {
      if (err instanceof ClientRequestError) throw err
      // A dropped connection: reconnect below.
    } finally {
      options.signal?.removeEventListener('abort', onAbort)
      controller.abort()
    }
    if (options.signal?.aborted) return
    await sleep(wait, options.signal)
  }
}

/** Server-sent events from a response body: blocks separated by a blank line, `field: value` lines, comments skipped. */
async function* parse(response: Response): AsyncGenerator<AuditEvent> {
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  let buffer = ''
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return
      buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, '\n')
      let end: number
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        const fields: Record<string, string> = {}
        for (const line of block.split('\n')) {
          if (line === '' || line.startsWith(':')) continue
          const colon = line.indexOf(':')
          const name = colon < 0 ? line : line.slice(0, colon)
          const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '')
          fields[name] = name === 'data' && fields.data !== undefined ? `${fields.data}\n${value}` : value
        }
        if (fields.data !== undefined && fields.id) {
          yield {
            id: fields.id,
            type: fields.event ?? 'message',
            record: camelize(JSON.parse(fields.data)) as AuditLog,
          }
        }
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined)
  }
}
