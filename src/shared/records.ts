import { type Kysely, sql } from 'kysely'
import { isUniqueViolation } from '../db/create-db.js'
import type { Tables } from '../db/tables.js'
import { alreadyExists, conflict } from '../http/errors.js'
import type { Ctx } from './context.js'
import { nameKey } from './search.js'

/** Helpers for the named records every catalog family stores (name + name_key, 0/1 flags, JSON lists). */

/** The name columns of a record: the name as given (trimmed) and the key uniqueness and `q` search use. */
export function nameColumns(name: string): { name: string; name_key: string } {
  return { name: name.trim(), name_key: nameKey(name) }
}

/** The form emails are compared in: trimmed, lower-cased. */
export const emailKey = (email: string): string => email.trim().toLowerCase()

/** A tenant-unique field of a table: a record's name (compared by its name_key) or its key (compared as is). */
export interface UniqueField {
  /** A table with `id`, `tenant_id` and `name_key` (or `key`, or `email_key`), unique per tenant. */
  table: keyof Tables & string
  /** What the record is called in messages: "use case". */
  what: string
  field?: 'name' | 'key' | 'email'
}

/**
 * Runs a write whose only unique constraint is the tenant's name (or key), turning a clash into 422
 * `already_exists` with the existing record's id, so a sync can skip it without a second lookup.
 * `value` is the name or key being written (undefined when the write keeps it).
 */
export async function uniqueName<T>(
  db: Kysely<Tables>,
  ctx: Ctx,
  unique: UniqueField,
  value: string | undefined,
  work: () => Promise<T>,
): Promise<T> {
  // The clashing record may vanish between the failed write and the lookup: then the write is tried again.
  for (let attempt = 1; ; attempt++) {
    try {
      return await work()
    } catch (err) {
      if (!isUniqueViolation(err)) throw err
      if (value === undefined) throw conflict(`this ${unique.what} clashes with another one in this tenant`)
      const existingId = await findExisting(db, ctx.tenantId, unique, value)
      if (existingId !== undefined || attempt === 3)
        throw alreadyExists(unique.what, unique.field ?? 'name', value.trim(), existingId)
    }
  }
}

async function findExisting(
  db: Kysely<Tables>,
  tenantId: string,
  unique: UniqueField,
  value: string,
): Promise<string | undefined> {
  const [column, key] =
    unique.field === 'key'
      ? ['key', value]
      : unique.field === 'email'
        ? ['email_key', emailKey(value)]
        : ['name_key', nameKey(value)]
  const row = await (db as unknown as Kysely<Record<string, { id: string; tenant_id: string }>>)
    .selectFrom(unique.table)
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where(sql.ref(column), '=', key)
    .executeTakeFirst()
  return row?.id
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
