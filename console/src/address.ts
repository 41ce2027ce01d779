// A table's filters and page live in the address (shareable, the back button works): every table reads and writes
// them alike.

/** The non-empty values of `keys` in the query string. */
export function readAddress<K extends string>(search: string, keys: readonly K[]): Partial<Record<K, string>> {
  const p = new URLSearchParams(search)
  const out: Partial<Record<K, string>> = {}
  for (const key of keys) {
    const v = p.get(key)
    if (v) out[key] = v
  }
  return out
}

/**
 * The query string of `current` with `change`, in the order of `keys`, leaving out each value equal to its default.
 * A changed filter starts again at the first page: only a change of `after` (the cursor) keeps it.
 */
export function writeAddress<K extends string>(
  keys: readonly K[],
  current: Partial<Record<K, string>>,
  change: Partial<Record<K, string | undefined>>,
  defaults: Partial<Record<K, string>> = {},
): string {
  const next: Partial<Record<string, string | undefined>> = { ...current, ...change }
  if (!('after' in change)) delete next.after
  const p = new URLSearchParams()
  for (const key of keys) {
    const v = next[key]
    if (v && v !== defaults[key]) p.set(key, v)
  }
  const text = p.toString()
  return text ? `?${text}` : ''
}
