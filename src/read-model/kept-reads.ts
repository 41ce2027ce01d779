/**
 * Reads of a tenant's definitions (its workflow start stage, its custom fields) kept for the rest of one group
 * transaction. A group's members are mostly one tenant's creates, and each read both again: on PostgreSQL two of a
 * create's round trips, each of which costs the service more than the statement costs the database. A write to a
 * table through the code that writes it forgets what was kept of that table; a member rolled back to its
 * savepoint forgets everything (what it wrote is gone, and what was read after may have seen it).
 *
 * Only transactions that runMembers opened keep anything: elsewhere every read goes to the database.
 */
const kept = new WeakMap<object, Map<string, Promise<unknown>>>()

/** Starts keeping reads in `tx` (runMembers, for its group). */
export function keepReads(tx: object): void {
  kept.set(tx, new Map())
}

/** Stops keeping reads in `tx`. */
export function dropReads(tx: object): void {
  kept.delete(tx)
}

/** Forgets every read kept in `tx` and goes on keeping (a member was rolled back). */
export function forgetAllReads(tx: object): void {
  kept.get(tx)?.clear()
}

/**
 * `read()` of `table`, done once per `what` (the tenant, and what of it is read) in `tx` while it keeps reads.
 * Callers must not change what it returns.
 */
export function keptRead<T>(tx: object, table: string, what: string, read: () => Promise<T>): Promise<T> {
  const reads = kept.get(tx)
  if (!reads) return read()
  const key = `${table}\n${what}`
  let value = reads.get(key) as Promise<T> | undefined
  if (!value) {
    value = read()
    reads.set(key, value)
    value.catch(() => reads.delete(key))
  }
  return value
}

/** Forgets what `tx` kept of `table`: called by every write to a table whose reads are kept. */
export function forgetReads(tx: object, table: string): void {
  const reads = kept.get(tx)
  if (!reads) return
  for (const key of reads.keys()) if (key.startsWith(`${table}\n`)) reads.delete(key)
}
