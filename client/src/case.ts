/** snake_case on the wire, camelCase in TypeScript: key conversion, both ways, for types and values. */

type CamelKey<S extends string> = S extends `${infer Head}_${infer Tail}` ? `${Head}${Capitalize<CamelKey<Tail>>}` : S
type SnakeKey<S extends string> = S extends `${infer Head}${infer Tail}`
  ? `${Head extends Lowercase<Head> ? Head : `_${Lowercase<Head>}`}${SnakeKey<Tail>}`
  : S

/**
 * Object properties whose values are free-form maps keyed by data (audit `changes` is keyed by wire field
 * names, `metadata` by whatever the writer chose, readiness `checks` by dependency, the summary's `by_step` by workflow
 * step, the dossier's `workflow_stage_names` by stage id): their keys pass untouched.
 * A test fails when the OpenAPI document declares a map under any other property name.
 */
export const FREE_FORM_PROPERTIES: ReadonlySet<string> = new Set([
  'changes',
  'metadata',
  'checks',
  'by_step',
  'workflow_stage_names',
])
type FreeForm = 'changes' | 'metadata' | 'checks' | 'by_step' | 'workflow_stage_names'

/** The camelCase view of a wire type. */
export type Camelize<T> = T extends readonly (infer E)[]
  ? Camelize<E>[]
  : T extends object
    ? { [K in keyof T as K extends string ? CamelKey<K> : K]: K extends FreeForm ? T[K] : Camelize<T[K]> }
    : T

/** The wire (snake_case) form of a camelCase type. */
export type Snakify<T> = T extends readonly (infer E)[]
  ? Snakify<E>[]
  : T extends object
    ? { [K in keyof T as K extends string ? SnakeKey<K> : K]: K extends FreeForm ? T[K] : Snakify<T[K]> }
    : T

export const camelKey = (key: string): string => key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase())
export const snakeKey = (key: string): string => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)

function convertKeys(value: unknown, convert: (key: string) => string): unknown {
  if (Array.isArray(value)) return value.map((item) => convertKeys(item, convert))
  if (!isPlainObject(value)) return value
  const out: Record<string, unknown> = {}
  for (const [key, item] of Object.entries(value)) {
    out[convert(key)] = FREE_FORM_PROPERTIES.has(key) ? item : convertKeys(item, convert)
  }
  return out
}

/** Converts every object key to camelCase, recursively (values, ids and enum values are left alone). */
export const camelize = <T>(value: T): Camelize<T> => convertKeys(value, camelKey) as Camelize<T>
/** Converts every object key to snake_case, recursively (values, ids and enum values are left alone). */
export const snakify = <T>(value: T): Snakify<T> => convertKeys(value, snakeKey) as Snakify<T>

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false
  const proto: unknown = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}
