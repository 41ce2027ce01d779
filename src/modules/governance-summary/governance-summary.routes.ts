import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { GovernanceSummary, GovernanceSummaryQuery } from './governance-summary.schemas.js'
import type { GovernanceSummaryService } from './governance-summary.service.js'

export function governanceSummaryRoutes(summary: GovernanceSummaryService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/governance_summary',
      {
        schema: {
          operationId: 'getGovernanceSummary',
          summary:
            'Counts of use cases by risk level and workflow stage, controls by status, and the use cases with overdue controls',
          description:
            'A control is overdue when its due date is before `as_of` (default today, UTC) and its status is pending or in_progress.',
          tags: ['governance summary'],
          querystring: GovernanceSummaryQuery,
          response: { 200: GovernanceSummary },
        },
        config: { readCache: { daily: (query) => (query as { as_of?: string }).as_of === undefined } },
      },
      async (req) => summary.get(req.ctx, req.query),
    )
  }
}
