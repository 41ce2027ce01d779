import type { FastifyBaseLogger } from 'fastify'
import { type RedisClient, warnAtMostEveryMinute } from '../../shared/redis.js'

export const BUDGET_WINDOW_MS = 60_000
/** Keys whose windows this instance keeps at most without Redis (as the request rate limit's local store). */
const LOCAL_KEYS = 10_000

export interface BudgetState {
  /** Bytes counted in the current window. */
  used: number
  /** Milliseconds until the window ends and the count starts again. */
  resetInMs: number
}

/**
 * Takes `n` bytes unless that would pass the limit; a take that does not fit counts nothing. One fixed window per key,
 * started by its first take, as the request rate limit counts requests.
 */
const TAKE = `
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
local n = tonumber(ARGV[1])
if n > 0 and used + n > tonumber(ARGV[2]) then
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl < 0 then ttl = tonumber(ARGV[3]) end
  return {0, used, ttl}
end
if n > 0 then used = redis.call('INCRBY', KEYS[1], n) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 and n > 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  ttl = tonumber(ARGV[3])
elseif ttl < 0 then
  ttl = tonumber(ARGV[3])
end
return {1, used, ttl}`

/**
 * Evidence bytes each API key may upload per minute (EVIDENCE_UPLOAD_MB_PER_MINUTE). Counted in Redis when it is set
 * and answers, so every instance draws on one budget, and in this instance's memory otherwise: an outage loosens the
 * budget to per instance instead of failing uploads.
 */
export class UploadBudget {
  private readonly local = new Map<string, { used: number; resetAt: number }>()
  private readonly warn: ((details: object, message: string) => void) | undefined

  constructor(
    readonly limitBytes: number,
    private readonly redis: RedisClient | undefined,
    log: FastifyBaseLogger | undefined,
  ) {
    this.warn = log && warnAtMostEveryMinute(log)
  }

  /** Takes `bytes` from the key's budget if they fit; `ok` false (and nothing taken) when they do not. */
  async take(key: string, bytes: number): Promise<BudgetState & { ok: boolean }> {
    if (this.redis) {
      try {
        const [ok, used, ttl] = (await this.redis.eval(
          TAKE,
          1,
          `aigov:evbytes:${key}`,
          bytes,
          this.limitBytes,
          BUDGET_WINDOW_MS,
        )) as [number, number, number]
        return { ok: ok === 1, used: Number(used), resetInMs: Number(ttl) }
      } catch (err) {
        this.warn?.(
          { err: (err as Error).message },
          'evidence upload budgets fell back to this instance: redis unreachable',
        )
      }
    }
    return this.takeLocally(key, bytes)
  }

  /** The key's budget now, taking nothing. */
  read(key: string): Promise<BudgetState> {
    return this.take(key, 0)
  }

  private takeLocally(key: string, bytes: number): BudgetState & { ok: boolean } {
    const now = Date.now()
    let window = this.local.get(key)
    if (!window || window.resetAt <= now) {
      if (bytes === 0) return { ok: true, used: 0, resetInMs: BUDGET_WINDOW_MS }
      this.local.delete(key)
      if (this.local.size >= LOCAL_KEYS) this.prune(now)
      window = { used: 0, resetAt: now + BUDGET_WINDOW_MS }
      this.local.set(key, window)
    }
    const fits = window.used + bytes <= this.limitBytes
    if (fits) window.used += bytes
    return { ok: fits, used: window.used, resetInMs: window.resetAt - now }
  }

  /** Drops ended windows, then the oldest ones, so the map stays within LOCAL_KEYS however many keys upload. */
  private prune(now: number): void {
    for (const [key, window] of this.local) if (window.resetAt <= now) this.local.delete(key)
    for (const key of this.local.keys()) {
      if (this.local.size < LOCAL_KEYS) break
      this.local.delete(key)
    }
  }
}
