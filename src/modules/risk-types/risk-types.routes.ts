import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { created, noContent } from '../../http/responses.js'
import { IdParam } from '../../shared/schemas.js'
import { RiskType, RiskTypeCreate, RiskTypeListQuery, RiskTypePage, RiskTypeUpdate } from './risk-types.schemas.js'
import type { RiskTypesService } from './risk-types.service.js'

const tags = ['risk types']

export function riskTypeRoutes(riskTypes: RiskTypesService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/risk_types',
      {
        schema: {
          operationId: 'listRiskTypes',
          summary: 'List risk types',
          tags,
          querystring: RiskTypeListQuery,
          response: { 200: RiskTypePage },
        },
      },
      async (req) => riskTypes.list(req.ctx, req.query),
    )

    app.get(
      '/risk_types/:id',
      {
        schema: {
          operationId: 'getRiskType',
          summary: 'Get a risk type',
          tags,
          params: IdParam('rt'),
          response: { 200: RiskType },
        },
      },
      async (req) => riskTypes.get(req.ctx, req.params.id),
    )

    app.post(
      '/risk_types',
      {
        schema: {
          operationId: 'createRiskType',
          summary: 'Create a risk type',
          tags,
          body: RiskTypeCreate,
          response: { 201: RiskType },
        },
      },
      async (req, reply) => created(req, reply, await riskTypes.create(req.ctx, req.body)),
    )

    app.patch(
      '/risk_types/:id',
      {
        schema: {
          operationId: 'updateRiskType',
          summary: 'Update a risk type',
          description:
            '`null` clears a field (`custom` returns to true, `hidden` to false); absent fields stay as they are.',
          tags,
          params: IdParam('rt'),
          body: RiskTypeUpdate,
          response: { 200: RiskType },
        },
      },
      async (req) => riskTypes.update(req.ctx, req.params.id, req.body),
    )

    app.delete(
      '/risk_types/:id',
      {
        schema: {
          operationId: 'deleteRiskType',
          summary: 'Delete a risk type',
          description: 'Also removes it from the risk scenarios that reference it (each removal is audited).',
          tags,
          params: IdParam('rt'),
          response: { 204: Type.Null({ description: 'Deleted.' }) },
        },
      },
      async (req, reply) => noContent(reply, riskTypes.delete(req.ctx, req.params.id)),
    )
  }
}
