import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { Deps } from '../../shared/deps.js'
import { SERVICE_NAME, SERVICE_VERSION } from '../../version.js'
import { API_VERSION, Ping, SystemInfo } from './system.schemas.js'

export function systemRoutes(deps: Pick<Deps, 'config' | 'database'>): FastifyPluginAsyncTypebox {
  const { config, database } = deps
  return async (app) => {
    app.get(
      '/system',
      {
        schema: {
          operationId: 'getSystem',
          summary: 'Service name, version, tenant and enabled features',
          tags: ['system'],
          response: { 200: SystemInfo },
        },
      },
      async (req) => ({
        service: SERVICE_NAME,
        version: SERVICE_VERSION,
        api_version: API_VERSION,
        tenant: req.ctx.tenantId,
        database: database.dialect,
        features: {
          mcp: config.enableMcp,
          mcp_read_only: config.mcpReadOnly,
          redis: config.redisUrl !== undefined,
          starter_library: config.starterLibrary,
          upstream: config.upstreamBaseUrl !== undefined,
        },
      }),
    )

    app.get(
      '/system/ping',
      {
        schema: {
          operationId: 'ping',
          summary: 'Check that the token works',
          tags: ['system'],
          response: { 200: Ping },
        },
      },
      async (req) => ({ message: 'pong' as const, tenant: req.ctx.tenantId, key_id: req.ctx.actor.id }),
    )
  }
}
