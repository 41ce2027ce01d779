import { type Kysely, type Migration, type MigrationProvider, Migrator, PostgresAdapter, sql } from 'kysely'
import * as foundation from './migrations/2026-11-22T00-foundation.js'
import * as catalog from './migrations/2026-11-22T01-catalog.js'

/** Every migration, by name; names sort in the order they apply. */
const migrations: Record<string, Migration> = {
  '2026-11-22T00-foundation': foundation,
  '2026-11-22T01-catalog': catalog,
}

const provider: MigrationProvider = { getMigrations: async () => migrations }

export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  // Kysely looks for its bookkeeping tables in every schema unless told which; name ours, or a
  // database holding other schemas (tests run one per app, concurrently) fools it into skipping them.
  const migrationTableSchema = db.getExecutor().adapter instanceof PostgresAdapter
    ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema
    : undefined
  const migrator = new Migrator({ db, provider, migrationTableSchema })
  const { error, results } = await migrator.migrateToLatest()
  if (error) throw error
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)
}
