// What the dispatcher may do this turn, as pure functions of its state (loop load, counts in hand, time): no
// database, no network, no clock of its own, so each rule is tested alone (test/modules/webhooks/webhook-schedule.test.ts).
// Measured reasons for the figures: bench/results/design-measurements.md (Webhook delivery yielding to the API).

/**
 * Turns of the loop (fan out, claim, record successes) start at most this often while events keep coming: one
 * turn serves many commits and many finished sends, and each turn costs queries and a commit the API's writes wait
 * for, so longer turns leave more to the API at the price of a longer delivery lag.
 */
export const TURN_MS = 150
/** After a turn that fanned out fewer than FEW_EVENTS, the next may start this soon: light traffic goes out quickly. */
export const QUICK_TURN_MS = 50
export const FEW_EVENTS = 10
/** Records fanned out per endpoint and turn at most. */
export const FANOUT_BATCH = 500
/**
 * While the API keeps the event loop this busy (the share of the time it runs code, lately and still), deliveries
 * yield to it: turns come every BUSY_TURN_MS and take at most BUSY_RATE deliveries a second in hand, and the rest
 * wait in the log (the endpoints' cursors stay behind) until the load eases; nothing is lost, only sent later.
 */
export const BUSY_UTILIZATION = 0.7
/** "Lately": averaged over about this long, so that a burst at the start of each second (a rate-limited client) is not a busy loop. */
export const BUSY_AVERAGE_MS = 500
/** Enough to make way through a backlog while the API stays busy, little enough to leave it nearly all the machine. */
export const BUSY_RATE = 200
export const BUSY_TURN_MS = 250
/** Sends in flight at once, over all endpoints: enough for several hanging endpoints to leave room for the others. */
export const CONCURRENCY = 512
/** Claimed deliveries held at once (sending or waiting for a free slot of their endpoint). */
export const IN_HAND = 1024
/** Deliveries claimed in one statement at most. */
export const CLAIM_BATCH = 128
/**
 * Sends in flight to one endpoint: a slow endpoint can hold no more, so it never delays the others. A busy
 * service takes in its sends' answers late (its event loop serves the API first), so an endpoint's throughput is
 * this many sends per event-loop delay: enough for hundreds of events a second.
 */
export const PER_ENDPOINT = 64
/** Deliveries of one endpoint in hand at most after a fan-out: as many as PER_ENDPOINT in flight and a claim allow. */
export const HELD_PER_ENDPOINT = 2 * PER_ENDPOINT + CLAIM_BATCH
/**
 * Sends in flight for one tenant, over all its endpoints: half of CONCURRENCY, so that the other half always serves
 * the other tenants, whatever number of hanging endpoints one tenant has.
 */
export const PER_TENANT_SENDS = CONCURRENCY / 2
/** Deliveries of one tenant in hand at most, by the same rule as HELD_PER_ENDPOINT. */
export const HELD_PER_TENANT = 2 * PER_TENANT_SENDS + CLAIM_BATCH
/** A claimed delivery is this instance's for the send timeout and this much more; after a crash another instance takes it over. */
export const LEASE_MARGIN_MS = 5_000
const MAX_BACKOFF_MS = 2 * 3600 * 1000
const FIRST_BACKOFF_MS = 5000

/** The event loop's load as LoopLoad samples it: the share of time spent running code, averaged and latest. */
export interface Load {
  average: number
  latest: number
}

/**
 * Whether this turn yields to the API, and how many deliveries it may take in hand: while yielding, BUSY_RATE a
 * second since the last turn, and no more than a yielding turn's share after a pause. Busy for a while and still:
 * a burst does not make deliveries yield, and the load's end stops it at the next turn.
 */
export function turnPlan(load: Load, sinceLastTurnMs: number): { yielding: boolean; budget: number } {
  const yielding = load.average >= BUSY_UTILIZATION && load.latest >= BUSY_UTILIZATION
  const budget = yielding ? Math.ceil((BUSY_RATE * Math.min(sinceLastTurnMs, BUSY_TURN_MS)) / 1000) : Infinity
  return { yielding, budget }
}

/** How long after the last turn started the next may start. */
export function turnInterval(yielding: boolean, lastFannedOut: number): number {
  return yielding ? BUSY_TURN_MS : lastFannedOut < FEW_EVENTS ? QUICK_TURN_MS : TURN_MS
}

/**
 * The endpoints behind that this turn fans out, and where the next turn starts: all of them, unless a yielding
 * turn's budget is smaller than their number. Then one record each for as many as the budget allows, taking turns
 * from `nextServed`, so that the budget holds however many endpoints there are and none waits for the others.
 */
export function servedThisTurn<E>(
  behind: E[],
  budget: number,
  nextServed: number,
): { served: E[]; nextServed: number } {
  if (behind.length <= budget) return { served: behind, nextServed }
  const from = nextServed % behind.length
  return { served: [...behind.slice(from), ...behind.slice(0, from)].slice(0, budget), nextServed: from + budget }
}

/** Records read per endpoint in a fan-out: the budget shared between the endpoints behind, FANOUT_BATCH at most. */
export function fanOutLimit(budget: number, endpointsBehind: number): number {
  return Math.min(FANOUT_BATCH, Math.max(1, Math.floor(budget / endpointsBehind)))
}

/**
 * How many deliveries of an endpoint may be taken in hand now, given what it holds (waiting and sending), what its
 * tenant holds and what is held in all: what leaves it HELD_PER_ENDPOINT at most, its tenant HELD_PER_TENANT and all
 * IN_HAND. A healthy endpoint takes a whole turn's events at fan-out, so they need no claim; a slow one holds no more
 * than a claim lets it, so a few of them cannot take all of IN_HAND.
 */
export function room(endpointHeld: number, tenantHeld: number, inHand: number): number {
  return Math.max(0, Math.min(HELD_PER_ENDPOINT - endpointHeld, HELD_PER_TENANT - tenantHeld, IN_HAND - inHand))
}

/** Deliveries one claim may take: CLAIM_BATCH, the turn's budget, and what IN_HAND leaves, at most. */
export function claimLimit(budget: number, inHand: number): number {
  return Math.min(CLAIM_BATCH, budget, IN_HAND - inHand)
}

/** Whether another send may start: its endpoint, its tenant and the service each below their limit of sends in flight. */
export function maySend(endpointSending: number, tenantSending: number, sending: number): boolean {
  return endpointSending < PER_ENDPOINT && tenantSending < PER_TENANT_SENDS && sending < CONCURRENCY
}

/** When a lease taken now runs out: after the longest a send may take, and LEASE_MARGIN_MS. */
export function leaseUntil(sendTimeoutMs: number, nowMs: number = Date.now()): string {
  return new Date(nowMs + sendTimeoutMs + LEASE_MARGIN_MS).toISOString()
}

/** Whether a send started now ends within the lease: if not, another instance could send it too, so it waits for the lease to run out. */
export function leaseOutlastsSend(leaseUntil: string, sendTimeoutMs: number, nowMs: number = Date.now()): boolean {
  return Date.parse(leaseUntil) - nowMs >= sendTimeoutMs
}

/** Exponential from 5 s, capped at 2 h, with full jitter over its upper half so retries of many events spread out. */
export function backoffMs(attempts: number, random: () => number = Math.random): number {
  const base = Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** Math.max(0, attempts - 1))
  return Math.round(base / 2 + random() * (base / 2))
}

/** Retry-After as seconds or an HTTP date, in ms from `nowMs`; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, nowMs: number = Date.now()): number | undefined {
  if (value === undefined) return undefined
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000
  const at = Date.parse(value)
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs)
}
