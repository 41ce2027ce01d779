import { type Kysely, type Migration, type MigrationProvider, Migrator } from 'kysely'
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
  const migrator = new Migrator({ db, provider })
  const { error, results } = await migrator.migrateToLatest()
  if (error) throw error
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)
}
