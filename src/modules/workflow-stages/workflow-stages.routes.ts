import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { created, noContent } from '../../http/responses.js'
import { IdParam } from '../../shared/schemas.js'
import {
  WorkflowStage,
  WorkflowStageCreate,
  WorkflowStageListQuery,
  WorkflowStagePage,
  WorkflowStageUpdate,
} from './workflow-stages.schemas.js'
import type { WorkflowStagesService } from './workflow-stages.service.js'

const tags = ['workflow stages']

export function workflowStageRoutes(stages: WorkflowStagesService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/workflow_stages',
      {
        schema: {
          operationId: 'listWorkflowStages',
          summary: 'List workflow stages in workflow order',
          description: 'By position: the start stage first, the end stage last.',
          tags,
          querystring: WorkflowStageListQuery,
          response: { 200: WorkflowStagePage },
        },
      },
      async (req) => stages.list(req.ctx, req.query),
    )

    app.get(
      '/workflow_stages/:id',
      {
        schema: {
          operationId: 'getWorkflowStage',
          summary: 'Get a workflow stage',
          tags,
          params: IdParam('ws'),
          response: { 200: WorkflowStage },
        },
      },
      async (req) => stages.get(req.ctx, req.params.id),
    )

    app.post(
      '/workflow_stages',
      {
        schema: {
          operationId: 'createWorkflowStage',
          summary: 'Create an intermediate workflow stage',
          description: 'Without `position` it goes last, just before the end stage.',
          tags,
          body: WorkflowStageCreate,
          response: { 201: WorkflowStage },
        },
      },
      async (req, reply) => created(req, reply, await stages.create(req.ctx, req.body)),
    )

    app.patch(
      '/workflow_stages/:id',
      {
        schema: {
          operationId: 'updateWorkflowStage',
          summary: 'Rename, describe, reorder or change the required steps of a stage',
          description: 'The start and end stages are system-managed: 409.',
          tags,
          params: IdParam('ws'),
          body: WorkflowStageUpdate,
          response: { 200: WorkflowStage },
        },
      },
      async (req) => stages.update(req.ctx, req.params.id, req.body),
    )

    app.delete(
      '/workflow_stages/:id',
      {
        schema: {
          operationId: 'deleteWorkflowStage',
          summary: 'Delete an intermediate workflow stage',
          description: '409 while any use case is in it, and for the start and end stages.',
          tags,
          params: IdParam('ws'),
          response: { 204: Type.Null({ description: 'Deleted.' }) },
        },
      },
      async (req, reply) => noContent(reply, stages.delete(req.ctx, req.params.id)),
    )
  }
}
