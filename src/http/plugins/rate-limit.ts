import { createRequire } from 'node:module'
import rateLimit, { type FastifyRateLimitStore } from '@fastify/rate-limit'
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify'
import type { Deps } from '../../shared/deps.js'
import { routeLabel } from './observability.js'
import type { Config } from '../../config.js'
import { type RedisClient, warnAtMostEveryMinute } from '../../shared/redis.js'
import { AppError } from '../errors.js'

type Store = FastifyRateLimitStore & { child(routeOptions: unknown): Store }
type StoreCtor = new (...args: unknown[]) => Store

// The plugin's own stores, so counting works exactly as the plugin documents it.
const require = createRequire(import.meta.url)
const RedisStore = require('@fastify/rate-limit/store/RedisStore') as StoreCtor
const LocalStore = require('@fastify/rate-limit/store/LocalStore') as StoreCtor

const WINDOW_MS = 60_000

/**
 * Counts in Redis when it answers and in this instance's memory when it does not,
 * so an outage loosens limits to per-instance instead of failing requests.
 */
function resilientStore(redis: RedisClient, log: FastifyBaseLogger) {
  const warn = warnAtMostEveryMinute(log)
  const build = (shared: Store, local: Store): Store => ({
    incr(key, callback, timeWindow, max) {
      shared.incr(key, (err, result) => {
        if (!err) return callback(null, result)
        warn({ err: err.message }, 'rate limit counters fell back to this instance: redis unreachable')
        local.incr(key, callback, timeWindow, max)
      }, timeWindow, max)
    },
    child(routeOptions) {
      return build(shared.child(routeOptions), local.child(routeOptions))
    },
  })
  return class {
    constructor() {
      return build(new RedisStore(false, false, redis, 'aigov:rl:'), new LocalStore(false, false, 10_000))
    }
  } as unknown as StoreCtor
}

const clientAddress = (req: FastifyRequest) => req.ip

/**
 * Limits each API key on resource routes, and each tenant + client address on the token exchange.
 * The limit headers go on every response in both spellings (RateLimit-* and X-RateLimit-*).
 */
export async function installRateLimit(api: FastifyInstance, deps: Pick<Deps, 'config' | 'redis' | 'metrics'>): Promise<void> {
  const { config, redis, metrics } = deps
  await api.register(rateLimit, {
    onExceeded: (req) => metrics.rateLimitRefusals.inc({ route: routeLabel(req) }),
    max: config.rateLimitPerMinute,
    timeWindow: WINDOW_MS,
    hook: 'onRequest',
    enableDraftSpec: true,
    store: redis ? resilientStore(redis, api.log) : undefined,
    keyGenerator: (req) => (req.ctx ? `key:${req.ctx.tenantId}:${req.ctx.actor.id}` : `addr:${clientAddress(req)}`),
    errorResponseBuilder: (req, context) => {
      const retryAfter = Math.max(1, Math.ceil(context.ttl / 1000))
      return new AppError('rate_limited', `rate limit of ${context.max} requests per minute exceeded; retry in ${retryAfter} s`, undefined, {
        retry_after: retryAfter,
        limit: context.max,
        remaining: 0,
        reset_time: new Date(Date.now() + context.ttl).toISOString(),
      })
    },
  })
  api.addHook('onSend', async (_req, reply) => {
    for (const name of ['limit', 'remaining', 'reset'] as const) {
      const value = reply.getHeader(`ratelimit-${name}`)
      if (value !== undefined) reply.header(`x-ratelimit-${name}`, value)
    }
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
