import multipart from '@fastify/multipart'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { AppError } from '../../http/errors.js'
import { created } from '../../http/responses.js'
import { IdParam } from '../../shared/schemas.js'
import {
  Evidence,
  EvidenceContentHeaders,
  type EvidenceLinkCreate,
  EvidenceLinkCreate as LinkSchema,
  EvidenceListQuery,
  EvidencePage,
  EvidenceUpload,
  EvidenceUsage,
} from './evidence.schemas.js'
import { type EvidenceService, servedContentType } from './evidence.service.js'

const tags = ['evidence']
const Binary = { type: 'string', format: 'binary' }

export function evidenceRoutes(evidence: EvidenceService, maxBytes: number): FastifyPluginAsyncTypebox {
  return async (app) => {
    // Only these routes take multipart bodies; the limits make busboy stop a body that exceeds them.
    await app.register(multipart, {
      limits: { fileSize: maxBytes, files: 1, fields: 4, fieldSize: 2000, parts: 6, headerPairs: 50 },
    })

    app.get(
      '/evidence',
      {
        schema: {
          operationId: 'listEvidence',
          summary: 'List evidence (files and links)',
          tags,
          querystring: EvidenceListQuery,
          response: { 200: EvidencePage },
        },
      },
      async (req) => evidence.list(req.ctx, req.query),
    )

    app.get(
      '/evidence/usage',
      {
        // The budget part changes with every upload of the calling key, which the read cache does not follow.
        config: { readCache: false },
        schema: {
          operationId: 'getEvidenceUsage',
          summary: 'The tenant’s evidence storage against its quota, and this key’s upload budget',
          description:
            'Stored bytes count each distinct content once (a deduplicated file counts once), uploads still arriving included. An upload past the quota answers 413 `quota_exceeded`; past the key’s bytes per minute, 429 `rate_limited` with `retry_after`; both carry `limit_name`, `limit_bytes`, `used_bytes` and `remaining_bytes`.',
          tags,
          response: { 200: EvidenceUsage },
        },
      },
      async (req) => evidence.usage(req.ctx),
    )

    app.get(
      '/evidence/:id',
      {
        schema: {
          operationId: 'getEvidence',
          summary: 'Get the metadata of a piece of evidence',
          tags,
          params: IdParam('ev'),
          response: { 200: Evidence },
        },
      },
      async (req) => evidence.get(req.ctx, req.params.id),
    )

    app.post(
      '/evidence',
      {
        schema: {
          operationId: 'createEvidence',
          summary: 'Upload a file (multipart/form-data) or register a link (JSON)',
          description: `A file goes in the multipart field \`file\` (one), with an optional \`title\`; it is streamed into the database in chunks and stored once per tenant per content (sha256). Files over EVIDENCE_MAX_MB (${maxBytes / (1024 * 1024)} MB here) answer 413 and leave nothing behind; so does an upload that would pass the tenant's storage quota (413 \`quota_exceeded\`) or the key's upload bytes per minute (429 \`rate_limited\`, with \`retry_after\`), refused before reading when Content-Length already says so (see GET /evidence/usage). A link is JSON \`{"kind": "link", "url", "title"}\` with an http(s) URL.`,
          tags,
          body: {
            content: { 'multipart/form-data': { schema: EvidenceUpload }, 'application/json': { schema: LinkSchema } },
          },
          response: { 201: Evidence },
        },
      },
      async (req, reply) => {
        const length = Number(req.headers['content-length'])
        const record = req.isMultipart()
          ? await evidence.upload(req.ctx, req.parts(), Number.isSafeInteger(length) ? length : undefined)
          : await evidence.createLink(req.ctx, req.body as EvidenceLinkCreate)
        return created(req, reply, record)
      },
    )

    app.delete(
      '/evidence/:id',
      {
        schema: {
          operationId: 'deleteEvidence',
          summary: 'Delete evidence that nothing uses',
          description: '409 while a use-case control or a questionnaire answer refers to it.',
          tags,
          params: IdParam('ev'),
          response: { 204: Type.Null({ description: 'Deleted.' }) },
        },
      },
      async (req, reply) => {
        await evidence.remove(req.ctx, req.params.id)
        return reply.code(204).send(null)
      },
    )

    app.get(
      '/evidence/:id/content',
      {
        config: { readCache: false },
        schema: {
          operationId: 'downloadEvidence',
          summary: 'Download the content of a file',
          description:
            'Streamed, as an attachment, `ETag` = the sha256; supports one `Range` (206) and `If-None-Match` (304). A link has no content (404).',
          tags,
          params: IdParam('ev'),
          headers: EvidenceContentHeaders,
          response: {
            200: { description: 'The content.', content: { 'application/octet-stream': { schema: Binary } } },
            206: { description: 'The requested range.', content: { 'application/octet-stream': { schema: Binary } } },
            304: Type.Null({ description: 'Not Modified: the `If-None-Match` ETag is still current.' }),
          },
        },
      },
      async (req, reply) => {
        try {
          const download = await evidence.download(req.ctx, req.params.id, req.headers.range)
          const { evidence: ev } = download
          const etag = `"${ev.sha256}"`
          reply
            .header('etag', etag)
            .header('accept-ranges', 'bytes')
            .header('cache-control', 'private, no-cache')
            .header('x-content-type-options', 'nosniff')
            .header('content-security-policy', "default-src 'none'; sandbox")
            .header('content-disposition', attachment(ev.file_name ?? 'file'))
          if (req.headers['if-none-match']?.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag)) {
            download.body.destroy()
            return reply.code(304).send(null)
          }
          reply
            .code(download.status)
            .type(servedContentType(ev.content_type))
            .header('content-length', String(download.end - download.start + 1))
          if (download.status === 206)
            reply.header('content-range', `bytes ${download.start}-${download.end}/${download.size}`)
          return reply.send(download.body)
        } catch (err) {
          if (err instanceof AppError && err.code === 'range_not_satisfiable')
            reply.header('content-range', `bytes */${String(err.extra?.size)}`)
          throw err
        }
      },
    )
  }
}

/** RFC 6266: an ASCII fallback name plus the exact name in RFC 5987 encoding. */
function attachment(fileName: string): string {
  const ascii = fileName.replace(/[^\x20-\x7e]|["\\]/g, '_')
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(fileName).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`
}
