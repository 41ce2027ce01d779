import { type Kysely, sql } from 'kysely'

/**
 * Each tenant's stored evidence bytes in one row, so an upload reserves room for each chunk with one conditional
 * update that holds across instances (the storage quota). A blob's `size` now counts its chunks as they arrive:
 * blobs still arriving (or left by a process that died) get theirs from their chunks, and the counts start from them.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('evidence_usage')
    .addColumn('tenant_id', 'varchar(63)', (c) => c.primaryKey().references('tenants.id'))
    .addColumn('bytes', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute()
  await sql`
    update evidence_blobs
    set size = (select coalesce(sum(length(c.data)), 0) from evidence_chunks c where c.blob_id = evidence_blobs.id),
        chunks = (select count(*) from evidence_chunks c where c.blob_id = evidence_blobs.id)
    where sha256 is null`.execute(db)
  await sql`insert into evidence_usage (tenant_id, bytes) select tenant_id, sum(size) from evidence_blobs group by tenant_id`.execute(
    db,
  )
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('evidence_usage').execute()
}
