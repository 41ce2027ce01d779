import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { IdParam } from '../../shared/schemas.js'
import { UseCaseWorkflow, UseCaseWorkflowReject, UseCaseWorkflowSet } from './use-case-workflow.schemas.js'
import type { UseCaseWorkflowService } from './use-case-workflow.service.js'

const tags = ['use case workflow']

export function useCaseWorkflowRoutes(workflow: UseCaseWorkflowService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/use_cases/:id/workflow',
      {
        schema: {
          operationId: 'getUseCaseWorkflow',
          summary: 'Where a use case is in the workflow',
          tags,
          params: IdParam('uc'),
          response: { 200: UseCaseWorkflow },
        },
      },
      async (req) => workflow.get(req.ctx, req.params.id),
    )

    app.put(
      '/use_cases/:id/workflow',
      {
        schema: {
          operationId: 'setUseCaseWorkflowStage',
          summary: 'Move a use case to a stage',
          description:
            'The step resets to the first step the stage requires (`assessment`, `evidence_collection`, or `clear` when it requires none). Also the way out of `rejected`.',
          tags,
          params: IdParam('uc'),
          body: UseCaseWorkflowSet,
          response: { 200: UseCaseWorkflow },
        },
      },
      async (req) => workflow.set(req.ctx, req.params.id, req.body),
    )

    app.post(
      '/use_cases/:id/workflow/advance',
      {
        schema: {
          operationId: 'advanceUseCaseWorkflow',
          summary: 'Advance a use case one step',
          description:
            'assessment → evidence_collection → clear, skipping steps the stage does not require; from `clear` to the next stage by position. 409 when rejected, or clear in the end stage (final).',
          tags,
          params: IdParam('uc'),
          response: { 200: UseCaseWorkflow },
        },
      },
      async (req) => workflow.advance(req.ctx, req.params.id),
    )

    app.post(
      '/use_cases/:id/workflow/reject',
      {
        schema: {
          operationId: 'rejectUseCaseWorkflow',
          summary: 'Reject a use case in its current stage',
          description:
            'The step becomes `rejected` until the use case is moved with PUT; advancing answers 409 with the reason.',
          tags,
          params: IdParam('uc'),
          body: UseCaseWorkflowReject,
          response: { 200: UseCaseWorkflow },
        },
      },
      async (req) => workflow.reject(req.ctx, req.params.id, req.body),
    )
  }
}
