import { createHash } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { IdempotencyStore } from '../../shared/idempotency.js'
import { AppError } from '../errors.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The response field holding a one-time secret (an API key's `key`, a webhook endpoint's `secret`).
     * Idempotency records live 24 h in the database or Redis, so they never hold it. The one rule for every
     * such route: a replay answers the same record without that field and with `secret_shown: false`
     * (the first answer carries the secret and `secret_shown: true`); it creates or rotates nothing again.
     */
    oneTimeSecret?: string
  }
  interface FastifyRequest {
    idempotency: { id: string; fingerprint: string } | null
    /**
     * The sha256 of a body kept beside the request instead of as `req.body` (a stream spooled to disk by its
     * parser): the fingerprint holds it, so the same key with other bytes is refused like another JSON body.
     */
    bodyDigest: string | null
  }
}

const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/
const WAIT_STEP_MS = 50
const WAIT_LIMIT_MS = 10_000
const REPLAYED_HEADERS = ['location', 'content-type']

/** JSON with object keys sorted, so the same body sent with its keys reordered matches. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}

function withoutSecret(payload: string, field: string): string {
  const { [field]: _secret, ...record } = JSON.parse(payload) as Record<string, unknown>
  return JSON.stringify({ ...record, secret_shown: false })
}

function fingerprint(req: FastifyRequest): string {
  return createHash('sha256')
    .update(
      canonical([req.routeOptions.url, req.params, req.body ?? null, ...(req.bodyDigest ? [req.bodyDigest] : [])]),
    )
    .digest('hex')
}

/**
 * `Idempotency-Key` on a POST: the first successful response is kept for 24 h and replayed to retries with
 * the same key and body (`Idempotent-Replayed: true`); the same key with another body is refused (422);
 * a retry that arrives while the first is still running waits for its outcome.
 */
export function installIdempotency(api: FastifyInstance, store: IdempotencyStore): void {
  api.decorateRequest('idempotency', null)
  api.decorateRequest('bodyDigest', null)

  // Callback hooks: most requests pass straight through, without an async hook's promise.
  api.addHook('preHandler', (req, reply, done) => {
    const key = req.headers['idempotency-key']
    if (req.method !== 'POST' || key === undefined || req.routeOptions.config.public) return done()
    claimKey(req, reply, key).then((replayed) => {
      if (!replayed) done()
    }, done)
  })

  api.addHook('onSend', (req, reply, payload, done) => {
    const claim = req.idempotency
    if (!claim) return done(null, payload)
    req.idempotency = null
    settle(req, reply, claim, payload).then(() => done(null, payload), done)
  })

  /** Claims the key for this request, or replays the first response (true), or refuses. */
  async function claimKey(req: FastifyRequest, reply: FastifyReply, key: string | string[]): Promise<boolean> {
    if (typeof key !== 'string' || !KEY_PATTERN.test(key)) {
      throw new AppError('bad_request', 'Idempotency-Key must be 1-255 visible ASCII characters', [
        { field: 'Idempotency-Key', message: 'invalid' },
      ])
    }
    const id = `${req.ctx.tenantId}:${req.ctx.actor.id}:${key}`
    const print = fingerprint(req)
    const deadline = Date.now() + WAIT_LIMIT_MS
    for (;;) {
      const claim = await store.claim(id, print)
      if (claim.kind === 'claimed') {
        req.idempotency = { id, fingerprint: print }
        return false
      }
      if (claim.kind === 'mismatch') {
        throw new AppError('validation_failed', 'this Idempotency-Key was already used with a different request body', [
          { field: 'Idempotency-Key', message: 'reused with another body' },
        ])
      }
      if (claim.kind === 'replay') {
        const { status, headers, body } = claim.response
        reply.code(status).headers(headers).header('Idempotent-Replayed', 'true').send(body)
        return true
      }
      if (Date.now() > deadline)
        throw new AppError('conflict', 'a request with this Idempotency-Key is still in progress; retry later')
      await new Promise((resolve) => setTimeout(resolve, WAIT_STEP_MS))
    }
  }

  /** Keeps a successful response for replay, or frees the key for a retry. */
  async function settle(
    req: FastifyRequest,
    reply: FastifyReply,
    claim: { id: string; fingerprint: string },
    payload: unknown,
  ): Promise<void> {
    if (reply.statusCode >= 200 && reply.statusCode < 300 && typeof payload === 'string') {
      const headers: Record<string, string> = {}
      for (const name of REPLAYED_HEADERS) {
        const value = reply.getHeader(name)
        if (value !== undefined) headers[name] = String(value)
      }
      const secretField = req.routeOptions.config.oneTimeSecret
      const body = secretField ? withoutSecret(payload, secretField) : payload
      await store.complete(claim.id, claim.fingerprint, { status: reply.statusCode, headers, body })
    } else {
      await store.release(claim.id)
    }
  }
}
