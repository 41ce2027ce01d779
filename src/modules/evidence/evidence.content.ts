import { createHash } from 'node:crypto'
import { Readable } from 'node:stream'
import type { Kysely } from 'kysely'
import type { Database } from '../../db/create-db.js'
import type { Tables } from '../../db/tables.js'
import { AppError } from '../../http/errors.js'
import { newId, now } from '../../shared/ids.js'
import * as repo from './evidence.repo.js'

type Db = Kysely<Tables>

/** Bytes per stored chunk: small enough that neither database holds much of a file at once. */
export const CHUNK_SIZE = 256 * 1024

export interface StoredContent {
  blobId: string
  sha256: string
  size: number
}

export const tooLarge = (maxBytes: number) =>
  new AppError(
    'payload_too_large',
    `the file is larger than the ${maxBytes / (1024 * 1024)} MB evidence limit (EVIDENCE_MAX_MB)`,
    [{ field: 'file', message: 'too large' }],
  )

const MB = 1024 * 1024
const inMb = (bytes: number) => `${Math.round((bytes / MB) * 10) / 10} MB`

/** 413: the tenant's stored evidence would pass its quota; says how much is used and left. */
export function quotaExceeded(quotaBytes: number, usedBytes: number): AppError {
  const remaining = Math.max(0, quotaBytes - usedBytes)
  return new AppError(
    'quota_exceeded',
    `this tenant's evidence would pass its storage quota of ${inMb(quotaBytes)} (EVIDENCE_TENANT_QUOTA_MB): ${inMb(usedBytes)} used, ${inMb(remaining)} left; delete evidence no longer needed`,
    [{ field: 'file', message: 'over the tenant storage quota' }],
    { limit_name: 'evidence_tenant_quota', limit_bytes: quotaBytes, used_bytes: usedBytes, remaining_bytes: remaining },
  )
}

/** 429: the key's upload budget for this minute would be passed; says how much is left and when it renews. */
export function budgetExceeded(limitBytes: number, usedBytes: number, resetInMs: number): AppError {
  const retryAfter = Math.max(1, Math.ceil(resetInMs / 1000))
  const remaining = Math.max(0, limitBytes - usedBytes)
  return new AppError(
    'rate_limited',
    `this API key's evidence uploads would pass ${inMb(limitBytes)} a minute (EVIDENCE_UPLOAD_MB_PER_MINUTE): ${inMb(remaining)} left; retry in ${retryAfter} s`,
    undefined,
    {
      retry_after: retryAfter,
      reset_time: new Date(Date.now() + resetInMs).toISOString(),
      limit_name: 'evidence_upload_budget',
      limit_bytes: limitBytes,
      used_bytes: usedBytes,
      remaining_bytes: remaining,
    },
  )
}

export const uploadTimedOut = (timeoutMs: number) =>
  new AppError(
    'request_timeout',
    `the file did not arrive within ${timeoutMs / 1000} s (EVIDENCE_UPLOAD_TIMEOUT_S); nothing was stored`,
    [{ field: 'file', message: 'upload timed out' }],
  )

/** What bounds one upload: the file, the tenant's storage, the key's bytes per minute, the time it may take. */
export interface UploadLimits {
  tenantId: string
  maxBytes: number
  quotaBytes: number
  timeoutMs: number
  /** Bytes the file has at least (from Content-Length): reserved under the quota before any is read. */
  atLeastBytes: number
  /** Counts a chunk's bytes against the uploading key's budget; throws (429) when they do not fit. */
  charge(bytes: number): Promise<void>
}

/**
 * Streams content into a new blob, one committed chunk at a time, so neither memory nor a long-held transaction
 * grows with the file. The blob's `size` is what it counts against the tenant's quota: what the Content-Length
 * promised, reserved up front (of two uploads that cannot both fit, one is refused at once), then each chunk past
 * it, reserved in the chunk's own transaction. Every reservation is one conditional update of the tenant's usage
 * row, so uploads on any instances never pass the quota together, and an upload stops at the first chunk past the
 * quota or the key's budget. The blob has no sha256 until the caller adopts it; if anything fails (the client
 * disconnects, a limit is passed, time is up), its chunks and their bytes are given back before the error goes on.
 */
export async function writeContent(
  database: Database,
  limits: UploadLimits,
  source: Readable & AsyncIterable<Buffer>,
): Promise<StoredContent> {
  const { db } = database
  const { tenantId, maxBytes, quotaBytes, timeoutMs } = limits
  const blobId = newId('evb')
  const deadline = Date.now() + timeoutMs
  const upFront = Math.min(Math.max(0, limits.atLeastBytes), maxBytes)
  await repo.ensureUsage(db, tenantId)
  await database.groupedTransaction(async (tx) => {
    await reserve(tx, upFront)
    await repo.insertBlob(tx, {
      id: blobId,
      tenant_id: tenantId,
      sha256: null,
      size: upFront,
      chunk_size: CHUNK_SIZE,
      chunks: 0,
      created_at: now(),
    })
  })
  let counted = upFront
  // A stalled sender delivers nothing to notice the time by: the timer ends the stream itself.
  const timer = setTimeout(() => source.destroy(uploadTimedOut(timeoutMs)), timeoutMs)
  try {
    const hash = createHash('sha256')
    // One chunk buffer for the whole upload, refilled after each insert has taken its bytes: the upload makes
    // no garbage of its own beyond what the socket delivers.
    const chunk = Buffer.allocUnsafe(CHUNK_SIZE)
    let filled = 0
    let size = 0
    let storedBytes = 0
    let seq = 0
    const store = async (data: Buffer) => {
      if (Date.now() > deadline) throw uploadTimedOut(timeoutMs)
      await limits.charge(data.length)
      const more = Math.max(0, storedBytes + data.length - counted)
      await database.groupedTransaction(async (tx) => {
        await reserve(tx, more)
        if (!(await repo.insertChunk(tx, tenantId, blobId, seq, data, more))) throw uploadTimedOut(timeoutMs)
      })
      counted += more
      storedBytes += data.length
      seq++
    }
    for await (const data of source) {
      size += data.length
      if (size > maxBytes) throw tooLarge(maxBytes)
      hash.update(data)
      for (let offset = 0; offset < data.length; ) {
        const copied = data.copy(chunk, filled, offset)
        filled += copied
        offset += copied
        if (filled === CHUNK_SIZE) {
          await store(chunk)
          filled = 0
        }
      }
    }
    if (filled > 0) await store(chunk.subarray(0, filled))
    if (Date.now() > deadline) throw uploadTimedOut(timeoutMs)
    // A Content-Length that promised more than the file (its multipart framing): the rest goes back.
    if (counted > size)
      await database.groupedTransaction((tx) => repo.releaseUnused(tx, tenantId, blobId, counted - size))
    return { blobId, sha256: hash.digest('hex'), size }
  } catch (err) {
    await discardContent(database, tenantId, blobId)
    throw err
  } finally {
    clearTimeout(timer)
  }

  async function reserve(tx: Db, bytes: number): Promise<void> {
    if (bytes === 0 || (await repo.reserveBytes(tx, tenantId, bytes, quotaBytes))) return
    throw quotaExceeded(quotaBytes, (await repo.usage(tx, tenantId)).bytes)
  }
}

export async function discardContent(database: Database, tenantId: string, blobId: string): Promise<void> {
  await database.groupedTransaction((tx) => repo.deleteBlob(tx, tenantId, blobId)).catch(() => undefined)
}

/**
 * Removes a blob whose upload began before `olderThan` and never completed, checked again in the transaction that
 * removes it: an upload adopted meanwhile keeps its content. True when it was removed.
 */
export async function sweepBlob(
  database: Database,
  tenantId: string,
  blobId: string,
  olderThan: string,
): Promise<boolean> {
  return database.groupedTransaction(async (tx) => {
    let q = tx
      .selectFrom('evidence_blobs')
      .select('id')
      .where('tenant_id', '=', tenantId)
      .where('id', '=', blobId)
      .where('sha256', 'is', null)
      .where('created_at', '<', olderThan)
    if (database.dialect === 'postgres') q = q.forUpdate()
    if (!(await q.executeTakeFirst())) return false
    await repo.deleteBlob(tx, tenantId, blobId)
    return true
  })
}

/**
 * Bytes read per query on download. PostgreSQL sends bytea as hex text: a piece this size arrives as a 64 KiB
 * string, which V8 keeps in the young generation and frees at once; whole chunks made 512 KiB strings that
 * wait for a full collection, and a 25 MB download raised the service's RSS by 35-40 MB instead of a few.
 */
const READ_PIECE = 32 * 1024

/** Bytes `start`..`end` (inclusive) of a blob, read a piece at a time as the client takes them. */
export function readContent(
  db: Db,
  tenantId: string,
  blob: { id: string; chunk_size: number },
  start: number,
  end: number,
): Readable {
  async function* chunks() {
    for (let at = start; at <= end; ) {
      const seq = Math.floor(at / blob.chunk_size)
      const offset = at - seq * blob.chunk_size
      const length = Math.min(READ_PIECE, blob.chunk_size - offset, end - at + 1)
      const data = await repo.readChunkPart(db, tenantId, blob.id, seq, offset, length)
      if (!data || data.length === 0) throw new Error(`evidence content ${blob.id} lost chunk ${seq}`)
      yield data
      at += data.length
    }
  }
  return Readable.from(chunks(), { objectMode: false, highWaterMark: 1 })
}

/** RFC 9110 single byte range: `bytes=a-b`, `bytes=a-`, `bytes=-n`. Null when absent or not one plain range (serve it all). */
export function parseRange(header: string | undefined, size: number): { start: number; end: number } | null {
  if (header === undefined) return null
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim())
  if (!match || (match[1] === '' && match[2] === '')) return null
  let start: number
  let end: number
  if (match[1] === '') {
    const suffix = Number(match[2])
    if (suffix === 0) throw unsatisfiable(size)
    start = Math.max(0, size - suffix)
    end = size - 1
  } else {
    start = Number(match[1])
    end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1)
    if (match[2] !== '' && Number(match[2]) < start) return null
  }
  if (start >= size) throw unsatisfiable(size)
  return { start, end }
}

const unsatisfiable = (size: number) =>
  new AppError(
    'range_not_satisfiable',
    `the range is outside the content (${size} bytes)`,
    [{ field: 'Range', message: 'not satisfiable' }],
    { size },
  )
