import type { UseCaseRow, WorkflowStageRow } from '../../db/tables.js'
import { AppError, conflict, invalid, notFound } from '../../http/errors.js'
import type { Ctx } from '../../shared/context.js'
import type { Deps } from '../../shared/deps.js'
import { now } from '../../shared/ids.js'
import { findForChange, runMutation, type Tx } from '../../shared/mutation.js'
import { answerErrors, evidenceErrors, missingAnswers, missingEvidence } from '../process/process.js'
import type {
  UseCaseWorkflow,
  UseCaseWorkflowReject,
  UseCaseWorkflowSet,
  WorkflowStageRef,
} from './use-case-workflow.schemas.js'
import * as stages from './workflow-stages.repo.js'
import { firstStep, nextStepInStage, type WorkflowStep } from './workflow-steps.js'

export type UseCaseWorkflowService = ReturnType<typeof createUseCaseWorkflowService>

/** Where a transition takes the use case. */
interface Target {
  action: 'use_case.workflow_moved' | 'use_case.workflow_advanced' | 'use_case.workflow_rejected'
  stage: WorkflowStageRow
  step: WorkflowStep
  reason: string | null
}

/** The use case with the stage it sits in, read inside the transition's transaction. */
interface Current {
  useCase: UseCaseRow
  stage: WorkflowStageRow | undefined
  step: WorkflowStep | null
}

export function createUseCaseWorkflowService(deps: Pick<Deps, 'database'>) {
  const { database } = deps
  const { db } = database

  async function load(tx: Tx, tenantId: string, id: string): Promise<Current> {
    const useCase = await findForChange(tx, 'use_cases', tenantId, id)
    if (!useCase) throw notFound('use case', id)
    const stage =
      useCase.workflow_stage_id === null ? undefined : await stages.findStage(tx, tenantId, useCase.workflow_stage_id)
    return { useCase, stage, step: useCase.workflow_stage_step as WorkflowStep | null }
  }

  /** Reads the current state and writes the transition with its audit record, in one transaction. */
  function transition(
    ctx: Ctx,
    id: string,
    plan: (current: Current, tx: Tx) => Promise<Target>,
    metadata?: Record<string, unknown>,
  ): Promise<UseCaseWorkflow> {
    return runMutation(
      database,
      ctx,
      async (tx) => {
        await stages.lockStages(tx, ctx.tenantId, database.dialect)
        const current = await load(tx, ctx.tenantId, id)
        const target = await plan(current, tx)
        const result = view(target.stage, target.step, target.reason)
        const { useCase } = current
        if (
          target.stage.id === useCase.workflow_stage_id &&
          target.step === current.step &&
          target.reason === useCase.workflow_rejection_reason
        ) {
          return { result, audit: [] }
        }
        await stages.moveUseCase(tx, ctx.tenantId, id, {
          workflow_stage_id: target.stage.id,
          workflow_stage_step: target.step,
          workflow_rejection_reason: target.reason,
          updated_at: now(),
        })
        return {
          result,
          audit: {
            action: target.action,
            resourceType: 'use_case',
            resourceId: id,
            resourceName: useCase.name,
            useCaseId: id,
            subObjectType: 'workflow_stage',
            subObjectId: target.stage.id,
            subObjectName: target.stage.name,
            changes: {
              workflow_stage_id: [useCase.workflow_stage_id, target.stage.id],
              workflow_stage_step: [current.step, target.step],
            },
            metadata: metadata ?? null,
          },
        }
      },
      [stages.STAGES_LOCK, id],
    )
  }

  /** The stage a use case must be in for advance and reject; its rejection blocks advancing. */
  function placed(current: Current): { stage: WorkflowStageRow; step: WorkflowStep } {
    if (!current.stage || current.step === null) {
      throw conflict(
        `use case ${current.useCase.id} is not in a workflow stage; move it to one with PUT /use_cases/${current.useCase.id}/workflow`,
      )
    }
    return { stage: current.stage, step: current.step }
  }

  const completed = (current: Current) =>
    conflict(
      `use case ${current.useCase.id} is clear in the end stage "${current.stage!.name}": its workflow is complete; move it with PUT /use_cases/${current.useCase.id}/workflow to reopen it`,
    )

  return {
    async get(ctx: Ctx, id: string): Promise<UseCaseWorkflow> {
      const current = await load(db, ctx.tenantId, id)
      return view(current.stage, current.step, current.useCase.workflow_rejection_reason)
    },

    /** Moves to any stage of the tenant, at its first required step; also the way out of `rejected`. */
    set(ctx: Ctx, id: string, input: UseCaseWorkflowSet): Promise<UseCaseWorkflow> {
      return transition(ctx, id, async (_current, tx) => {
        const stage = await stages.findStage(tx, ctx.tenantId, input.stage_id)
        if (!stage) throw invalid('stage_id', `workflow stage ${input.stage_id} was not found`)
        return { action: 'use_case.workflow_moved', stage, step: firstStep(stage), reason: null }
      })
    },

    /** assessment → evidence_collection → clear within a stage (skipping steps it does not require), then on to the next stage. */
    advance(ctx: Ctx, id: string): Promise<UseCaseWorkflow> {
      return transition(ctx, id, async (current, tx) => {
        const { stage, step } = placed(current)
        if (step === 'rejected') {
          throw conflict(
            `use case ${id} was rejected in stage "${stage.name}": ${current.useCase.workflow_rejection_reason ?? 'no reason given'}; move it to a stage with PUT /use_cases/${id}/workflow to continue`,
          )
        }
        await checkGate(tx, ctx.tenantId, current.useCase, stage, step)
        const next = nextStepInStage(stage, step)
        if (next) return { action: 'use_case.workflow_advanced', stage, step: next, reason: null }
        if (stage.type === 'end') throw completed(current)
        const nextStage = await stages.findNextStage(tx, ctx.tenantId, stage)
        if (!nextStage) throw conflict(`workflow stage "${stage.name}" has no stage after it`)
        return { action: 'use_case.workflow_advanced', stage: nextStage, step: firstStep(nextStage), reason: null }
      })
    },

    reject(ctx: Ctx, id: string, input: UseCaseWorkflowReject): Promise<UseCaseWorkflow> {
      const reason = input.reason.trim()
      return transition(
        ctx,
        id,
        async (current) => {
          const { stage, step } = placed(current)
          if (step === 'rejected')
            throw conflict(
              `use case ${id} is already rejected: ${current.useCase.workflow_rejection_reason ?? 'no reason given'}`,
            )
          if (stage.type === 'end' && step === 'clear') throw completed(current)
          return { action: 'use_case.workflow_rejected', stage, step: 'rejected', reason }
        },
        { reason },
      )
    },
  }
}

/**
 * Leaving `assessment` in a stage that requires it needs every required question of the use case's
 * questionnaires answered; leaving `evidence_collection` in a stage that requires it needs evidence for every
 * required evidence requirement of every applicable control.
 */
async function checkGate(
  tx: Tx,
  tenantId: string,
  useCase: UseCaseRow,
  stage: WorkflowStageRow,
  step: WorkflowStep,
): Promise<void> {
  if (step === 'assessment' && stage.assessment_required) {
    const missing = await missingAnswers(tx, tenantId, useCase.id)
    if (missing.length > 0) {
      throw new AppError(
        'process_incomplete',
        `use case ${useCase.id} cannot leave assessment in stage "${stage.name}": ${missing.length} required question(s) unanswered`,
        answerErrors(missing),
        { missing_answers: missing },
      )
    }
  }
  if (step === 'evidence_collection' && stage.evidence_collection_required) {
    const missing = await missingEvidence(tx, tenantId, useCase.id)
    if (missing.length > 0) {
      throw new AppError(
        'process_incomplete',
        `use case ${useCase.id} cannot leave evidence collection in stage "${stage.name}": ${missing.length} required evidence requirement(s) without evidence`,
        evidenceErrors(missing),
        { missing_evidence: missing },
      )
    }
  }
}

function view(stage: WorkflowStageRow | undefined, step: WorkflowStep | null, reason: string | null): UseCaseWorkflow {
  return {
    workflow_stage: stage
      ? { id: stage.id, name: stage.name, type: stage.type as WorkflowStageRef['type'], position: stage.position }
      : null,
    workflow_stage_step: stage ? step : null,
    rejection_reason: reason,
  }
}
