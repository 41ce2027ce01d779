import type { ErrorObject } from 'ajv'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import FindMyWay, { type HTTPMethod } from 'find-my-way'
import { isDatabaseUnavailable } from '../../db/create-db.js'
import { AppError, ERROR_CODES, type ErrorCode } from '../errors.js'
import { fieldErrors } from './validation.js'

export const PROBLEM_TYPE_BASE = 'https://aigov.dev/problems/'

export interface ProblemBody {
  type: string
  title: string
  status: number
  code: ErrorCode
  detail: string
  instance: string
  request_id: string
  errors?: { field: string; message: string }[]
  [extra: string]: unknown
}

export function problemBody(req: FastifyRequest, err: AppError): ProblemBody {
  return problemFields(err, req.url.split('?')[0], req.id)
}

/** The problem document for an error; also what MCP tool errors carry. */
export function problemFields(err: AppError, instance: string, requestId: string): ProblemBody {
  return {
    type: PROBLEM_TYPE_BASE + err.code.replaceAll('_', '-'),
    title: ERROR_CODES[err.code].title,
    status: err.status,
    code: err.code,
    detail: err.detail,
    instance,
    request_id: requestId,
    ...(err.errors && err.errors.length > 0 ? { errors: err.errors } : {}),
    ...err.extra,
  }
}

export function sendProblem(req: FastifyRequest, reply: FastifyReply, err: AppError): FastifyReply {
  if (typeof err.extra?.retry_after === 'number') reply.header('retry-after', String(err.extra.retry_after))
  // A string payload bypasses the response serializer, so every problem field goes out as built.
  return reply
    .code(err.status)
    .type('application/problem+json')
    .send(JSON.stringify(problemBody(req, err)))
}

/** Maps anything thrown to an AppError; unknown errors become a bare 500 (details only in the log). */
export function toAppError(err: FastifyError | AppError | Error, req: FastifyRequest): AppError {
  if (err instanceof AppError) return err
  const fe = err as FastifyError
  // An empty body (of any content type) on a route that needs one: name the body, whatever schema it failed.
  if (fe.validation && fe.validationContext === 'body' && req.body === undefined) {
    return new AppError('validation_failed', 'this request needs a JSON body', [
      { field: '(body)', message: 'is required' },
    ])
  }
  if (fe.validation) {
    const errors = fieldErrors(fe.validation as unknown as ErrorObject[])
    const part = fe.validationContext
    const code: ErrorCode = part === 'body' ? 'validation_failed' : 'bad_request'
    const where =
      part === 'querystring'
        ? 'query parameters'
        : part === 'params'
          ? 'path parameters'
          : part === 'headers'
            ? 'headers'
            : 'request body'
    const summary = errors.map((e) => `${e.field} ${e.message}`).join('; ')
    return new AppError(code, `invalid ${where}: ${summary}`, errors)
  }
  switch (fe.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError('bad_request', 'the request body is not valid JSON')
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('payload_too_large', 'the request body is larger than 1 MiB')
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError(
        'unsupported_media_type',
        `content type ${req.headers['content-type'] ?? ''} is not supported; send application/json`,
      )
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AppError('bad_request', 'the Content-Length header does not match the body')
  }
  if (isDatabaseUnavailable(err)) return new AppError('unavailable', 'the database is unavailable; retry shortly')
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    return new AppError('bad_request', fe.message)
  }
  return new AppError('internal', 'an unexpected error occurred; quote the request_id when reporting it')
}

const LINGER_MS = 2000

/**
 * A request refused before its body was read to the end (too large, malformed) has its connection marked to
 * close, and Node destroys the socket as soon as the answer is written. A client still sending then gets a
 * TCP reset, which may discard the answer before the client reads it, so it sees a broken connection instead
 * of a 413. As web servers do, the connection lingers instead: the answer goes out, this side closes, what
 * still arrives is read and dropped, and the socket goes when the client closes it or after LINGER_MS.
 */
function lingerBeforeClosing(req: FastifyRequest, reply: FastifyReply): void {
  const socket = req.raw.socket
  if (req.raw.complete || !socket) return
  // A handler that stopped reading mid-body (an upload past a quota) leaves the connection kept alive and paused,
  // waiting for a body nobody reads: marked to close, it goes once the answer is out.
  reply.raw.shouldKeepAlive = false
  // Node calls destroySoon once the answer is written on a connection marked to close.
  socket.destroySoon = () => {
    // Read (and drop) what still arrives, so the client's close is seen.
    socket.resume()
    socket.end()
    const timer = setTimeout(() => socket.destroy(), LINGER_MS)
    socket.once('close', () => clearTimeout(timer))
  }
}

export function installProblemHandlers(app: FastifyInstance): void {
  // A shadow router learns every route so an unknown method on a known path answers 405, not 404.
  const shadow = FindMyWay()
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    for (const method of methods) if (method !== 'HEAD') shadow.on(method as HTTPMethod, route.url, () => undefined)
  })

  app.setErrorHandler((err: FastifyError, req, reply) => {
    const appError = toAppError(err, req)
    if (appError.status >= 500) req.log.error({ err }, 'request failed')
    else req.log.info({ code: appError.code, detail: appError.detail }, 'request rejected')
    lingerBeforeClosing(req, reply)
    return sendProblem(req, reply, appError)
  })

  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0]
    const allowed = (['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const).filter((m) => shadow.find(m, path) !== null)
    if (allowed.length > 0) {
      reply.header('Allow', allowed.join(', '))
      return sendProblem(
        req,
        reply,
        new AppError('method_not_allowed', `${req.method} is not allowed on ${path}; use ${allowed.join(', ')}`),
      )
    }
    return sendProblem(req, reply, new AppError('not_found', `no route ${req.method} ${path}`))
  })
}

/**
 * Requests Node's HTTP parser refuses before Fastify sees them (malformed request line or headers, headers too
 * large, a client too slow) still get a problem document, and the connection is closed.
 */
export function clientErrorProblem(err: NodeJS.ErrnoException, socket: import('node:net').Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return
  const [status, title, detail] =
    err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'Request Timeout', 'the request was not received in time']
      : err.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'Request Header Fields Too Large', 'the request headers are too large']
        : [400, 'Bad Request', 'the request could not be parsed as HTTP']
  const code = title.toLowerCase().replaceAll(' ', '_')
  const body = JSON.stringify({ type: PROBLEM_TYPE_BASE + code.replaceAll('_', '-'), title, status, code, detail })
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${title}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    )
  }
  socket.destroy(err)
}
