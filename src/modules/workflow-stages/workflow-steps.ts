import { Type } from 'typebox'
import type { WorkflowStageRow } from '../../db/tables.js'

/** The steps of a stage, in order; `rejected` sits outside the order and is left only by moving to a stage. */
export type WorkflowStep = 'assessment' | 'evidence_collection' | 'clear' | 'rejected'
/** The schema of a step (published with the use case's schemas, which carry it). */
export const WorkflowStep = Type.Enum(['assessment', 'evidence_collection', 'clear', 'rejected'])

type StageFlags = Pick<WorkflowStageRow, 'assessment_required' | 'evidence_collection_required'>

/** The steps a stage goes through: its required steps, then `clear`. */
export function stepsOf(stage: StageFlags): WorkflowStep[] {
  const steps: WorkflowStep[] = []
  if (stage.assessment_required) steps.push('assessment')
  if (stage.evidence_collection_required) steps.push('evidence_collection')
  steps.push('clear')
  return steps
}

/** Where a use case lands on entering a stage: its first required step, or `clear` when it requires none. */
export function firstStep(stage: StageFlags): WorkflowStep {
  return stepsOf(stage)[0]
}

const ORDER: WorkflowStep[] = ['assessment', 'evidence_collection', 'clear']

/**
 * The next step within the stage, skipping steps it does not require, or null from `clear` (the use case
 * leaves the stage). A step the stage stopped requiring after the use case entered still advances forward.
 */
export function nextStepInStage(stage: StageFlags, step: Exclude<WorkflowStep, 'rejected'>): WorkflowStep | null {
  const required = stepsOf(stage)
  return ORDER.slice(ORDER.indexOf(step) + 1).find((s) => required.includes(s)) ?? null
}
