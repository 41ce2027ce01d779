import { type Kysely, sql } from 'kysely'
import type { EvidenceBlobRow, EvidenceRow, Tables } from '../../db/tables.js'
import { applyKeyset, type Keyset } from '../../shared/pagination.js'
import { containsText } from '../../shared/search.js'
import type { EvidenceListQuery } from './evidence.schemas.js'

type Db = Kysely<Tables>

export function findEvidence(db: Db, tenantId: string, id: string): Promise<EvidenceRow | undefined> {
  return db.selectFrom('evidence').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst()
}

export function findEvidenceMany(db: Db, tenantId: string, ids: string[]): Promise<EvidenceRow[]> {
  if (ids.length === 0) return Promise.resolve([])
  return db.selectFrom('evidence').selectAll().where('tenant_id', '=', tenantId).where('id', 'in', ids).execute()
}

/** `answerEvidenceIds`: evidence the use case's questionnaire answers name (they live in JSON, so the caller reads them). */
export function listEvidence(
  db: Db,
  tenantId: string,
  query: EvidenceListQuery,
  ks: Keyset,
  answerEvidenceIds: string[] = [],
): Promise<EvidenceRow[]> {
  let q = db.selectFrom('evidence').selectAll().where('tenant_id', '=', tenantId)
  if (query.kind !== undefined) q = q.where('kind', '=', query.kind)
  if (query.q !== undefined) q = q.where(containsText('search_key', query.q))
  const useCaseId = query.use_case_id
  if (useCaseId !== undefined) {
    q = q.where((eb) =>
      eb.or([
        eb(
          'id',
          'in',
          eb
            .selectFrom('use_case_control_evidence')
            .select('evidence_id')
            .where('tenant_id', '=', tenantId)
            .where('use_case_id', '=', useCaseId),
        ),
        ...(answerEvidenceIds.length > 0 ? [eb('id', 'in', answerEvidenceIds)] : []),
      ]),
    )
  }
  return applyKeyset(q, ks).execute()
}

export async function insertEvidence(db: Db, row: EvidenceRow): Promise<void> {
  await db.insertInto('evidence').values(row).execute()
}

export async function deleteEvidence(db: Db, tenantId: string, id: string): Promise<void> {
  await db.deleteFrom('evidence').where('tenant_id', '=', tenantId).where('id', '=', id).execute()
}

/** Where a piece of evidence is in use: control links (by use-case control id), and answers that name it. */
export async function evidenceReferences(
  db: Db,
  tenantId: string,
  id: string,
): Promise<{ controls: string[]; answers: string[] }> {
  const controls = await db
    .selectFrom('use_case_control_evidence')
    .select('use_case_control_id')
    .where('tenant_id', '=', tenantId)
    .where('evidence_id', '=', id)
    .execute()
  // Answers keep evidence ids in JSON; ids are unique random strings, so a substring match finds exactly the users.
  const pattern = `%"${id}"%`
  const answers: string[] = []
  for (const [table, column] of [
    ['use_case_questionnaires', 'use_case_id'],
    ['model_questionnaires', 'model_id'],
    ['vendor_questionnaires', 'vendor_id'],
  ] as const) {
    const rows = await db
      .selectFrom(table as 'use_case_questionnaires')
      .select([sql<string>`${sql.ref(column)}`.as('owner'), 'questionnaire_key'])
      .where('tenant_id', '=', tenantId)
      .where('answers', 'like', pattern)
      .execute()
    answers.push(...rows.map((r) => `${r.owner} ${r.questionnaire_key}`))
  }
  return { controls: controls.map((c) => c.use_case_control_id), answers }
}

// --- content ---

export function findBlob(db: Db, tenantId: string, id: string): Promise<EvidenceBlobRow | undefined> {
  return db
    .selectFrom('evidence_blobs')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst()
}

export function findBlobBySha(db: Db, tenantId: string, sha256: string): Promise<EvidenceBlobRow | undefined> {
  return db
    .selectFrom('evidence_blobs')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('sha256', '=', sha256)
    .executeTakeFirst()
}

export async function insertBlob(db: Db, row: EvidenceBlobRow): Promise<void> {
  await db.insertInto('evidence_blobs').values(row).execute()
}

/** Marks an upload's blob complete; false when it is gone (swept as abandoned after the upload timeout). */
export async function completeBlob(db: Db, tenantId: string, id: string, sha256: string): Promise<boolean> {
  const result = await db
    .updateTable('evidence_blobs')
    .set({ sha256 })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('sha256', 'is', null)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) === 1
}

/** Removes a blob and its chunks, and gives its bytes back to the tenant's usage; run it in a transaction. */
export async function deleteBlob(db: Db, tenantId: string, id: string): Promise<void> {
  const blob = await db
    .selectFrom('evidence_blobs')
    .select('size')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst()
  if (!blob) return
  await db.deleteFrom('evidence_chunks').where('tenant_id', '=', tenantId).where('blob_id', '=', id).execute()
  await db.deleteFrom('evidence_blobs').where('tenant_id', '=', tenantId).where('id', '=', id).execute()
  if (Number(blob.size) > 0)
    await db
      .updateTable('evidence_usage')
      .set((eb) => ({ bytes: eb('bytes', '-', Number(blob.size)) }))
      .where('tenant_id', '=', tenantId)
      .execute()
}

export async function blobInUse(db: Db, tenantId: string, blobId: string): Promise<boolean> {
  return (
    (await db
      .selectFrom('evidence')
      .select('id')
      .where('tenant_id', '=', tenantId)
      .where('blob_id', '=', blobId)
      .limit(1)
      .executeTakeFirst()) !== undefined
  )
}

/**
 * Stores a chunk and counts it in its blob, with the `reserved` bytes its transaction added to the tenant's usage.
 * False (and nothing stored) when the blob is no longer arriving: swept as abandoned after the upload timeout.
 */
export async function insertChunk(
  db: Db,
  tenantId: string,
  blobId: string,
  seq: number,
  data: Buffer,
  reserved: number,
): Promise<boolean> {
  const counted = await db
    .updateTable('evidence_blobs')
    .set((eb) => ({ size: eb('size', '+', reserved), chunks: eb('chunks', '+', 1) }))
    .where('tenant_id', '=', tenantId)
    .where('id', '=', blobId)
    .where('sha256', 'is', null)
    .executeTakeFirst()
  if (Number(counted.numUpdatedRows) !== 1) return false
  await db.insertInto('evidence_chunks').values({ tenant_id: tenantId, blob_id: blobId, seq, data }).execute()
  return true
}

/** Gives back bytes a blob reserved and did not store. */
export async function releaseUnused(db: Db, tenantId: string, blobId: string, bytes: number): Promise<void> {
  await db
    .updateTable('evidence_blobs')
    .set((eb) => ({ size: eb('size', '-', bytes) }))
    .where('tenant_id', '=', tenantId)
    .where('id', '=', blobId)
    .execute()
  await db
    .updateTable('evidence_usage')
    .set((eb) => ({ bytes: eb('bytes', '-', bytes) }))
    .where('tenant_id', '=', tenantId)
    .execute()
}

// --- usage (the storage quota) ---

/** Makes sure the tenant has its usage row, which every reservation updates. */
export async function ensureUsage(db: Db, tenantId: string): Promise<void> {
  await db
    .insertInto('evidence_usage')
    .values({ tenant_id: tenantId, bytes: 0 })
    .onConflict((oc) => oc.column('tenant_id').doNothing())
    .execute()
}

/**
 * Counts `bytes` more against the tenant's quota if they fit under it: one conditional update of one row, so two
 * uploads (on any instances) reserve one after the other and never pass the quota together.
 */
export async function reserveBytes(db: Db, tenantId: string, bytes: number, quotaBytes: number): Promise<boolean> {
  const result = await db
    .updateTable('evidence_usage')
    .set((eb) => ({ bytes: eb('bytes', '+', bytes) }))
    .where('tenant_id', '=', tenantId)
    .where((eb) => eb(eb('bytes', '+', bytes), '<=', quotaBytes))
    .executeTakeFirst()
  return Number(result.numUpdatedRows) === 1
}

export async function usage(db: Db, tenantId: string): Promise<{ bytes: number; files: number; uploading: number }> {
  const row = await db.selectFrom('evidence_usage').select('bytes').where('tenant_id', '=', tenantId).executeTakeFirst()
  const blobs = await db
    .selectFrom('evidence_blobs')
    .select((eb) => [eb.fn.count<number>('sha256').as('files'), eb.fn.countAll<number>().as('all')])
    .where('tenant_id', '=', tenantId)
    .executeTakeFirstOrThrow()
  return {
    bytes: Number(row?.bytes ?? 0),
    files: Number(blobs.files),
    uploading: Number(blobs.all) - Number(blobs.files),
  }
}

/** `length` bytes of a chunk from `offset` (substr counts from 1 on both databases, and works on bytes). */
export async function readChunkPart(
  db: Db,
  tenantId: string,
  blobId: string,
  seq: number,
  offset: number,
  length: number,
): Promise<Buffer | undefined> {
  const row = await db
    .selectFrom('evidence_chunks')
    .select(sql<Buffer>`substr(data, ${offset + 1}, ${length})`.as('data'))
    .where('tenant_id', '=', tenantId)
    .where('blob_id', '=', blobId)
    .where('seq', '=', seq)
    .executeTakeFirst()
  return row?.data
}

/** Blobs of every tenant whose upload began before `olderThan` and never completed (its process died mid-upload). */
export function abandonedBlobs(db: Db, olderThan: string, limit: number) {
  return db
    .selectFrom('evidence_blobs')
    .select(['id', 'tenant_id'])
    .where('sha256', 'is', null)
    .where('created_at', '<', olderThan)
    .orderBy('created_at')
    .limit(limit)
    .execute()
}
