import { type Kysely, type Migration, type MigrationProvider, Migrator, PostgresAdapter, sql } from 'kysely'
import * as foundation from './migrations/2026-11-22T00-foundation.js'
import * as catalog from './migrations/2026-11-22T01-catalog.js'
import * as policy from './migrations/2026-11-22T02-policy.js'

/** Every migration, by name; names sort in the order they apply. */
const migrations: Record<string, Migration> = {
  '2026-11-22T00-foundation': foundation,
  '2026-11-22T01-catalog': catalog,
  '2026-11-22T02-policy': policy,
}

const provider: MigrationProvider = { getMigrations: async () => migrations }

export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  // PostgreSQL: pin Kysely's bookkeeping tables to the connection's schema; otherwise its existence check
  // sees them in any schema of the database (e.g. a concurrent test's) and skips creating them in ours.
  const migrationTableSchema = db.getExecutor().adapter instanceof PostgresAdapter
    ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0].schema
    : undefined
  const migrator = new Migrator({ db, provider, migrationTableSchema })
  const { error, results } = await migrator.migrateToLatest()
  if (error) throw error
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)
}
