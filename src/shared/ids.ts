import { randomFillSync } from 'node:crypto'
import { encodeTime, monotonicFactory, ulid } from 'ulid'

/**
 * The ULID library's random source, drawn from a pooled buffer of crypto random bytes: by default it asks
 * the system for one byte per character, 16 calls per id.
 */
const pool = new Uint8Array(4096)
let poolIndex = pool.length
function randomFraction(): number {
  if (poolIndex === pool.length) {
    randomFillSync(pool)
    poolIndex = 0
  }
  return pool[poolIndex++] / 256
}

const nextUlid = monotonicFactory(randomFraction)

export type IdPrefix =
  | 'uc'
  | 'mdl'
  | 'vnd'
  | 'rt'
  | 'rs'
  | 'ws'
  | 'pcb'
  | 'pcv'
  | 'pp'
  | 'q'
  | 'ucc'
  | 'al'
  | 'key'
  | 'usr'
  | 'team'
  | 'cf'
  | 'ev'
  | 'evb'
  | 'whep'
  | 'whd'
  | 'ses'

/**
 * A type prefix plus a ULID, lower-cased, so that id order is creation order. `atMs` is the creation time
 * (default now); the id's time part is never earlier than it (the factory stays monotonic).
 */
export function newId(prefix: IdPrefix, atMs?: number): string {
  return `${prefix}_${nextUlid(atMs).toLowerCase()}`
}

/** An id for a record backdated to `atMs` (bulk loads of history): its time part is exactly that time. */
export function backdatedId(prefix: IdPrefix, atMs: number): string {
  return `${prefix}_${ulid(atMs, randomFraction).toLowerCase()}`
}

/**
 * The smallest id a record created at or after `atMs` can have. Since an id's time is never earlier than
 * its record's creation time, `id >= idFloor(prefix, T)` follows from `created_at >= T` and lets an index
 * ending in id start its scan at T.
 */
export function idFloor(prefix: IdPrefix, atMs: number): string {
  return `${prefix}_${encodeTime(Math.max(0, atMs), 10).toLowerCase()}`
}

export function now(): string {
  return new Date().toISOString()
}
