import { Readable } from 'node:stream'
import { isUniqueViolation } from '../../db/create-db.js'
import type { EvidenceRow } from '../../db/tables.js'
import { AppError, invalid, notFound } from '../../http/errors.js'
import { malformedText } from '../../http/plugins/validation.js'
import { HTTP_URL_MESSAGE, isHttpUrl } from '../../shared/urls.js'
import type { Ctx } from '../../shared/context.js'
import type { Deps } from '../../shared/deps.js'
import { newId, now } from '../../shared/ids.js'
import { createdChanges, runMutation, type Tx } from '../../shared/mutation.js'
import { derive, ID, stored, TIME } from '../../shared/fields.js'
import { keyset, type Page, toPage } from '../../shared/pagination.js'
import {
  budgetExceeded,
  discardContent,
  parseRange,
  quotaExceeded,
  readContent,
  type StoredContent,
  sweepBlob,
  tooLarge,
  uploadTimedOut,
  writeContent,
} from './evidence.content.js'
import * as repo from './evidence.repo.js'
import type { Evidence, EvidenceLinkCreate, EvidenceListQuery, EvidenceUsage } from './evidence.schemas.js'
import { UploadBudget } from './upload-budget.js'
// What other families read of this one's records, inside their own transactions: through here, not the repository.
export { findEvidence, findEvidenceMany } from './evidence.repo.js'

export type EvidenceService = ReturnType<typeof createEvidenceService>

// Evidence is written by its link, upload and import operations (not a body's columns) and never changed.
const fields = derive<EvidenceRow, Evidence, object, object>({
  id: ID,
  kind: stored({ audited: true }),
  title: stored({ audited: true }),
  url: stored({ audited: true }),
  file_name: stored(),
  content_type: stored(),
  // A bigint column: PostgreSQL returns it as a string.
  size: (key) => ({
    read: (row) => (row[key] === null ? null : Number(row[key])),
    audited: true,
    listed: false,
  }),
  sha256: stored({ audited: true }),
  content_path: () => ({
    read: (row) => (row.kind === 'file' ? `/api/v1/integration/evidence/${row.id}/content` : null),
    audited: false,
    listed: false,
  }),
  created_by: stored(),
  created_at: TIME,
  updated_at: TIME,
})

/** The parts of a multipart body, as @fastify/multipart yields them. */
export type UploadPart =
  | { type: 'file'; fieldname: string; filename: string; mimetype: string; file: Readable & AsyncIterable<Buffer> }
  | { type: 'field'; fieldname: string; value: unknown }

export interface EvidenceDownload {
  evidence: Evidence
  status: 200 | 206
  start: number
  end: number
  size: number
  body: Readable
}

/**
 * What a multipart body may carry besides the file's bytes (boundaries, part headers, a title): a Content-Length
 * beyond what is left by more than this cannot fit, and is refused before a byte is read.
 */
const MULTIPART_FRAMING_BYTES = 128 * 1024
/** The bytes a multipart body of `declaredBytes` (its Content-Length) carries in its file at least. */
const fileAtLeast = (declaredBytes: number | undefined) => Math.max(0, (declaredBytes ?? 0) - MULTIPART_FRAMING_BYTES)
/** Abandoned blobs removed per sweep query; a sweep goes on until none is left. */
const SWEEP_BATCH = 100
/** type/subtype, both RFC 9110 tokens: anything else could not be sent back as the download's Content-Type. */
const MEDIA_TYPE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+\/[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

/** The download's Content-Type: the stored one, unless it is no media type (stored before uploads were checked). */
export function servedContentType(stored: string | null): string {
  return stored !== null && MEDIA_TYPE.test(stored) ? stored : 'application/octet-stream'
}

export function createEvidenceService(deps: Pick<Deps, 'database' | 'config' | 'redis' | 'log'>) {
  const { database, config } = deps
  const { db } = database
  const maxBytes = config.evidenceMaxBytes
  const quotaBytes = config.evidenceTenantQuotaBytes
  const budget = new UploadBudget(config.evidenceUploadBytesPerMinute, deps.redis, deps.log)
  const budgetKey = (ctx: Ctx) => `${ctx.tenantId}:${ctx.actor.id}`

  /** Refuses at once an upload whose declared length cannot fit in what the tenant and the key have left. */
  async function refuseEarly(ctx: Ctx, declaredBytes: number | undefined): Promise<void> {
    const atLeast = fileAtLeast(declaredBytes)
    if (atLeast === 0) return
    if (atLeast > maxBytes) throw tooLarge(maxBytes)
    const used = await repo.usage(db, ctx.tenantId)
    if (used.bytes + atLeast > quotaBytes) throw quotaExceeded(quotaBytes, used.bytes)
    const spent = await budget.read(budgetKey(ctx))
    if (spent.used + atLeast > budget.limitBytes) throw budgetExceeded(budget.limitBytes, spent.used, spent.resetInMs)
  }

  async function load(tx: Tx, ctx: Ctx, id: string): Promise<EvidenceRow> {
    const row = await repo.findEvidence(tx, ctx.tenantId, id)
    if (!row) throw notFound('evidence', id)
    return row
  }

  const created = (row: EvidenceRow, metadata: Record<string, unknown> | null = null) => ({
    result: toEvidence(row),
    audit: {
      action: 'evidence.created',
      resourceType: 'evidence',
      resourceId: row.id,
      resourceName: row.title,
      changes: createdChanges(toEvidence(row), fields.audited),
      metadata,
    },
  })

  /** The evidence record of a file whose content is stored as `blobId`. */
  const fileRow = (
    ctx: Ctx,
    file: { fileName: string; contentType: string; title: string | null },
    content: { size: number; sha256: string; blobId: string },
  ): EvidenceRow => {
    const at = now()
    const title = file.title ?? file.fileName
    return {
      id: newId('ev'),
      tenant_id: ctx.tenantId,
      kind: 'file',
      title,
      search_key: searchKey(title, file.fileName),
      url: null,
      file_name: file.fileName,
      content_type: file.contentType,
      size: content.size,
      sha256: content.sha256,
      blob_id: content.blobId,
      created_by: ctx.actor.id,
      created_at: at,
      updated_at: at,
    }
  }

  /** Registers uploaded content: the tenant's existing blob with the same sha256 if there is one, else this one. */
  async function adopt(
    ctx: Ctx,
    stored: StoredContent,
    file: { fileName: string; contentType: string; title: string | null },
  ): Promise<Evidence> {
    return runMutation(database, ctx, async (tx) => {
      const existing = await repo.findBlobBySha(tx, ctx.tenantId, stored.sha256)
      let blobId = stored.blobId
      if (existing) {
        // The tenant stores this content already: it counts once, so the copy and its bytes go.
        await repo.deleteBlob(tx, ctx.tenantId, stored.blobId)
        blobId = existing.id
      } else if (!(await repo.completeBlob(tx, ctx.tenantId, stored.blobId, stored.sha256))) {
        throw uploadTimedOut(config.evidenceUploadTimeoutMs)
      }
      const row = fileRow(ctx, file, { size: stored.size, sha256: stored.sha256, blobId })
      await repo.insertEvidence(tx, row)
      return created(row, { deduplicated: existing !== undefined })
    })
  }

  return {
    async list(ctx: Ctx, query: EvidenceListQuery): Promise<Page<Evidence>> {
      const ks = keyset(query)
      const fromAnswers = query.use_case_id === undefined ? [] : await answerEvidenceIds(ctx, query.use_case_id)
      return toPage(await repo.listEvidence(db, ctx.tenantId, query, ks, fromAnswers), ks, toEvidence)
    },

    async get(ctx: Ctx, id: string): Promise<Evidence> {
      return toEvidence(await load(db, ctx, id))
    },

    async createLink(ctx: Ctx, input: EvidenceLinkCreate): Promise<Evidence> {
      const url = checkUrl(input.url)
      const title = input.title.trim()
      return runMutation(database, ctx, async (tx) => {
        const at = now()
        const row: EvidenceRow = {
          id: newId('ev'),
          tenant_id: ctx.tenantId,
          kind: 'link',
          title,
          search_key: searchKey(title, url),
          url,
          file_name: null,
          content_type: null,
          size: null,
          sha256: null,
          blob_id: null,
          created_by: ctx.actor.id,
          created_at: at,
          updated_at: at,
        }
        await repo.insertEvidence(tx, row)
        return created(row)
      })
    },

    /**
     * Streams the one `file` part into chunked storage as it arrives; `title` may come before or after it.
     * Whatever goes wrong (a disconnect, a malformed body, a file over the limit), the chunks written so far go.
     */
    async upload(ctx: Ctx, parts: AsyncIterable<UploadPart>, declaredBytes?: number): Promise<Evidence> {
      let stored: StoredContent | undefined
      try {
        await refuseEarly(ctx, declaredBytes)
        let file: { fileName: string; contentType: string } | undefined
        let title: string | null = null
        for await (const part of parts) {
          if (part.type === 'file') {
            if (part.fieldname !== 'file' || stored) {
              part.file.resume()
              throw invalid(
                part.fieldname,
                part.fieldname === 'file'
                  ? 'send one file per upload'
                  : 'unknown field; send the file in the field "file"',
              )
            }
            file = fileMeta(part)
            stored = await writeContent(
              database,
              {
                tenantId: ctx.tenantId,
                maxBytes,
                quotaBytes,
                timeoutMs: config.evidenceUploadTimeoutMs,
                atLeastBytes: fileAtLeast(declaredBytes),
                charge: async (bytes) => {
                  const taken = await budget.take(budgetKey(ctx), bytes)
                  if (!taken.ok) throw budgetExceeded(budget.limitBytes, taken.used, taken.resetInMs)
                },
              },
              part.file,
            )
          } else if (part.fieldname === 'title') {
            // A multipart field escapes the body check every JSON body passes (installTextChecks): check it here.
            const malformed = malformedText(part.value, 'title')
            if (malformed.length > 0) throw invalid('title', malformed[0].message)
            title = typeof part.value === 'string' && part.value.trim() !== '' ? part.value.trim() : null
            if (title !== null && title.length > 500) throw invalid('title', 'must be at most 500 characters')
          } else {
            throw invalid(part.fieldname, 'unknown field')
          }
        }
        if (!stored || !file) throw invalid('file', 'is required: send the file as the multipart field "file"')
        const content = stored
        try {
          return await adopt(ctx, content, { ...file, title })
        } catch (err) {
          // Two uploads of the same new content raced to register it: the other one won, so use its blob.
          if (!isUniqueViolation(err)) throw err
          return await adopt(ctx, content, { ...file, title })
        } finally {
          stored = undefined
        }
      } catch (err) {
        if (stored) await discardContent(database, ctx.tenantId, stored.blobId)
        throw multipartError(err, maxBytes)
      }
    },

    /** The tenant's stored evidence against its quota, and the calling key's upload budget this minute. */
    async usage(ctx: Ctx): Promise<EvidenceUsage> {
      const used = await repo.usage(db, ctx.tenantId)
      const spent = await budget.read(budgetKey(ctx))
      return {
        used_bytes: used.bytes,
        quota_bytes: quotaBytes,
        remaining_bytes: Math.max(0, quotaBytes - used.bytes),
        files: used.files,
        uploads_in_progress: used.uploading,
        upload_budget: {
          limit_bytes: budget.limitBytes,
          used_bytes: spent.used,
          remaining_bytes: Math.max(0, budget.limitBytes - spent.used),
          reset_time: new Date(Date.now() + spent.resetInMs).toISOString(),
        },
        max_file_bytes: maxBytes,
      }
    },

    /**
     * Removes, for every tenant, the content of uploads that never completed (their process died, or their client
     * went away unnoticed): only those begun over twice the upload timeout ago, so none still arriving on another
     * instance goes. Answers how many it removed.
     */
    async sweepAbandoned(): Promise<number> {
      const cutoff = new Date(Date.now() - 2 * config.evidenceUploadTimeoutMs).toISOString()
      let removed = 0
      for (;;) {
        const rows = await repo.abandonedBlobs(db, cutoff, SWEEP_BATCH)
        for (const row of rows) if (await sweepBlob(database, row.tenant_id, row.id, cutoff)) removed++
        if (rows.length < SWEEP_BATCH) return removed
      }
    },

    async remove(ctx: Ctx, id: string): Promise<void> {
      await runMutation(database, ctx, async (tx) => {
        const row = await load(tx, ctx, id)
        const refs = await repo.evidenceReferences(tx, ctx.tenantId, id)
        if (refs.controls.length > 0 || refs.answers.length > 0) {
          const uses = [
            ...(refs.controls.length > 0 ? [`use-case controls ${refs.controls.join(', ')}`] : []),
            ...(refs.answers.length > 0 ? [`questionnaire answers of ${refs.answers.join(', ')}`] : []),
          ]
          throw new AppError(
            'conflict',
            `evidence ${id} is in use by ${uses.join(' and ')}; unlink it first`,
            undefined,
            { references: refs },
          )
        }
        await repo.deleteEvidence(tx, ctx.tenantId, id)
        if (row.blob_id && !(await repo.blobInUse(tx, ctx.tenantId, row.blob_id)))
          await repo.deleteBlob(tx, ctx.tenantId, row.blob_id)
        return {
          result: undefined,
          audit: {
            action: 'evidence.deleted',
            resourceType: 'evidence',
            resourceId: id,
            resourceName: row.title,
            metadata: { kind: row.kind, sha256: row.sha256 },
          },
        }
      })
    },

    /** The content, or the one byte range asked for; links have none (404). */
    async download(ctx: Ctx, id: string, range: string | undefined): Promise<EvidenceDownload> {
      const row = await load(db, ctx, id)
      const blob = row.blob_id ? await repo.findBlob(db, ctx.tenantId, row.blob_id) : undefined
      if (!blob) throw notFound('content of evidence', `${id} (a link has no content)`)
      const size = Number(blob.size)
      const part = size === 0 ? null : parseRange(range, size)
      const start = part?.start ?? 0
      const end = part?.end ?? size - 1
      return {
        evidence: toEvidence(row),
        status: part ? 206 : 200,
        start,
        end,
        size,
        body: readContent(db, ctx.tenantId, blob, start, Math.max(end, -1)),
      }
    },

    /**
     * Stores a file a configuration bundle brings, through the chunked storage uploads use (the tenant's quota and
     * the file limit hold; the key's per-minute budget does not, a bundle being bounded by its own limit). The blob
     * stays unadopted until `importFile` names it; the caller discards it otherwise.
     */
    async storeImported(ctx: Ctx, source: AsyncIterable<Buffer>): Promise<StoredContent> {
      return writeContent(
        database,
        {
          tenantId: ctx.tenantId,
          maxBytes,
          quotaBytes,
          timeoutMs: config.evidenceUploadTimeoutMs,
          atLeastBytes: 0,
          charge: async () => undefined,
        },
        Readable.from(source) as Readable & AsyncIterable<Buffer>,
      )
    },

    discardImported: (ctx: Ctx, blobId: string) => discardContent(database, ctx.tenantId, blobId),

    /** Evidence for content a bundle brought (its stored blob) or the tenant already holds (by sha256). */
    async importFile(
      _tx: Tx,
      ctx: Ctx,
      file: {
        sha256: string
        blobId: string | null
        size: number
        fileName: string
        contentType: string
        title: string | null
      },
    ): Promise<Evidence> {
      return runMutation(database, ctx, async (tx) => {
        const existing = await repo.findBlobBySha(tx, ctx.tenantId, file.sha256)
        let blobId = existing?.id
        if (!blobId) {
          if (!file.blobId || !(await repo.completeBlob(tx, ctx.tenantId, file.blobId, file.sha256)))
            throw invalid('sha256', `no file files/${file.sha256} in the bundle or the tenant`)
          blobId = file.blobId
        }
        const size = existing ? Number(existing.size) : file.size
        const row = fileRow(ctx, file, { size, sha256: file.sha256, blobId })
        await repo.insertEvidence(tx, row)
        return created(row, { imported: true })
      })
    },

    async assertExists(tx: Tx, ctx: Ctx, ids: string[], field: string): Promise<void> {
      const found = new Set((await repo.findEvidenceMany(tx, ctx.tenantId, ids)).map((r) => r.id))
      const missing = ids.filter((id) => !found.has(id))
      if (missing.length > 0) throw invalid(field, `evidence ${missing.join(', ')} was not found`)
    },
  }

  async function answerEvidenceIds(ctx: Ctx, useCaseId: string): Promise<string[]> {
    const rows = await db
      .selectFrom('use_case_questionnaires')
      .select('answers')
      .where('tenant_id', '=', ctx.tenantId)
      .where('use_case_id', '=', useCaseId)
      .execute()
    const ids = new Set<string>()
    for (const row of rows)
      for (const answer of Object.values(JSON.parse(row.answers) as Record<string, { evidence_ids?: string[] }>))
        for (const id of answer.evidence_ids ?? []) ids.add(id)
    return [...ids]
  }
}

export const toEvidence = fields.toItem

function searchKey(...parts: (string | null)[]): string {
  return parts
    .filter((p) => p !== null)
    .join(' ')
    .normalize('NFC')
    .toLowerCase()
    .slice(0, 1000)
}

function checkUrl(raw: string): string {
  if (!isHttpUrl(raw)) throw invalid('url', HTTP_URL_MESSAGE)
  return new URL(raw).toString()
}

/** A file name as a download may offer it again: no path, no control characters. */
/** The file part's name and type, refused (422 naming `file`) when they could not be stored or sent back in a header. */
function fileMeta(part: Extract<UploadPart, { type: 'file' }>): { fileName: string; contentType: string } {
  const malformed = malformedText(part.filename ?? '', 'file')
  const contentType = part.mimetype || 'application/octet-stream'
  const problem =
    malformed.length > 0
      ? `its file name ${malformed[0].message}`
      : MEDIA_TYPE.test(contentType)
        ? null
        : 'its Content-Type must be a media type (type/subtype)'
  if (problem !== null) {
    part.file.resume()
    throw invalid('file', problem)
  }
  return { fileName: cleanFileName(part.filename), contentType }
}

function cleanFileName(name: string | undefined): string {
  const base = (name ?? '').split(/[\\/]/).pop() ?? ''
  const clean = base
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this removes
    .replace(/[\u0000-\u001f\u007f]/g, '')
    .trim()
    .slice(0, 255)
  return clean === '' ? 'file' : clean
}

/** @fastify/multipart and busboy report a bad body by throwing; say which 4xx it is. */
function multipartError(err: unknown, maxBytes: number): unknown {
  if (err instanceof AppError) return err
  const e = err as { code?: string; message?: string }
  switch (e.code) {
    case 'FST_REQ_FILE_TOO_LARGE':
      return tooLarge(maxBytes)
    case 'FST_FILES_LIMIT':
      return invalid('file', 'send one file per upload')
    case 'FST_PARTS_LIMIT':
    case 'FST_FIELDS_LIMIT':
      return new AppError('validation_failed', 'too many multipart fields; send "file" and optionally "title"')
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
      return new AppError('unsupported_media_type', 'send multipart/form-data with a "file" field, or JSON for a link')
  }
  if (typeof e.message === 'string' && /boundary|malformed|unexpected end|multipart/i.test(e.message)) {
    return new AppError('bad_request', `the multipart body is malformed: ${e.message}`, [
      { field: 'file', message: 'malformed multipart body' },
    ])
  }
  return err
}

/** How often each instance sweeps abandoned uploads, after the sweep it makes at start. */
export const SWEEP_INTERVAL_MS = 2 * 60_000

/**
 * Sweeps abandoned uploads at once and then every `intervalMs`, one sweep at a time; a failed sweep (the database
 * away) is logged and the next one tries again.
 */
export function startEvidenceSweeper(
  evidence: Pick<EvidenceService, 'sweepAbandoned'>,
  log: Deps['log'],
  intervalMs = SWEEP_INTERVAL_MS,
): { stop(): Promise<void> } {
  let running: Promise<void> = Promise.resolve()
  let stopped = false
  const sweep = () => {
    running = running.then(async () => {
      if (stopped) return
      try {
        const removed = await evidence.sweepAbandoned()
        if (removed > 0) log.info({ removed }, 'removed the content of abandoned evidence uploads')
      } catch (err) {
        log.warn({ err: (err as Error).message }, 'sweeping abandoned evidence uploads failed; trying again later')
      }
    })
  }
  sweep()
  const timer = setInterval(sweep, intervalMs)
  timer.unref()
  return {
    async stop() {
      stopped = true
      clearInterval(timer)
      await running
    },
  }
}
