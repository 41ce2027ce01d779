import { createHash } from 'node:crypto'
import { Readable } from 'node:stream'
import type { Kysely } from 'kysely'
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
  new AppError('payload_too_large', `the file is larger than the ${maxBytes / (1024 * 1024)} MB evidence limit (EVIDENCE_MAX_MB)`, [{ field: 'file', message: 'too large' }])

/**
 * Streams content into a new blob, one committed chunk at a time, so neither memory nor a long-held
 * transaction grows with the file. The blob has no sha256 until the caller adopts it; if anything fails
 * (the client disconnects, the file is too large), its chunks are removed before the error goes on.
 */
export async function writeContent(db: Db, tenantId: string, source: AsyncIterable<Buffer>, maxBytes: number): Promise<StoredContent> {
  const blobId = newId('evb')
  await repo.insertBlob(db, { id: blobId, tenant_id: tenantId, sha256: null, size: 0, chunk_size: CHUNK_SIZE, chunks: 0, created_at: now() })
  try {
    const hash = createHash('sha256')
    // One chunk buffer for the whole upload, refilled after each insert has taken its bytes: the upload makes
    // no garbage of its own beyond what the socket delivers.
    const chunk = Buffer.allocUnsafe(CHUNK_SIZE)
    let filled = 0
    let size = 0
    let seq = 0
    for await (const data of source) {
      size += data.length
      if (size > maxBytes) throw tooLarge(maxBytes)
      hash.update(data)
      for (let offset = 0; offset < data.length;) {
        const copied = data.copy(chunk, filled, offset)
        filled += copied
        offset += copied
        if (filled === CHUNK_SIZE) {
          await repo.insertChunk(db, tenantId, blobId, seq++, chunk)
          filled = 0
        }
      }
    }
    if (filled > 0) await repo.insertChunk(db, tenantId, blobId, seq++, chunk.subarray(0, filled))
    await repo.updateBlob(db, tenantId, blobId, { size, chunks: seq })
    return { blobId, sha256: hash.digest('hex'), size }
  } catch (err) {
    await discardContent(db, tenantId, blobId)
    throw err
  }
}

export async function discardContent(db: Db, tenantId: string, blobId: string): Promise<void> {
  await repo.deleteBlob(db, tenantId, blobId).catch(() => undefined)
}

/**
 * Bytes read per query on download. PostgreSQL sends bytea as hex text: a piece this size arrives as a 64 KiB
 * string, which V8 keeps in the young generation and frees at once; whole chunks made 512 KiB strings that
 * wait for a full collection, and a 25 MB download raised the service's RSS by 35-40 MB instead of a few.
 */
const READ_PIECE = 32 * 1024

/** Bytes `start`..`end` (inclusive) of a blob, read a piece at a time as the client takes them. */
export function readContent(db: Db, tenantId: string, blob: { id: string; chunk_size: number }, start: number, end: number): Readable {
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
  new AppError('range_not_satisfiable', `the range is outside the content (${size} bytes)`, [{ field: 'Range', message: 'not satisfiable' }], { size })
