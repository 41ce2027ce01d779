import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { created } from '../../http/responses.js'
import { KeyParam, VersionQuery } from '../../shared/schemas.js'
import { PolicyPack, PolicyPackCreate, PolicyPackListQuery, PolicyPackPage } from './policy-packs.schemas.js'
import type { PolicyPacksService } from './policy-packs.service.js'

const tags = ['policy packs']

export function policyPackRoutes(packs: PolicyPacksService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/policy_packs',
      {
        schema: {
          operationId: 'listPolicyPacks',
          summary: 'List policy packs',
          description: 'The latest version of each key; `all_versions=true` lists every version.',
          tags,
          querystring: PolicyPackListQuery,
          response: { 200: PolicyPackPage },
        },
      },
      async (req) => packs.list(req.ctx, req.query),
    )

    app.get(
      '/policy_packs/:key',
      {
        schema: {
          operationId: 'getPolicyPack',
          summary: 'Get a policy pack by key (latest, or ?version=) or by pp_ id',
          tags,
          params: KeyParam('policy pack'),
          querystring: VersionQuery,
          response: { 200: PolicyPack },
        },
      },
      async (req) => packs.get(req.ctx, req.params.key, req.query.version),
    )

    app.post(
      '/policy_packs',
      {
        schema: {
          operationId: 'createPolicyPack',
          summary: 'Publish a new version of a policy pack',
          tags,
          body: PolicyPackCreate,
          response: { 201: PolicyPack },
        },
      },
      async (req, reply) => created(req, reply, await packs.create(req.ctx, req.body)),
    )
  }
}
