import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { created, jsonText, noContent } from '../../http/responses.js'
import { IdParam } from '../../shared/schemas.js'
import { Model, ModelCreate, ModelListQuery, ModelPage, ModelUpdate } from './models.schemas.js'
import type { ModelsService } from './models.service.js'

const tags = ['models']

export function modelRoutes(models: ModelsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/models',
      {
        schema: {
          operationId: 'listModels',
          summary: 'List models',
          tags,
          querystring: ModelListQuery,
          response: { 200: ModelPage },
        },
      },
      async (req, reply) => jsonText(reply, await models.listJson(req.ctx, req.query, req.readAt)),
    )

    app.get(
      '/models/:id',
      {
        schema: {
          operationId: 'getModel',
          summary: 'Get a model',
          tags,
          params: IdParam('mdl'),
          response: { 200: Model },
        },
      },
      async (req, reply) => jsonText(reply, await models.getJson(req.ctx, req.params.id, req.readAt)),
    )

    app.post(
      '/models',
      {
        schema: {
          operationId: 'createModel',
          summary: 'Create a model',
          tags,
          body: ModelCreate,
          response: { 201: Model },
        },
      },
      async (req, reply) => created(req, reply, await models.create(req.ctx, req.body)),
    )

    app.patch(
      '/models/:id',
      {
        schema: {
          operationId: 'updateModel',
          summary: 'Update a model',
          description: '`null` clears a field (`status` returns to `none`); absent fields stay as they are.',
          tags,
          params: IdParam('mdl'),
          body: ModelUpdate,
          response: { 200: Model },
        },
      },
      async (req) => models.update(req.ctx, req.params.id, req.body),
    )

    app.delete(
      '/models/:id',
      {
        schema: {
          operationId: 'deleteModel',
          summary: 'Delete a model',
          description: 'Also removes its links to use cases and vendors (each removal is audited).',
          tags,
          params: IdParam('mdl'),
          response: { 204: Type.Null({ description: 'Deleted.' }) },
        },
      },
      async (req, reply) => noContent(reply, models.delete(req.ctx, req.params.id)),
    )
  }
}
