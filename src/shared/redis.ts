import type { FastifyBaseLogger } from 'fastify'
import { createRequire } from 'node:module'
import type { Redis } from 'ioredis'

// ioredis is loaded only when REDIS_URL is set (it costs start time otherwise).
const require = createRequire(import.meta.url)

export type RedisClient = Redis

/**
 * A client that fails fast while Redis is away (no offline queue, short command timeout), so callers can
 * fall back to per-instance state instead of hanging; it keeps reconnecting in the background.
 */
export function createRedis(url: string, log: FastifyBaseLogger): Redis {
  const { Redis: RedisClass } = require('ioredis') as typeof import('ioredis')
  const redis = new RedisClass(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: 500,
    connectTimeout: 1000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
  })
  const warn = warnAtMostEveryMinute(log)
  redis.on('error', (err) => warn({ err: err.message }, 'redis unreachable; using per-instance state'))
  return redis
}

/**
 * A connection subscribed to `channels`, calling `onMessage` for each message. Its subscribe waits for Redis however
 * long it takes (no command timeout, no retry limit: a start that keeps the event loop busy must not lose it), and
 * ioredis subscribes again after every reconnect.
 */
export function subscribe(
  redis: Redis,
  channels: string[],
  onMessage: (channel: string, message: string) => void,
): Redis {
  const subscriber = redis.duplicate({
    enableOfflineQueue: true,
    commandTimeout: undefined,
    maxRetriesPerRequest: null,
  })
  subscriber.on('error', () => undefined)
  subscriber.on('message', onMessage)
  void subscriber.subscribe(...channels).catch(() => undefined)
  return subscriber
}

/** Waits until the client is ready, or gives up after `ms`: the service starts either way. */
export async function waitUntilReady(redis: Redis, ms = 2000): Promise<boolean> {
  if (redis.status === 'ready') return true
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      redis.off('ready', onReady)
      resolve(false)
    }, ms)
    const onReady = () => {
      clearTimeout(timer)
      resolve(true)
    }
    redis.once('ready', onReady)
  })
}

/** A warning that repeats at most once a minute, however often the failure happens. */
export function warnAtMostEveryMinute(log: FastifyBaseLogger): (details: object, message: string) => void {
  let last = 0
  return (details, message) => {
    if (Date.now() - last < 60_000) return
    last = Date.now()
    log.warn(details, message)
  }
}
