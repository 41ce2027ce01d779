import type { FastifyInstance, FastifyRequest } from 'fastify'
import { AppError } from '../errors.js'
import { jsonTooDeep, tooDeepError } from './validation.js'

/** The largest request body, JSON or YAML. */
export const BODY_LIMIT = 1024 * 1024

/**
 * JSON is the only body type, and a request whose body is empty is bodiless whatever its Content-Type says:
 * python-requests, httpx, axios, curl -d '' and fetch(…, {body: ''}) send form or text/plain content types with
 * `Content-Length: 0` when the caller passes no body. A non-empty body of another type is a 415.
 */
export function installBodyParsers(app: FastifyInstance, bodyLimit: number): void {
  const parseJson = app.getDefaultJsonParser('error', 'error')
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit }, (req, body, done) => {
    if ((body as string).trim() === '') return done(null, undefined)
    // Before parsing: every walk of a body (text checks, validation, idempotency fingerprints) then stays shallow.
    if (jsonTooDeep(body as string)) return done(tooDeepError(), undefined)
    void parseJson(req, body as string, done)
  })
  app.addContentTypeParser('*', (req, payload, done) => {
    if (req.headers['content-length'] === '0') return done(null, undefined)
    // Chunked (or length-less) bodies: the first byte decides, so a large body of the wrong type is never read whole.
    let settled = false
    const settle = (err: Error | null) => {
      if (settled) return
      settled = true
      payload.removeListener('data', onData)
      done(err, undefined)
    }
    const onData = (chunk: Buffer) => {
      if (chunk.length > 0) settle(unsupported(req))
    }
    payload.on('data', onData)
    payload.once('end', () => settle(null))
    payload.once('error', (err) => settle(err))
  })
}

function unsupported(req: FastifyRequest): AppError {
  const type = req.headers['content-type']
  return new AppError(
    'unsupported_media_type',
    type
      ? `content type ${type} is not supported; send application/json`
      : 'a request body needs Content-Type: application/json',
  )
}
