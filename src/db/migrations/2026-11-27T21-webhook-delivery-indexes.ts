import { type Kysely, sql } from 'kysely'

/**
 * Fewer index entries per webhook delivery: every event queues one delivery and marks it succeeded, and each
 * index of the table costs both statements. The due deliveries are indexed only while pending, so marking one
 * succeeded takes it out of that index instead of moving it within; the index of creation times, read only by the
 * hourly cleanup, gives way to the primary key, whose ids begin with their creation time. The pending index keeps
 * `status` as its first column: without it, SQLite's planner (no statistics) preferred the index of (endpoint,
 * record) and sorted the endpoint's every delivery on each turn (design-measurements.md, "Migrations").
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('webhook_deliveries_due').execute()
  await db.schema.dropIndex('webhook_deliveries_created').execute()
  await sql`create index webhook_deliveries_pending on webhook_deliveries (status, next_attempt_at) where status = 'pending'`.execute(
    db,
  )
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('webhook_deliveries_pending').execute()
  await db.schema
    .createIndex('webhook_deliveries_due')
    .on('webhook_deliveries')
    .columns(['status', 'next_attempt_at'])
    .execute()
  await db.schema.createIndex('webhook_deliveries_created').on('webhook_deliveries').column('created_at').execute()
}
