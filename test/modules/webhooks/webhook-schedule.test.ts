import { describe, expect, it } from 'vitest'
import {
  BUSY_RATE,
  BUSY_TURN_MS,
  CLAIM_BATCH,
  CONCURRENCY,
  FANOUT_BATCH,
  FEW_EVENTS,
  HELD_PER_ENDPOINT,
  HELD_PER_TENANT,
  IN_HAND,
  LEASE_MARGIN_MS,
  PER_ENDPOINT,
  PER_TENANT_SENDS,
  QUICK_TURN_MS,
  TURN_MS,
  backoffMs,
  claimLimit,
  fanOutLimit,
  leaseOutlastsSend,
  leaseUntil,
  maySend,
  parseRetryAfter,
  room,
  servedThisTurn,
  turnInterval,
  turnPlan,
} from '../../../src/modules/webhooks/webhook-schedule.js'

describe('the webhook scheduler', () => {
  it('yields only when the loop was busy lately and still is, at BUSY_RATE a second', () => {
    expect(turnPlan({ average: 0.9, latest: 0.2 }, 250)).toEqual({ yielding: false, budget: Infinity })
    expect(turnPlan({ average: 0.2, latest: 0.9 }, 250)).toEqual({ yielding: false, budget: Infinity })
    expect(turnPlan({ average: 0.7, latest: 0.7 }, 100)).toEqual({ yielding: true, budget: (BUSY_RATE * 100) / 1000 })
    // After a pause, no more than a yielding turn's share.
    expect(turnPlan({ average: 1, latest: 1 }, 60_000).budget).toBe(Math.ceil((BUSY_RATE * BUSY_TURN_MS) / 1000))
    expect(turnPlan({ average: 1, latest: 1 }, 1).budget).toBe(1)
  })

  it('spaces turns by load and by how much the last one fanned out', () => {
    expect(turnInterval(true, 0)).toBe(BUSY_TURN_MS)
    expect(turnInterval(false, FEW_EVENTS - 1)).toBe(QUICK_TURN_MS)
    expect(turnInterval(false, FEW_EVENTS)).toBe(TURN_MS)
  })

  it('serves every endpoint behind when the budget allows, and takes turns when it does not', () => {
    const behind = ['a', 'b', 'c', 'd', 'e']
    expect(servedThisTurn(behind, Infinity, 3)).toEqual({ served: behind, nextServed: 3 })
    let next = 0
    const seen: string[] = []
    for (let turn = 0; turn < 5; turn++) {
      const t = servedThisTurn(behind, 2, next)
      expect(t.served).toHaveLength(2)
      seen.push(...t.served)
      next = t.nextServed
    }
    // Ten slots over five endpoints: each served exactly twice, none starved.
    for (const e of behind) expect(seen.filter((s) => s === e)).toHaveLength(2)
  })

  it('shares the fan-out budget between the endpoints behind, one record each at least', () => {
    expect(fanOutLimit(Infinity, 3)).toBe(FANOUT_BATCH)
    expect(fanOutLimit(50, 10)).toBe(5)
    expect(fanOutLimit(3, 10)).toBe(1)
  })

  it('bounds what an endpoint, a tenant and the service hold in hand', () => {
    expect(room(0, 0, 0)).toBe(Math.min(HELD_PER_ENDPOINT, HELD_PER_TENANT, IN_HAND))
    expect(room(HELD_PER_ENDPOINT, 0, 0)).toBe(0)
    expect(room(HELD_PER_ENDPOINT + 5, 0, 0)).toBe(0)
    expect(room(0, HELD_PER_TENANT - 3, 0)).toBe(3)
    expect(room(0, 0, IN_HAND - 7)).toBe(7)
    expect(claimLimit(Infinity, 0)).toBe(CLAIM_BATCH)
    expect(claimLimit(5, 0)).toBe(5)
    expect(claimLimit(Infinity, IN_HAND - 2)).toBe(2)
  })

  it('lets a send start only below the endpoint, tenant and service limits', () => {
    expect(maySend(0, 0, 0)).toBe(true)
    expect(maySend(PER_ENDPOINT, 0, 0)).toBe(false)
    expect(maySend(0, PER_TENANT_SENDS, 0)).toBe(false)
    expect(maySend(0, 0, CONCURRENCY)).toBe(false)
    expect(maySend(PER_ENDPOINT - 1, PER_TENANT_SENDS - 1, CONCURRENCY - 1)).toBe(true)
  })

  it('leases a delivery for the longest send and a margin, and starts a send only while its lease outlasts it', () => {
    const now = Date.parse('2026-01-01T00:00:00Z')
    const until = leaseUntil(12_000, now)
    expect(until).toBe(new Date(now + 12_000 + LEASE_MARGIN_MS).toISOString())
    expect(leaseOutlastsSend(until, 12_000, now)).toBe(true)
    expect(leaseOutlastsSend(until, 12_000, now + LEASE_MARGIN_MS)).toBe(true)
    expect(leaseOutlastsSend(until, 12_000, now + LEASE_MARGIN_MS + 1)).toBe(false)
  })

  it('backs off exponentially from 5 s to 2 h, jittered over the upper half', () => {
    expect(backoffMs(1, () => 0)).toBe(2500)
    expect(backoffMs(1, () => 1)).toBe(5000)
    expect(backoffMs(3, () => 1)).toBe(20_000)
    expect(backoffMs(0, () => 1)).toBe(5000)
    expect(backoffMs(40, () => 1)).toBe(2 * 3600 * 1000)
    expect(backoffMs(40, () => 0)).toBe(3600 * 1000)
  })

  it('reads Retry-After as seconds or an HTTP date, and ignores what it cannot read', () => {
    const now = Date.parse('2026-01-01T00:00:00Z')
    expect(parseRetryAfter(undefined, now)).toBeUndefined()
    expect(parseRetryAfter(' 7 ', now)).toBe(7000)
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:30 GMT', now)).toBe(30_000)
    expect(parseRetryAfter('Wed, 31 Dec 2025 23:00:00 GMT', now)).toBe(0)
    expect(parseRetryAfter('soon', now)).toBeUndefined()
  })
})
