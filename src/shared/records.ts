import { isUniqueViolation } from '../db/create-db.js'
import { conflict } from '../http/errors.js'
import { nameKey } from './search.js'

/** Helpers for the named records every catalog family stores (name + name_key, 0/1 flags, JSON lists). */

/** The name columns of a record: the name as given (trimmed) and the key uniqueness and `q` search use. */
export function nameColumns(name: string): { name: string; name_key: string } {
  return { name: name.trim(), name_key: nameKey(name) }
}

/**
 * Runs a write whose only unique constraint is the tenant's case-insensitive name,
 * turning a clash into 409. `name` is the name being written (undefined when the write keeps it).
 */
export async function uniqueName<T>(what: string, name: string | undefined, work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(`a ${what} named "${name?.trim() ?? ''}" already exists in this tenant`)
    throw err
  }
}

/**
 * PATCH semantics for plain columns: copies the listed fields the body carries (null included: it clears).
 * `defaults` gives the value a NOT NULL column takes when cleared.
 */
export function presentFields<I extends object, K extends keyof I & string>(
  input: I,
  fields: readonly K[],
  defaults: Partial<Record<K, unknown>> = {},
): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const field of fields) {
    const value = input[field]
    if (value !== undefined) out[field] = value === null && field in defaults ? defaults[field] : value
  }
  return out
}

export const toFlag = (value: boolean): number => (value ? 1 : 0)
export const fromFlag = (value: number | boolean): boolean => value === 1 || value === true
