import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { IdParam } from '../../shared/schemas.js'
import { Dossier, DossierQuery } from './dossier.schemas.js'
import type { DossierService } from './dossier.service.js'
import { dossierStream } from './dossier.stream.js'

export function dossierRoutes(dossier: DossierService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/use_cases/:id/dossier',
      {
        schema: {
          operationId: 'getUseCaseDossier',
          summary: 'Everything about a use case in one answer, for auditors',
          description:
            'The use case, its workflow position and history, models, vendors, risk scenarios, applied packs, controls with their evidence, questionnaire answers, and what the workflow gates would still refuse. `?format=html` gives the same as one self-contained printable page. Streamed as it is read (chunked), so a use case with thousands of linked records answers in full.',
          tags: ['use cases'],
          params: IdParam('uc'),
          querystring: DossierQuery,
          response: {
            200: {
              description: 'The dossier.',
              content: { 'application/json': { schema: Dossier }, 'text/html': { schema: { type: 'string' } } },
            },
          },
        },
      },
      async (req, reply) => {
        // Read before the answer starts: a missing use case is still a 404 problem, not a broken stream.
        const parts = await dossier.open(req.ctx, req.params.id)
        const html = req.query.format === 'html'
        // The document declares the body as the dossier; what is sent is a stream of its text. The page's
        // Content-Security-Policy and the other page headers come from installHtmlSecurity.
        const body = dossierStream(parts, html ? 'html' : 'json') as unknown as string
        return reply.type(html ? 'text/html; charset=utf-8' : 'application/json; charset=utf-8').send(body)
      },
    )
  }
}
