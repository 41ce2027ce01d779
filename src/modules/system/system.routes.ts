import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { Deps } from '../../shared/deps.js'
import { SERVICE_NAME, SERVICE_VERSION } from '../../version.js'

export const API_VERSION = 'v1'

const SystemInfo = Type.Object({
  service: Type.String({ examples: [SERVICE_NAME] }),
  version: Type.String({ examples: ['0.1.0'] }),
  api_version: Type.String({ examples: [API_VERSION] }),
  tenant: Type.String({ examples: ['default'] }),
  database: Type.Enum(['sqlite', 'postgres']),
  features: Type.Object({
    mcp: Type.Boolean(),
    mcp_read_only: Type.Boolean(),
    redis: Type.Boolean(),
    starter_library: Type.Boolean(),
    upstream: Type.Boolean(),
  }),
})

const Ping = Type.Object({ message: Type.Literal('pong'), tenant: Type.String(), key_id: Type.Union([Type.String(), Type.Null()]) })

export function systemRoutes(deps: Pick<Deps, 'config' | 'database'>): FastifyPluginAsyncTypebox {
  const { config, database } = deps
  return async (app) => {
    app.get('/system', {
      schema: { operationId: 'getSystem', summary: 'Service name, version, tenant and enabled features', tags: ['system'], response: { 200: SystemInfo } },
    }, async (req) => ({
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
    }))

    app.get('/system/ping', {
      schema: { operationId: 'ping', summary: 'Check that the token works', tags: ['system'], response: { 200: Ping } },
    }, async (req) => ({ message: 'pong' as const, tenant: req.ctx.tenantId, key_id: req.ctx.actor.id }))
  }
}
