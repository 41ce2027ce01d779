import { type Static, Type } from 'typebox'
import { Nullable } from '../../shared/schemas.js'
import { WorkflowStep } from '../use-cases/use-cases.schemas.js'
import { WorkflowStage } from './workflow-stages.schemas.js'

export const UseCaseWorkflow = Type.Object(
  {
    stage: Nullable(WorkflowStage, { description: 'The stage the use case is in (null only for a use case not yet placed in the workflow).' }),
    step: Nullable(WorkflowStep, {
      description: 'assessment → evidence_collection → clear, skipping the steps the stage does not require; or rejected.',
    }),
    rejection_reason: Nullable(Type.String(), { description: 'Why it was rejected, while `step` is `rejected`.' }),
  },
  {
    examples: [{
      stage: {
        id: 'ws_01jd3k8m9v4q2w6e8r0t2y4u6i', name: 'Legal review', description: null, type: 'intermediate', position: 1,
        assessment_required: true, evidence_collection_required: false, created_at: '2026-11-22T09:30:00.000Z', updated_at: '2026-11-22T09:30:00.000Z',
      },
      step: 'assessment',
      rejection_reason: null,
    }],
  },
)
export type UseCaseWorkflow = Static<typeof UseCaseWorkflow>

export const UseCaseWorkflowSet = Type.Object(
  { stage_id: Type.String({ minLength: 1, maxLength: 64, description: 'The ws_… id of the stage to move to.', examples: ['ws_01jd3k8m9v4q2w6e8r0t2y4u6i'] }) },
  { additionalProperties: false, examples: [{ stage_id: 'ws_01jd3k8m9v4q2w6e8r0t2y4u6i' }] },
)
export type UseCaseWorkflowSet = Static<typeof UseCaseWorkflowSet>

export const UseCaseWorkflowReject = Type.Object(
  { reason: Type.String({ minLength: 1, maxLength: 2000, pattern: '\\S', description: 'Why; kept on the use case and in the audit record.', examples: ['No legal basis for processing biometric data.'] }) },
  { additionalProperties: false, examples: [{ reason: 'No legal basis for processing biometric data.' }] },
)
export type UseCaseWorkflowReject = Static<typeof UseCaseWorkflowReject>
