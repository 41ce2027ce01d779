import { type Static, Type } from 'typebox'
import { Nullable } from '../../shared/schemas.js'
import { WorkflowStep } from './workflow-steps.js'
import { StageType } from './workflow-stages.schemas.js'

/** The stage as the original interface's SDK reads it (it decides "cleared" from `type`). */
export const WorkflowStageRef = Type.Object({
  id: Type.String({ examples: ['ws_01jd3k8m9v4q2w6e8r0t2y4u6i'] }),
  name: Type.String({ examples: ['Legal review'] }),
  type: StageType,
  position: Type.Integer({ minimum: 0 }),
})
export type WorkflowStageRef = Static<typeof WorkflowStageRef>

export const UseCaseWorkflow = Type.Object(
  {
    workflow_stage: Nullable(WorkflowStageRef, {
      description: 'The stage the use case is in (null only for a use case not yet placed in the workflow).',
    }),
    workflow_stage_step: Nullable(WorkflowStep, {
      description:
        'assessment → evidence_collection → clear, skipping the steps the stage does not require; or rejected. Cleared for good: an end-type stage at `clear`.',
    }),
    rejection_reason: Nullable(Type.String(), {
      description: 'Why it was rejected, while `workflow_stage_step` is `rejected`.',
    }),
  },
  {
    examples: [
      {
        workflow_stage: {
          id: 'ws_01jd3k8m9v4q2w6e8r0t2y4u6i',
          name: 'Legal review',
          type: 'intermediate',
          position: 1,
        },
        workflow_stage_step: 'assessment',
        rejection_reason: null,
      },
    ],
  },
)
export type UseCaseWorkflow = Static<typeof UseCaseWorkflow>

export const UseCaseWorkflowSet = Type.Object(
  {
    stage_id: Type.String({
      minLength: 1,
      maxLength: 64,
      description: 'The ws_… id of the stage to move to.',
      examples: ['ws_01jd3k8m9v4q2w6e8r0t2y4u6i'],
    }),
  },
  { additionalProperties: false, examples: [{ stage_id: 'ws_01jd3k8m9v4q2w6e8r0t2y4u6i' }] },
)
export type UseCaseWorkflowSet = Static<typeof UseCaseWorkflowSet>

export const UseCaseWorkflowReject = Type.Object(
  {
    reason: Type.String({
      minLength: 1,
      maxLength: 2000,
      pattern: '\\S',
      description: 'Why; kept on the use case and in the audit record.',
      examples: ['No legal basis for processing biometric data.'],
    }),
  },
  { additionalProperties: false, examples: [{ reason: 'No legal basis for processing biometric data.' }] },
)
export type UseCaseWorkflowReject = Static<typeof UseCaseWorkflowReject>
