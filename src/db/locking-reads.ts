import type { KyselyPlugin } from 'kysely'

/**
 * Marks a PostgreSQL group transaction (the scheduler adds it): reads for change in it lock their rows (forChange).
 * It changes no query itself; a transaction without it, or any SQLite one, reads without locks.
 */
export const LOCKING_READS: KyselyPlugin = {
  transformQuery: ({ node }) => node,
  transformResult: async ({ result }) => result,
}
