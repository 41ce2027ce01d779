import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { Config } from '../../config.js'
import { serviceOrigin } from '../../http/plugins/auth.js'
import { noContent } from '../../http/responses.js'
import { NoQuery } from '../../shared/schemas.js'
import { SsoConfig, SsoConfigInput } from './sso.schemas.js'
import type { SsoService } from './sso.service.js'

const tags = ['sso']
const config = { role: 'admin' as const }

/** The tenant's identity provider for single sign-on (admin). */
export function ssoRoutes(sso: SsoService, settings: Config): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/sso',
      {
        config,
        schema: {
          operationId: 'getSso',
          summary: "Get the tenant's single sign-on configuration (admin)",
          description:
            'The identity provider people of this tenant sign in with, never its client secret (`client_secret_set` says whether one is stored), and the `redirect_uri` to register at the provider. 404 when none is configured.',
          tags,
          querystring: NoQuery,
          response: { 200: SsoConfig },
        },
      },
      async (req) => sso.get(req.ctx, serviceOrigin(req, settings)),
    )

    app.put(
      '/sso',
      {
        config,
        schema: {
          operationId: 'setSso',
          summary: "Configure the tenant's single sign-on (admin)",
          description:
            "An OpenID Connect provider (authorization code flow with PKCE). The issuer's discovery document is read first: 422 naming the problem if it cannot be read or is unusable, and nothing is saved. The client secret is stored encrypted and never returned. Register `redirect_uri` of the answer at the provider.",
          tags,
          body: SsoConfigInput,
          response: { 200: SsoConfig },
        },
      },
      async (req) => sso.set(req.ctx, req.body, serviceOrigin(req, settings)),
    )

    app.delete(
      '/sso',
      {
        config,
        schema: {
          operationId: 'deleteSso',
          summary: "Remove the tenant's single sign-on (admin)",
          description:
            'People can no longer start signing in with the provider; their current sessions go on until they end. 404 when none is configured.',
          tags,
          response: { 204: Type.Null({ description: 'Removed.' }) },
        },
      },
      async (req, reply) => noContent(reply, sso.remove(req.ctx)),
    )
  }
}
