import { createHash } from 'node:crypto'
import { createReadStream, createWriteStream } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import * as tar from 'tar-stream'
import { AppError } from '../../http/errors.js'
import { compileJsonValidator } from '../../http/plugins/validation.js'
import { RECORD_KINDS, RECORD_SCHEMAS, type RecordKind } from './records.schemas.js'

/** The bundle's media type. */
export const BUNDLE_TYPE = 'application/x-tar'
export const DOCUMENT_ENTRY = 'configuration.yaml'
/** The longest NDJSON line: a use case with all its answers fits many times over. */
export const MAX_LINE_BYTES = 1024 * 1024
/** Errors one 422 lists: enough to fix a batch, never an answer that grows with the archive. */
const MAX_ERRORS = 20

export interface BundleLimits {
  /** The archive's bytes (413 past them). */
  maxBytes: number
  /** Evidence files it may hold (422 past them). */
  maxFiles: number
  /** The configuration document's bytes. */
  maxDocumentBytes: number
}

/** One problem of a bundle: the entry, and for NDJSON the line, with what is wrong. */
export interface BundleError {
  field: string
  message: string
  file?: string
  line?: number
}

export const bundleErrors = (errors: BundleError[]) =>
  new AppError(
    'validation_failed',
    `the bundle has ${errors.length}${errors.length >= MAX_ERRORS ? '+' : ''} error${errors.length === 1 ? '' : 's'}: ${errors
      .slice(0, 5)
      .map((e) => `${e.field} ${e.message}`)
      .join('; ')}`,
    errors as unknown as { field: string; message: string }[],
  )

const one = (field: string, message: string, extra: Partial<BundleError> = {}) =>
  bundleErrors([{ field, message, ...extra }])

/** What an entry's path names: the document, a page of records of a kind, an evidence file by sha256, a folder. */
export type EntryName =
  | { type: 'document' }
  | { type: 'records'; kind: RecordKind }
  | { type: 'file'; sha256: string }
  | { type: 'folder' }

const RECORDS_PATH = new RegExp(`^records/(${RECORD_KINDS.join('|')})(?:\\.ndjson|/[A-Za-z0-9._-]{1,100}\\.ndjson)$`)
const FILE_PATH = /^files\/([0-9a-f]{64})$/
const FOLDERS = new Set(['records', 'files', ...RECORD_KINDS.map((k) => `records/${k}`)])

/** The meaning of an entry's path, or why it is refused (outside the archive, unknown). */
export function entryName(name: string, type: string): EntryName | string {
  if (name.includes('\0')) return 'contains a NUL byte'
  if (name.startsWith('/') || /^[A-Za-z]:/.test(name) || name.includes('\\')) return 'is an absolute path'
  const path = name.replace(/^\.\//, '').replace(/\/$/, '')
  if (path.split('/').some((segment) => segment === '..')) return 'leads outside the archive (..)'
  if (path.split('/').some((segment) => segment === '' || segment === '.')) return 'is not a plain path'
  if (type === 'directory') return FOLDERS.has(path) ? { type: 'folder' } : 'is an unknown folder'
  if (type !== 'file' && type !== 'contiguous-file') return `is a ${type}; a bundle holds plain files only`
  if (path === DOCUMENT_ENTRY) return { type: 'document' }
  const records = RECORDS_PATH.exec(path)
  if (records) return { type: 'records', kind: records[1] as RecordKind }
  const file = FILE_PATH.exec(path)
  if (file) return { type: 'file', sha256: file[1] }
  return `is not part of a bundle (configuration.yaml, records/<kind>/*.ndjson, files/<sha256>)`
}

/**
 * Writes the request body to a private temporary file, at most `maxBytes` (413 past them), so that the archive
 * can be read twice (checked, then applied) without being held in memory; its sha256 is taken on the way.
 */
export async function spool(body: Readable, maxBytes: number): Promise<Spooled> {
  const dir = await mkdtemp(join(tmpdir(), 'aigov-bundle-'))
  const path = join(dir, 'bundle.tar')
  const hash = createHash('sha256')
  let bytes = 0
  try {
    await pipeline(
      body,
      async function* (source: AsyncIterable<Buffer>) {
        for await (const chunk of source) {
          bytes += chunk.length
          if (bytes > maxBytes) {
            throw new AppError(
              'payload_too_large',
              `the bundle is larger than ${maxBytes / (1024 * 1024)} MB (CONFIGURATION_BUNDLE_MAX_MB)`,
              [{ field: '(body)', message: 'too large' }],
              { limit_name: 'configuration_bundle', limit_bytes: maxBytes },
            )
          }
          hash.update(chunk)
          yield chunk
        }
      },
      createWriteStream(path, { mode: 0o600 }),
    )
  } catch (err) {
    await rm(dir, { recursive: true, force: true })
    throw err
  }
  return { path, bytes, sha256: hash.digest('hex'), remove: () => rm(dir, { recursive: true, force: true }) }
}

/** A bundle file already on disk, read as a spooled request (its sha256 taken), and left where it is. */
export async function onDisk(path: string): Promise<Spooled> {
  const hash = createHash('sha256')
  let bytes = 0
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    bytes += chunk.length
    hash.update(chunk)
  }
  return { path, bytes, sha256: hash.digest('hex'), remove: async () => undefined }
}

export interface Spooled {
  path: string
  bytes: number
  /** The archive's sha256 (hex): what its plan pins and what an Idempotency-Key fingerprint holds of it. */
  sha256: string
  remove(): Promise<void>
}

export interface ArchiveEntry {
  name: string
  meaning: EntryName
  stream: AsyncIterable<Buffer>
}

/** Each entry of the archive at `path`, in order; an entry not read is skipped. A malformed archive is a 422. */
export async function* readEntries(path: string): AsyncGenerator<ArchiveEntry> {
  const extract = tar.extract()
  const source = createReadStream(path)
  source.on('error', (err) => extract.destroy(err))
  source.pipe(extract)
  try {
    for await (const entry of extract) {
      const meaning = entryName(entry.header.name, entry.header.type ?? 'file')
      if (typeof meaning === 'string') {
        entry.resume()
        throw one(entry.header.name, meaning)
      }
      yield { name: entry.header.name, meaning, stream: entryBytes(entry as unknown as AsyncIterable<Buffer>) }
      entry.resume()
    }
  } catch (err) {
    throw notTar(err)
  } finally {
    source.destroy()
    extract.destroy()
  }
}

const notTar = (err: unknown) =>
  err instanceof AppError ? err : one('(body)', `is not a tar archive: ${(err as Error).message}`)

/** An entry's bytes; a broken archive (cut short, say) fails its reader with a 422, as it fails the listing. */
async function* entryBytes(entry: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  try {
    for await (const chunk of entry) yield chunk
  } catch (err) {
    throw notTar(err)
  }
}

/** The lines of an NDJSON entry, numbered from 1, each at most MAX_LINE_BYTES; blank lines are skipped. */
export async function* ndjsonLines(name: string, stream: AsyncIterable<Buffer>): AsyncGenerator<[number, string]> {
  let pending: Buffer[] = []
  let pendingBytes = 0
  let line = 0
  const flush = function* (last: Buffer) {
    line++
    const text = Buffer.concat([...pending, last]).toString('utf8')
    pending = []
    pendingBytes = 0
    if (text.trim() !== '') yield [line, text] as [number, string]
  }
  for await (const chunk of stream) {
    let start = 0
    for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, start)) {
      if (pendingBytes + at - start > MAX_LINE_BYTES) throw lineTooLong(name, line + 1)
      yield* flush(chunk.subarray(start, at))
      start = at + 1
    }
    if (start < chunk.length) {
      pendingBytes += chunk.length - start
      if (pendingBytes > MAX_LINE_BYTES) throw lineTooLong(name, line + 1)
      pending.push(chunk.subarray(start))
    }
  }
  if (pendingBytes > 0) yield* flush(Buffer.alloc(0))
}

const lineTooLong = (file: string, line: number) =>
  one(`${file}:${line}`, `is longer than ${MAX_LINE_BYTES} bytes`, { file, line })

const validators = Object.fromEntries(
  RECORD_KINDS.map((kind) => [kind, compileJsonValidator(RECORD_SCHEMAS[kind], `${kind} record`)]),
) as Record<RecordKind, (value: unknown) => unknown>

/** A line parsed and checked against its kind's schema, or the errors naming the file, the line and the field. */
export function checkLine(kind: RecordKind, file: string, line: number, text: string): unknown | BundleError[] {
  const at = `${file}:${line}`
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (err) {
    return [{ field: at, message: `is not JSON: ${(err as Error).message}`, file, line }]
  }
  try {
    return validators[kind](value)
  } catch (err) {
    if (!(err instanceof AppError)) throw err
    return (err.errors ?? [{ field: '', message: err.message }]).map((e) => ({
      field: `${at} /${e.field.replace(/^\//, '').replace(/^\(body\)$/, '')}`,
      message: e.message,
      file,
      line,
    }))
  }
}

export interface CheckedBundle {
  document: string
  files: number
  records: Record<RecordKind, number>
}

/**
 * Reads the whole archive once and checks everything that needs no database: every path, every file's sha256
 * against its name, the number of files, every NDJSON line against its schema. `onFile` receives each file's bytes
 * as they come (to store them) and must consume the stream; it is told the verified sha256 through `verify`.
 * Throws 422 naming the problems; answers the document's text and the counts.
 */
export async function checkBundle(
  path: string,
  limits: BundleLimits,
  onFile?: (sha256: string, stream: AsyncIterable<Buffer>) => Promise<void>,
): Promise<CheckedBundle> {
  const errors: BundleError[] = []
  const records = Object.fromEntries(RECORD_KINDS.map((k) => [k, 0])) as Record<RecordKind, number>
  let document: string | undefined
  let files = 0
  const seenFiles = new Set<string>()
  for await (const entry of readEntries(path)) {
    const { meaning, name } = entry
    if (meaning.type === 'document') {
      if (document !== undefined) throw one(name, 'appears twice')
      document = await readText(entry.stream, limits.maxDocumentBytes, name)
    } else if (meaning.type === 'file') {
      files++
      if (files > limits.maxFiles) {
        throw one(
          name,
          `is one file more than the ${limits.maxFiles} a bundle may hold (CONFIGURATION_BUNDLE_MAX_FILES)`,
        )
      }
      if (seenFiles.has(meaning.sha256)) throw one(name, 'appears twice')
      seenFiles.add(meaning.sha256)
      const hash = createHash('sha256')
      const hashed = (async function* () {
        for await (const chunk of entry.stream) {
          hash.update(chunk)
          yield chunk as Buffer
        }
      })()
      if (onFile) await onFile(meaning.sha256, hashed)
      else for await (const _ of hashed);
      const actual = hash.digest('hex')
      if (actual !== meaning.sha256) throw one(name, `has sha256 ${actual}, not the one its name says`)
    } else if (meaning.type === 'records') {
      for await (const [line, text] of ndjsonLines(name, entry.stream)) {
        const checked = checkLine(meaning.kind, name, line, text)
        if (Array.isArray(checked) && isErrors(checked)) {
          errors.push(...checked)
          if (errors.length >= MAX_ERRORS) throw bundleErrors(errors.slice(0, MAX_ERRORS))
        } else records[meaning.kind]++
      }
    }
  }
  if (errors.length > 0) throw bundleErrors(errors)
  if (document === undefined) throw one(DOCUMENT_ENTRY, 'is missing: a bundle starts with the configuration document')
  return { document, files, records }
}

const isErrors = (value: unknown[]): value is BundleError[] =>
  value.length > 0 && typeof value[0] === 'object' && value[0] !== null && 'field' in value[0] && 'message' in value[0]

/** The records of one kind, checked, in archive order, with where each came from. */
export async function* recordsOf<T>(path: string, kind: RecordKind): AsyncGenerator<{ record: T; at: string }> {
  for await (const entry of readEntries(path)) {
    if (entry.meaning.type !== 'records' || entry.meaning.kind !== kind) continue
    for await (const [line, text] of ndjsonLines(entry.name, entry.stream)) {
      const checked = checkLine(kind, entry.name, line, text)
      if (Array.isArray(checked) && isErrors(checked)) throw bundleErrors(checked)
      yield { record: checked as T, at: `${entry.name}:${line}` }
    }
  }
}

/** Every record of the archive, of every kind, in archive order, in one pass. */
export async function* allRecords<T>(path: string): AsyncGenerator<{ kind: RecordKind; record: T; at: string }> {
  for await (const entry of readEntries(path)) {
    if (entry.meaning.type !== 'records') continue
    const { kind } = entry.meaning
    for await (const [line, text] of ndjsonLines(entry.name, entry.stream)) {
      const checked = checkLine(kind, entry.name, line, text)
      if (Array.isArray(checked) && isErrors(checked)) throw bundleErrors(checked)
      yield { kind, record: checked as T, at: `${entry.name}:${line}` }
    }
  }
}

/** The records of one kind as recordsOf reads them, `size` at a time (to look them up in the tenant together). */
export async function* recordBatches<T>(
  path: string,
  kind: RecordKind,
  size: number,
): AsyncGenerator<{ record: T; at: string }[]> {
  let batch: { record: T; at: string }[] = []
  for await (const item of recordsOf<T>(path, kind)) {
    batch.push(item)
    if (batch.length >= size) {
      yield batch
      batch = []
    }
  }
  if (batch.length > 0) yield batch
}

async function readText(stream: AsyncIterable<Buffer>, maxBytes: number, name: string): Promise<string> {
  const parts: Buffer[] = []
  let bytes = 0
  for await (const chunk of stream) {
    bytes += chunk.length
    if (bytes > maxBytes) {
      throw new AppError('payload_too_large', `${name} is larger than ${maxBytes / (1024 * 1024)} MB`, [
        { field: name, message: 'too large' },
      ])
    }
    parts.push(chunk)
  }
  return Buffer.concat(parts).toString('utf8')
}
