import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { jsonText } from '../../http/responses.js'
import { IdParam } from '../../shared/schemas.js'
import {
  AuditCheckpoint,
  AuditLog,
  AuditLogExportQuery,
  AuditLogListQuery,
  AuditLogPage,
  AuditLogQuery,
  AuditPublicKey,
  AuditVerification,
  AuditVerifyQuery,
} from './audit-logs.schemas.js'
import type { AuditLogsService } from './audit-logs.service.js'

const tags = ['audit logs']

const EXPORT_TYPES = { ndjson: 'application/x-ndjson', csv: 'text/csv; charset=utf-8' } as const

export function auditLogRoutes(auditLogs: AuditLogsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/audit_logs',
      {
        schema: {
          operationId: 'listAuditLogs',
          summary: 'List audit records',
          description: 'Append-only: every mutation writes one record in its own transaction.',
          tags,
          querystring: AuditLogListQuery,
          response: { 200: AuditLogPage },
        },
      },
      async (req, reply) => jsonText(reply, await auditLogs.listJson(req.ctx, req.query)),
    )

    app.post(
      '/audit_logs/query',
      {
        config: { role: 'read' },
        schema: {
          operationId: 'queryAuditLogs',
          summary: 'Query audit records with a JSON filter',
          tags,
          body: AuditLogQuery,
          response: { 200: AuditLogPage },
        },
      },
      async (req, reply) => jsonText(reply, await auditLogs.listJson(req.ctx, req.body)),
    )

    app.get(
      '/audit_logs/export',
      {
        config: { readCache: false },
        schema: {
          operationId: 'exportAuditLogs',
          summary: 'Export audit records as NDJSON or CSV (streamed)',
          description:
            'Takes the same filters as the list; streams every matching record, so any number can be exported.',
          tags,
          querystring: AuditLogExportQuery,
          response: {
            200: {
              description: 'One record per line.',
              content: {
                'application/x-ndjson': { schema: { type: 'string' } },
                'text/csv': { schema: { type: 'string' } },
              },
            },
          },
        },
      },
      async (req, reply) => {
        const format = req.query.format ?? 'ndjson'
        // The document declares the body as text; what is sent is a stream of that text.
        const body = auditLogs.export(req.ctx, req.query) as unknown as string
        return reply
          .type(EXPORT_TYPES[format])
          .header('content-disposition', `attachment; filename="audit-logs.${format}"`)
          .send(body)
      },
    )

    app.get(
      '/audit_logs/verify',
      {
        // It checks what is stored, including changes made behind the service's back: always read afresh.
        config: { readCache: false },
        schema: {
          operationId: 'verifyAuditLogs',
          summary:
            'Verify the keyed hash chain of this tenant’s audit records, and optionally a checkpoint kept earlier',
          tags,
          querystring: AuditVerifyQuery,
          response: { 200: AuditVerification },
        },
      },
      async (req) => auditLogs.verify(req.ctx, req.query),
    )

    app.get(
      '/audit_logs/checkpoint',
      {
        config: { readCache: false },
        schema: {
          operationId: 'getAuditCheckpoint',
          summary: 'A signed checkpoint of this tenant’s audit chain head: keep it, and verify against it later',
          tags,
          response: { 200: AuditCheckpoint },
        },
      },
      async (req) => auditLogs.checkpoint(req.ctx),
    )

    app.get(
      '/audit_logs/checkpoint/public_key',
      {
        schema: {
          operationId: 'getAuditCheckpointPublicKey',
          summary: 'The Ed25519 public key checkpoints are signed with',
          tags,
          response: { 200: AuditPublicKey },
        },
      },
      async () => auditLogs.publicKey(),
    )

    app.get(
      '/audit_logs/:id',
      {
        schema: {
          operationId: 'getAuditLog',
          summary: 'Get an audit record',
          tags,
          params: IdParam('al'),
          response: { 200: AuditLog },
        },
      },
      async (req) => auditLogs.get(req.ctx, req.params.id),
    )
  }
}
