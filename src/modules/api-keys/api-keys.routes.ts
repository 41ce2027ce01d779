import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { created, noContent } from '../../http/responses.js'
import { IdParam } from '../../shared/schemas.js'
import { ApiKey, ApiKeyCreate, ApiKeyCreated, ApiKeyListQuery, ApiKeyPage } from './api-keys.schemas.js'
import type { ApiKeysService } from './api-keys.service.js'

const tags = ['api keys']
const config = { role: 'admin' as const }

export function apiKeyRoutes(apiKeys: ApiKeysService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/api_keys',
      {
        config,
        schema: {
          operationId: 'listApiKeys',
          summary: 'List API keys (admin)',
          tags,
          querystring: ApiKeyListQuery,
          response: { 200: ApiKeyPage },
        },
      },
      async (req) => apiKeys.list(req.ctx, req.query),
    )

    app.get(
      '/api_keys/:id',
      {
        config,
        schema: {
          operationId: 'getApiKey',
          summary: 'Get an API key (admin)',
          tags,
          params: IdParam('key'),
          response: { 200: ApiKey },
        },
      },
      async (req) => apiKeys.get(req.ctx, req.params.id),
    )

    app.post(
      '/api_keys',
      {
        config: { ...config, oneTimeSecret: 'key' },
        schema: {
          operationId: 'createApiKey',
          summary: 'Create an API key (admin); the secret is returned once',
          tags,
          body: ApiKeyCreate,
          response: { 201: ApiKeyCreated },
        },
      },
      async (req, reply) => created(req, reply, await apiKeys.create(req.ctx, req.body)),
    )

    app.delete(
      '/api_keys/:id',
      {
        config,
        schema: {
          operationId: 'revokeApiKey',
          summary: 'Revoke an API key (admin); its tokens stop working at once',
          tags,
          params: IdParam('key'),
          response: { 204: Type.Null({ description: 'Revoked.' }) },
        },
      },
      async (req, reply) => noContent(reply, apiKeys.revoke(req.ctx, req.params.id)),
    )
  }
}
