import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { created, jsonText, noContent } from '../../http/responses.js'
import { IdParam } from '../../shared/schemas.js'
import { UseCase, UseCaseCreate, UseCaseListQuery, UseCasePage, UseCaseUpdate } from './use-cases.schemas.js'
import { overdueListed, type UseCasesService } from './use-cases.service.js'

const tags = ['use cases']

export function useCaseRoutes(useCases: UseCasesService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/use_cases',
      {
        schema: {
          operationId: 'listUseCases',
          summary: 'List use cases',
          tags,
          querystring: UseCaseListQuery,
          response: { 200: UseCasePage },
        },
        config: { readCache: { daily: (query) => overdueListed(query as UseCaseListQuery) } },
      },
      async (req, reply) => jsonText(reply, await useCases.listJson(req.ctx, req.query, req.readAt)),
    )

    app.get(
      '/use_cases/:id',
      {
        schema: {
          operationId: 'getUseCase',
          summary: 'Get a use case',
          tags,
          params: IdParam('uc'),
          response: { 200: UseCase },
        },
      },
      async (req, reply) => jsonText(reply, await useCases.getJson(req.ctx, req.params.id, req.readAt)),
    )

    app.post(
      '/use_cases',
      {
        schema: {
          operationId: 'createUseCase',
          summary: 'Create a use case',
          tags,
          body: UseCaseCreate,
          response: { 201: UseCase },
        },
      },
      async (req, reply) => created(req, reply, await useCases.create(req.ctx, req.body)),
    )

    app.patch(
      '/use_cases/:id',
      {
        schema: {
          operationId: 'updateUseCase',
          summary: 'Update a use case',
          description: '`null` clears a field; absent fields stay as they are.',
          tags,
          params: IdParam('uc'),
          body: UseCaseUpdate,
          response: { 200: UseCase },
        },
      },
      async (req) => useCases.update(req.ctx, req.params.id, req.body),
    )

    app.delete(
      '/use_cases/:id',
      {
        schema: {
          operationId: 'deleteUseCase',
          summary: 'Delete a use case',
          tags,
          params: IdParam('uc'),
          response: { 204: Type.Null({ description: 'Deleted.' }) },
        },
      },
      async (req, reply) => noContent(reply, useCases.delete(req.ctx, req.params.id)),
    )
  }
}
