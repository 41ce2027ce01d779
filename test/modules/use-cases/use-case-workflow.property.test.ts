import fc from 'fast-check'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { describeEachDialect, startTestApp, type TestApp } from '../../helpers/harness.js'

interface Stage {
  id: string
  type: 'start' | 'intermediate' | 'end'
  position: number
  assessment_required: boolean
  evidence_collection_required: boolean
}
interface Workflow {
  workflow_stage: (Pick<Stage, 'id' | 'type' | 'position'> & { name: string }) | null
  workflow_stage_step: string | null
  rejection_reason: string | null
}

type Op =
  | { kind: 'advance'; uc: number }
  | { kind: 'reject'; uc: number }
  | { kind: 'put'; uc: number; stage: number }
  | { kind: 'create'; position: number | null; a: boolean; e: boolean }
  | { kind: 'delete'; stage: number }
  | { kind: 'reorder'; stage: number; position: number }
  | { kind: 'flags'; stage: number; a: boolean; e: boolean }

const USE_CASES = 2
const uc = fc.nat({ max: USE_CASES - 1 })
const pick = fc.nat({ max: 50 })
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('advance' as const), uc }), weight: 5 },
  { arbitrary: fc.record({ kind: fc.constant('reject' as const), uc }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('put' as const), uc, stage: pick }), weight: 2 },
  {
    arbitrary: fc.record({
      kind: fc.constant('create' as const),
      position: fc.option(fc.integer({ min: 1, max: 8 })),
      a: fc.boolean(),
      e: fc.boolean(),
    }),
    weight: 2,
  },
  { arbitrary: fc.record({ kind: fc.constant('delete' as const), stage: pick }), weight: 1 },
  {
    arbitrary: fc.record({
      kind: fc.constant('reorder' as const),
      stage: pick,
      position: fc.integer({ min: 1, max: 8 }),
    }),
    weight: 1,
  },
  {
    arbitrary: fc.record({ kind: fc.constant('flags' as const), stage: pick, a: fc.boolean(), e: fc.boolean() }),
    weight: 1,
  },
)

/** The model of one step: what a stage's steps are and where a use case lands on entering it. */
const stepsOf = (s: Stage) => [
  ...(s.assessment_required ? ['assessment'] : []),
  ...(s.evidence_collection_required ? ['evidence_collection'] : []),
  'clear',
]
const ORDER = ['assessment', 'evidence_collection', 'clear']

describeEachDialect('use-case workflow: random operation sequences', (dialect) => {
  let t: TestApp
  let run = 0
  beforeAll(async () => {
    t = await startTestApp(dialect)
  })
  afterAll(async () => t?.close())

  it('never leave a use case in an invalid stage/step, follow the model, and the audit trail replays to the final state', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 25 }), async (ops) => {
        const tenant = `prop-${dialect}-${run++}`
        const write = t.as(tenant, 'write')
        const stages = async (): Promise<Stage[]> =>
          (await write({ method: 'GET', url: '/workflow_stages?page_limit=100' })).json().items
        const workflow = async (id: string): Promise<Workflow> =>
          (await write({ method: 'GET', url: `/use_cases/${id}/workflow` })).json()
        const ids: string[] = []
        for (let i = 0; i < USE_CASES; i++)
          ids.push((await write({ method: 'POST', url: '/use_cases', payload: { name: `UC ${i}` } })).json().id)

        for (const op of ops) {
          const list = await stages()
          const before = await Promise.all(ids.map(workflow))
          const end = list[list.length - 1]
          let status: number
          let expected: number | { stage: string; step: string }
          if (op.kind === 'advance' || op.kind === 'reject' || op.kind === 'put') {
            const { workflow_stage: stage, workflow_stage_step: step } = before[op.uc] as {
              workflow_stage: Pick<Stage, 'id' | 'type'>
              workflow_stage_step: string
            }
            const id = ids[op.uc]
            if (op.kind === 'put') {
              const target = list[op.stage % list.length]
              expected = { stage: target.id, step: stepsOf(target)[0] }
              status = (
                await write({ method: 'PUT', url: `/use_cases/${id}/workflow`, payload: { stage_id: target.id } })
              ).statusCode
            } else if (op.kind === 'reject') {
              expected =
                step === 'rejected' || (stage.type === 'end' && step === 'clear')
                  ? 409
                  : { stage: stage.id, step: 'rejected' }
              status = (
                await write({ method: 'POST', url: `/use_cases/${id}/workflow/reject`, payload: { reason: 'random' } })
              ).statusCode
            } else {
              const current = list.find((s) => s.id === stage.id)!
              const nextStep = ORDER.slice(ORDER.indexOf(step) + 1).find((s) => stepsOf(current).includes(s))
              const nextStage = list[list.indexOf(current) + 1]
              expected =
                step === 'rejected'
                  ? 409
                  : nextStep
                    ? { stage: stage.id, step: nextStep }
                    : current.type === 'end'
                      ? 409
                      : { stage: nextStage.id, step: stepsOf(nextStage)[0] }
              status = (await write({ method: 'POST', url: `/use_cases/${id}/workflow/advance` })).statusCode
            }
            const after = await workflow(id)
            if (typeof expected === 'number') {
              expect(status).toBe(expected)
              expect(after).toEqual(before[op.uc])
            } else {
              expect(status).toBe(200)
              expect({ stage: after.workflow_stage?.id, step: after.workflow_stage_step }).toEqual(expected)
            }
          } else if (op.kind === 'create') {
            const inRange = op.position === null || op.position <= end.position
            status = (
              await write({
                method: 'POST',
                url: '/workflow_stages',
                payload: {
                  name: `S ${ops.indexOf(op)} ${Math.random()}`,
                  position: op.position,
                  assessment_required: op.a,
                  evidence_collection_required: op.e,
                },
              })
            ).statusCode
            expect(status).toBe(inRange ? 201 : 422)
          } else {
            const stage = list[op.stage % list.length]
            const system = stage.type !== 'intermediate'
            if (op.kind === 'delete') {
              const inUse = before.some((w) => w.workflow_stage?.id === stage.id)
              status = (await write({ method: 'DELETE', url: `/workflow_stages/${stage.id}` })).statusCode
              expect(status).toBe(system || inUse ? 409 : 204)
            } else {
              const payload =
                op.kind === 'reorder'
                  ? { position: op.position }
                  : { assessment_required: op.a, evidence_collection_required: op.e }
              status = (await write({ method: 'PATCH', url: `/workflow_stages/${stage.id}`, payload })).statusCode
              expect(status).toBe(system ? 409 : op.kind === 'reorder' && op.position > end.position ? 422 : 200)
            }
          }

          // Invariants: one start first at 0, one end last, unique increasing positions; every use case in an existing stage at a valid step.
          const now = await stages()
          expect(now[0]).toMatchObject({ type: 'start', position: 0 })
          expect(now[now.length - 1].type).toBe('end')
          expect(now.filter((s) => s.type !== 'intermediate')).toHaveLength(2)
          now.slice(1).forEach((s, i) => {
            expect(s.position).toBeGreaterThan(now[i].position)
          })
          for (const id of ids) {
            const w = await workflow(id)
            expect(now.map((s) => s.id)).toContain(w.workflow_stage?.id)
            expect(['assessment', 'evidence_collection', 'clear', 'rejected']).toContain(w.workflow_stage_step)
            expect(w.rejection_reason !== null).toBe(w.workflow_stage_step === 'rejected')
          }
        }

        // Replaying each use case's audit trail (created + transitions) reproduces its final state, link by link.
        for (const id of ids) {
          const audit = (await write({ method: 'GET', url: `/audit_logs?use_case_id=${id}&page_limit=100` })).json()
            .items as { changes: Record<string, [unknown, unknown]> | null }[]
          const replayed: Record<string, unknown> = { workflow_stage_id: null, workflow_stage_step: null }
          for (const record of audit) {
            for (const field of ['workflow_stage_id', 'workflow_stage_step']) {
              const change = record.changes?.[field]
              if (!change) continue
              expect(change[0]).toBe(replayed[field])
              replayed[field] = change[1]
            }
          }
          const final = await workflow(id)
          expect(replayed).toEqual({
            workflow_stage_id: final.workflow_stage?.id,
            workflow_stage_step: final.workflow_stage_step,
          })
          const row = (await write({ method: 'GET', url: `/use_cases/${id}` })).json()
          expect(replayed).toEqual({
            workflow_stage_id: row.workflow_stage_id,
            workflow_stage_step: row.workflow_stage_step,
          })
        }
      }),
      { numRuns: dialect === 'sqlite' ? 40 : 20 },
    )
  }, 180_000)
})
