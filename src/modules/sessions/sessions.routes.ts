import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { noContent } from '../../http/responses.js'
import { IdParam, NoQuery } from '../../shared/schemas.js'
import { Me, SessionListQuery, SessionPage } from './sessions.schemas.js'
import type { SessionsService } from './sessions.service.js'

const tags = ['sessions']

export function sessionRoutes(sessions: SessionsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/me',
      {
        config: { role: 'read', oauth: true },
        schema: {
          operationId: 'getMe',
          summary: 'Who is calling',
          description:
            'The tenant, role and identity behind this request: a signed-in person (with the `csrf_token` their writes send back), an API key, or an assistant acting for a person.',
          tags,
          querystring: NoQuery,
          response: { 200: Me },
        },
      },
      async (req, reply) => {
        reply.header('cache-control', 'no-store')
        return sessions.me(req.ctx)
      },
    )

    app.get(
      '/sessions',
      {
        config: { role: 'admin' },
        schema: {
          operationId: 'listSessions',
          summary: "List people's sessions (admin)",
          description: 'Sessions still within both their timeouts, oldest first; `user_id=` narrows to one person.',
          tags,
          querystring: SessionListQuery,
          response: { 200: SessionPage },
        },
      },
      async (req) => sessions.list(req.ctx, req.query),
    )

    app.delete(
      '/sessions/:id',
      {
        config: { role: 'admin' },
        schema: {
          operationId: 'deleteSession',
          summary: 'End a session (admin)',
          description: "The session's next request is refused, on every instance.",
          tags,
          params: IdParam('ses'),
          response: { 204: Type.Null({ description: 'Ended.' }) },
        },
      },
      async (req, reply) => noContent(reply, sessions.end(req.ctx, req.params.id)),
    )
  }
}
