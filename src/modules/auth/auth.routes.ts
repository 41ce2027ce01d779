import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { Config } from '../../config.js'
import { tokenRateLimit } from '../../http/plugins/rate-limit.js'
import type { AuthService } from './auth.service.js'
import { TokenRequest, TokenResponse } from './auth.schemas.js'

export function authRoutes(auth: AuthService, config: Config): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/auth/token',
      {
        config: { public: true, optionalBody: true, rateLimit: tokenRateLimit(config) },
        // The header form sends no body at all; give the schema an empty object to check.
        preValidation: async (req) => {
          req.body ??= {}
        },
        schema: {
          operationId: 'createToken',
          summary: 'Exchange an API key for an access token',
          description:
            'Credentials come from the `X-API-Key` and `X-Tenant` headers (no body), or from a JSON body. Any wrong, revoked or expired credential gives the same 401.',
          tags: ['auth'],
          // The key and tenant headers, or no scheme at all when they come in the body.
          security: [{ apiKeyHeader: [], tenantHeader: [] }, {}],
          headers: Type.Object({
            'x-api-key': Type.Optional(Type.String({ description: 'The API key secret.' })),
            'x-tenant': Type.Optional(Type.String({ description: 'The tenant the key belongs to.' })),
          }),
          body: TokenRequest,
          response: { 200: TokenResponse },
        },
      },
      async (req) =>
        auth.issueToken(
          {
            apiKey: req.headers['x-api-key'] ?? req.body?.api_key,
            tenant: req.headers['x-tenant'] ?? req.body?.tenant,
          },
          { requestId: req.id, source: 'api' },
        ),
    )
  }
}
