import { DEFAULT_MIGRATION_TABLE, type Migration, type MigrationProvider, Migrator, sql } from 'kysely'
import type { Database } from './create-db.js'
import * as foundation from './migrations/2026-11-22T00-foundation.js'
import * as catalog from './migrations/2026-11-22T01-catalog.js'
import * as policy from './migrations/2026-11-22T02-policy.js'
import * as workflowRejectionReason from './migrations/2026-11-22T03-workflow-rejection-reason.js'
import * as workflowSystemStages from './migrations/2026-11-22T03-workflow-system-stages.js'
import * as idempotency from './migrations/2026-11-22T05-idempotency.js'
import * as auditSourceIndex from './migrations/2026-11-22T06-audit-source-index.js'
import * as auditNameSearch from './migrations/2026-11-22T07-audit-name-search.js'
import * as longerNames from './migrations/2026-11-23T12-longer-names.js'
import * as auditChainKey from './migrations/2026-11-23T13-audit-chain-key.js'
import * as auditNameSearchPerTenant from './migrations/2026-11-23T13b-audit-name-search-per-tenant.js'
import * as peopleCustomFields from './migrations/2026-11-23T14a-people-custom-fields.js'
import * as owners from './migrations/2026-11-23T14b-owners.js'
import * as evidence from './migrations/2026-11-23T15-evidence.js'
import * as webhooks from './migrations/2026-11-23T16-webhooks.js'
import * as nameKeyBackfill from './migrations/2026-11-23T17-name-key-backfill.js'
import * as auditActionCreatedIndex from './migrations/2026-11-23T18-audit-action-created-index.js'
import * as auditPrimaryKeyByTenant from './migrations/2026-11-23T19a-audit-primary-key-by-tenant.js'
import * as auditNameFiveGrams from './migrations/2026-11-23T19b-audit-name-five-grams.js'
import * as auditNameTrigramsNoPendingList from './migrations/2026-11-23T19c-audit-name-trigrams-no-pending-list.js'
import * as auditNamesIndexedSeq from './migrations/2026-11-25T10-audit-names-indexed-seq.js'
import * as auditNameGramsPlpgsql from './migrations/2026-11-26T13-audit-name-grams-plpgsql.js'
import * as auditNamesTable from './migrations/2026-11-27T18-audit-names-table.js'
import * as webhookDeliveryIndexes from './migrations/2026-11-27T21-webhook-delivery-indexes.js'
import * as auditNamesAfterCommit from './migrations/2026-11-28T00-audit-names-after-commit.js'
import * as customFieldMetadata from './migrations/2026-11-29T10-custom-field-metadata.js'
import * as evidenceUsage from './migrations/2026-12-01T10-evidence-usage.js'
import * as auditLegacyProofs from './migrations/2026-12-01T11-audit-legacy-proofs.js'
import * as peopleSignIn from './migrations/2026-12-02T07-people-sign-in.js'
import * as sso from './migrations/2026-12-02T08-sso.js'
import * as oauth from './migrations/2026-12-02T09-oauth.js'
import * as questionnaireMissingRequired from './migrations/2026-12-02T10-questionnaire-missing-required.js'
import * as useCaseStageIndex from './migrations/2026-12-02T11-use-case-stage-index.js'
import * as controlAssigneeIndex from './migrations/2026-12-03T01-control-assignee-index.js'

/** Every migration, by name; names sort in the order they apply. */
const migrations: Record<string, Migration> = {
  '2026-11-22T00-foundation': foundation,
  '2026-11-22T01-catalog': catalog,
  '2026-11-22T02-policy': policy,
  '2026-11-22T03-workflow-rejection-reason': workflowRejectionReason,
  '2026-11-22T03-workflow-system-stages': workflowSystemStages,
  '2026-11-22T05-idempotency': idempotency,
  '2026-11-22T06-audit-source-index': auditSourceIndex,
  '2026-11-22T07-audit-name-search': auditNameSearch,
  '2026-11-23T12-longer-names': longerNames,
  '2026-11-23T13-audit-chain-key': auditChainKey,
  '2026-11-23T13b-audit-name-search-per-tenant': auditNameSearchPerTenant,
  '2026-11-23T14a-people-custom-fields': peopleCustomFields,
  '2026-11-23T14b-owners': owners,
  '2026-11-23T15-evidence': evidence,
  '2026-11-23T16-webhooks': webhooks,
  '2026-11-23T17-name-key-backfill': nameKeyBackfill,
  '2026-11-23T18-audit-action-created-index': auditActionCreatedIndex,
  '2026-11-23T19a-audit-primary-key-by-tenant': auditPrimaryKeyByTenant,
  '2026-11-23T19b-audit-name-five-grams': auditNameFiveGrams,
  '2026-11-23T19c-audit-name-trigrams-no-pending-list': auditNameTrigramsNoPendingList,
  '2026-11-25T10-audit-names-indexed-seq': auditNamesIndexedSeq,
  '2026-11-26T13-audit-name-grams-plpgsql': auditNameGramsPlpgsql,
  '2026-11-27T18-audit-names-table': auditNamesTable,
  '2026-11-27T21-webhook-delivery-indexes': webhookDeliveryIndexes,
  '2026-11-28T00-audit-names-after-commit': auditNamesAfterCommit,
  '2026-11-29T10-custom-field-metadata': customFieldMetadata,
  '2026-12-01T10-evidence-usage': evidenceUsage,
  '2026-12-01T11-audit-legacy-proofs': auditLegacyProofs,
  '2026-12-02T07-people-sign-in': peopleSignIn,
  '2026-12-02T08-sso': sso,
  '2026-12-02T09-oauth': oauth,
  '2026-12-02T10-questionnaire-missing-required': questionnaireMissingRequired,
  '2026-12-02T11-use-case-stage-index': useCaseStageIndex,
  '2026-12-03T01-control-assignee-index': controlAssigneeIndex,
}

const provider: MigrationProvider = { getMigrations: async () => migrations }

export async function migrateToLatest(database: Database): Promise<string[]> {
  const { db } = database
  // Kysely looks for its bookkeeping tables in any schema unless told which: name the current one,
  // so databases that keep several schemas (one per test, one per environment) don't confuse it.
  const migrationTableSchema =
    database.dialect === 'postgres'
      ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0].schema
      : undefined
  if (await allApplied(database, migrationTableSchema)) return []
  // Branches add migrations side by side; one that sorts before an applied one still applies.
  const migrator = new Migrator({ db, provider, migrationTableSchema, allowUnorderedMigrations: true })
  const { error, results } = await migrator.migrateToLatest()
  if (error) throw error
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)
}

/**
 * Nearly every start finds the database up to date: one read says so, where Kysely's migrator would check its
 * tables, take its lock and sort the names with the first `localeCompare` of the process (which loads ICU's
 * collation). A database without the bookkeeping table, or with a migration missing, goes to the migrator.
 */
async function allApplied(database: Database, schema: string | undefined): Promise<boolean> {
  const table = sql.table(schema === undefined ? DEFAULT_MIGRATION_TABLE : `${schema}.${DEFAULT_MIGRATION_TABLE}`)
  const applied = await sql<{ name: string }>`select name from ${table}`.execute(database.db).then(
    (result) => new Set(result.rows.map((row) => row.name)),
    () => new Set<string>(),
  )
  return Object.keys(migrations).every((name) => applied.has(name))
}
