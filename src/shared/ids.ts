import { monotonicFactory } from 'ulid'

const nextUlid = monotonicFactory()

export type IdPrefix = 'uc' | 'mdl' | 'vnd' | 'rt' | 'rs' | 'ws' | 'pcb' | 'pcv' | 'pp' | 'q' | 'ucc' | 'al' | 'key'

/** A type prefix plus a ULID, lower-cased, so that id order is creation order. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${nextUlid().toLowerCase()}`
}

export function now(): string {
  return new Date().toISOString()
}
