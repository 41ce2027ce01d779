import { createRequire } from 'node:module'
import type { FastifyRateLimitStore } from '@fastify/rate-limit'
import type { FastifyBaseLogger } from 'fastify'
import { type RedisClient, warnAtMostEveryMinute } from '../../shared/redis.js'

// The counters behind the request limits, apart from the plugin's wiring, so the dependency wiring can build them.

export type Store = FastifyRateLimitStore & { read: FastifyRateLimitStore['incr']; child(routeOptions: unknown): Store }
export type StoreCtor = new (...args: unknown[]) => Store

// The plugin's own stores, so counting works exactly as the plugin documents it.
const require = createRequire(import.meta.url)
const RedisStore = require('@fastify/rate-limit/store/RedisStore') as StoreCtor
export const LocalStore = require('@fastify/rate-limit/store/LocalStore') as StoreCtor

/**
 * Counts in Redis when it answers and in this instance's memory when it does not,
 * so an outage loosens limits to per-instance instead of failing requests.
 */
export function resilientStore(redis: RedisClient, log: FastifyBaseLogger, prefix: string): Store {
  const warn = warnAtMostEveryMinute(log)
  type Op = 'incr' | 'read'
  const build = (shared: Store, local: Store): Store => {
    const fallback =
      (op: Op): Store['incr'] =>
      (key, callback, timeWindow, max) => {
        shared[op](
          key,
          (err, result) => {
            if (!err) return callback(null, result)
            warn({ err: err.message }, 'rate limit counters fell back to this instance: redis unreachable')
            local[op](key, callback, timeWindow, max)
          },
          timeWindow,
          max,
        )
      }
    return {
      incr: fallback('incr'),
      read: fallback('read'),
      child: (routeOptions) => build(shared.child(routeOptions), local.child(routeOptions)),
    }
  }
  return build(new RedisStore(false, false, redis, prefix), new LocalStore(false, false, 10_000))
}

/** The request limit's counters: built once per service, so /mcp and the API routes draw on one budget per API key. */
export type RequestCounters = Store

export function requestCounters(redis: RedisClient | undefined, log: FastifyBaseLogger): RequestCounters {
  return redis ? resilientStore(redis, log, 'aigov:rl:') : new LocalStore(false, false, 10_000)
}
