import rateLimit from '@fastify/rate-limit'
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify'
import type { Deps } from '../../shared/deps.js'
import { routeLabel } from './observability.js'
import type { Config } from '../../config.js'
import type { RedisClient } from '../../shared/redis.js'
import { LocalStore, type RequestCounters, resilientStore, type StoreCtor } from './request-counters.js'
import { AppError } from '../errors.js'

const WINDOW_MS = 60_000

function sharedStore(instance: RequestCounters): StoreCtor {
  // The plugin takes a constructor; it gets the one shared store each time.
  return class {
    constructor() {
      // biome-ignore lint/correctness/noConstructorReturn: the plugin constructs its store; every route gets the one shared store
      return instance
    }
  } as unknown as StoreCtor
}

const clientAddress = (req: FastifyRequest) => req.ip

/**
 * Limits each API key on resource routes, and each tenant + client address on the token exchange.
 * The limit headers go on every response in both spellings (RateLimit-* and X-RateLimit-*).
 */
export async function installRateLimit(
  api: FastifyInstance,
  deps: Pick<Deps, 'config' | 'metrics' | 'requestCounters'>,
): Promise<void> {
  const { config, metrics } = deps
  await api.register(rateLimit, {
    onExceeded: (req) => metrics.rateLimitRefusals.inc({ route: routeLabel(req) }),
    max: config.rateLimitPerMinute,
    timeWindow: WINDOW_MS,
    hook: 'onRequest',
    enableDraftSpec: true,
    store: sharedStore(deps.requestCounters),
    keyGenerator: (req) => (req.ctx ? `key:${req.ctx.tenantId}:${req.ctx.actor.id}` : `addr:${clientAddress(req)}`),
    errorResponseBuilder: (_req, context) =>
      limited(context.max, context.ttl, `rate limit of ${context.max} requests per minute exceeded`),
  })
  api.addHook('onSend', (_req, reply, payload, done) => {
    for (const name of ['limit', 'remaining', 'reset'] as const) {
      const value = reply.getHeader(`ratelimit-${name}`)
      if (value !== undefined) reply.header(`x-ratelimit-${name}`, value)
    }
    done(null, payload)
  })
}

/**
 * Wrong API keys, counted per tenant and client address on every path that takes an API key outside the token
 * exchange (whose own limit counts every request there): past RATE_LIMIT_TOKEN_PER_MINUTE failures in a minute,
 * even a right key is refused with 429 until the window ends, so guessing gains nothing.
 */
export function credentialFailureGuard(config: Config, redis: RedisClient | undefined, log: FastifyBaseLogger) {
  const store = redis ? resilientStore(redis, log, 'aigov:authfail:') : new LocalStore(false, false, 10_000)
  const max = config.rateLimitTokenPerMinute
  const counter = (op: 'incr' | 'read', key: string) =>
    new Promise<{ current: number; ttl: number }>((resolve, reject) =>
      store[op](key, (err, result) => (err ? reject(err) : resolve(result!)), WINDOW_MS, max),
    )
  return async <T>(tenant: string, address: string, check: () => Promise<T>): Promise<T> => {
    const key = `${tenant}:${address}`
    const seen = await counter('read', key)
    if (seen.current >= max)
      throw limited(max, seen.ttl, 'too many failed credentials from this address for this tenant')
    try {
      return await check()
    } catch (err) {
      if (err instanceof AppError && err.code === 'unauthorized') await counter('incr', key)
      throw err
    }
  }
}

function limited(max: number, ttl: number, what: string): AppError {
  const retryAfter = Math.max(1, Math.ceil(ttl / 1000))
  return new AppError('rate_limited', `${what}; retry in ${retryAfter} s`, undefined, {
    retry_after: retryAfter,
    limit: max,
    remaining: 0,
    reset_time: new Date(Date.now() + ttl).toISOString(),
  })
}

/** Route config for the token exchange: its own, lower limit per tenant + client address. */
export function tokenRateLimit(config: Config) {
  return {
    max: config.rateLimitTokenPerMinute,
    timeWindow: WINDOW_MS,
    // After body parsing, so the JSON-body form is keyed by its tenant too.
    hook: 'preHandler' as const,
    keyGenerator: (req: FastifyRequest) => {
      const body = req.body as { tenant?: unknown } | undefined
      const tenant = req.headers['x-tenant'] ?? (typeof body?.tenant === 'string' ? body.tenant : '')
      return `token:${String(tenant)}:${clientAddress(req)}`
    },
  }
}
