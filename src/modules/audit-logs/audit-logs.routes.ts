import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { IdParam } from '../../shared/schemas.js'
import { AuditLog, AuditLogListQuery, AuditLogPage } from './audit-logs.schemas.js'
import type { AuditLogsService } from './audit-logs.service.js'

const tags = ['audit logs']

export function auditLogRoutes(auditLogs: AuditLogsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get('/audit_logs', {
      schema: { operationId: 'listAuditLogs', summary: 'List audit records', description: 'Append-only: every mutation writes one record in its own transaction.', tags, querystring: AuditLogListQuery, response: { 200: AuditLogPage } },
    }, async (req) => auditLogs.list(req.ctx, req.query))

    app.get('/audit_logs/:id', {
      schema: { operationId: 'getAuditLog', summary: 'Get an audit record', tags, params: IdParam('al'), response: { 200: AuditLog } },
    }, async (req) => auditLogs.get(req.ctx, req.params.id))
  }
}
