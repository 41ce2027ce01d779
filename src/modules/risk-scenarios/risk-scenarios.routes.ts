import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { created, noContent } from '../../http/responses.js'
import { IdParam } from '../../shared/schemas.js'
import {
  RiskScenario,
  RiskScenarioCreate,
  RiskScenarioListQuery,
  RiskScenarioPage,
  RiskScenarioUpdate,
} from './risk-scenarios.schemas.js'
import type { RiskScenariosService } from './risk-scenarios.service.js'

const tags = ['risk scenarios']

export function riskScenarioRoutes(riskScenarios: RiskScenariosService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/risk_scenarios',
      {
        schema: {
          operationId: 'listRiskScenarios',
          summary: 'List risk scenarios',
          tags,
          querystring: RiskScenarioListQuery,
          response: { 200: RiskScenarioPage },
        },
      },
      async (req) => riskScenarios.list(req.ctx, req.query),
    )

    app.get(
      '/risk_scenarios/:id',
      {
        schema: {
          operationId: 'getRiskScenario',
          summary: 'Get a risk scenario',
          tags,
          params: IdParam('rs'),
          response: { 200: RiskScenario },
        },
      },
      async (req) => riskScenarios.get(req.ctx, req.params.id),
    )

    app.post(
      '/risk_scenarios',
      {
        schema: {
          operationId: 'createRiskScenario',
          summary: 'Create a risk scenario',
          description: 'Each of `risk_type_ids` must be a risk type of this tenant (422 naming the missing ones).',
          tags,
          body: RiskScenarioCreate,
          response: { 201: RiskScenario },
        },
      },
      async (req, reply) => created(req, reply, await riskScenarios.create(req.ctx, req.body)),
    )

    app.patch(
      '/risk_scenarios/:id',
      {
        schema: {
          operationId: 'updateRiskScenario',
          summary: 'Update a risk scenario',
          description:
            '`null` clears a field (lists become empty, `archived` false); absent fields stay as they are. `risk_type_ids` replaces the whole set; each id must be a risk type of this tenant (422 naming the missing ones).',
          tags,
          params: IdParam('rs'),
          body: RiskScenarioUpdate,
          response: { 200: RiskScenario },
        },
      },
      async (req) => riskScenarios.update(req.ctx, req.params.id, req.body),
    )

    app.delete(
      '/risk_scenarios/:id',
      {
        schema: {
          operationId: 'deleteRiskScenario',
          summary: 'Delete a risk scenario',
          description: 'Also removes its links to use cases and risk types (each removal is audited).',
          tags,
          params: IdParam('rs'),
          response: { 204: Type.Null({ description: 'Deleted.' }) },
        },
      },
      async (req, reply) => noContent(reply, riskScenarios.delete(req.ctx, req.params.id)),
    )
  }
}
