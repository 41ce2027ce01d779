import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { IdParam } from '../../shared/schemas.js'
import { renderDossierHtml } from './dossier.html.js'
import { Dossier, DossierQuery } from './dossier.schemas.js'
import type { DossierService } from './dossier.service.js'

export function dossierRoutes(dossier: DossierService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get('/use_cases/:id/dossier', {
      schema: {
        operationId: 'getUseCaseDossier',
        summary: 'Everything about a use case in one answer, for auditors',
        description: 'The use case, its workflow position and history, models, vendors, risk scenarios, applied packs, controls with their evidence, questionnaire answers, and what the workflow gates would still refuse. `?format=html` gives the same as one self-contained printable page.',
        tags: ['use cases'],
        params: IdParam('uc'),
        querystring: DossierQuery,
        response: { 200: { description: 'The dossier.', content: { 'application/json': { schema: Dossier }, 'text/html': { schema: { type: 'string' } } } } },
      },
    }, async (req, reply) => {
      const result = await dossier.get(req.ctx, req.params.id)
      if (req.query.format !== 'html') return result
      // Its Content-Security-Policy and the other page headers come from installHtmlSecurity (the page repeats the policy).
      return reply.type('text/html; charset=utf-8').send(renderDossierHtml(result))
    })
  }
}
