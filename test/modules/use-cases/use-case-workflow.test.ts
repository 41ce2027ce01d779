import { afterAll, beforeAll, expect, it } from 'vitest'
import { describeEachDialect, startTestApp, type TestApp } from '../../helpers/harness.js'

interface Stage {
  id: string
  name: string
  type: string
  position: number
}
interface Workflow {
  workflow_stage: Stage | null
  workflow_stage_step: string | null
  rejection_reason: string | null
}

describeEachDialect('use-case workflow', (dialect) => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp(dialect)
  })
  afterAll(async () => t?.close())

  const stages = async (tenant: string): Promise<Stage[]> =>
    (await t.as(tenant, 'read')({ method: 'GET', url: '/workflow_stages?page_limit=100' })).json().items
  const stage = async (tenant: string, body: Record<string, unknown>): Promise<Stage> => {
    const res = await t.as(tenant, 'write')({ method: 'POST', url: '/workflow_stages', payload: body })
    expect(res.statusCode, res.body).toBe(201)
    return res.json()
  }
  const useCase = async (tenant: string, name: string): Promise<string> => {
    const res = await t.as(tenant, 'write')({ method: 'POST', url: '/use_cases', payload: { name } })
    expect(res.statusCode, res.body).toBe(201)
    return res.json().id
  }
  const advance = (tenant: string, id: string) =>
    t.as(tenant, 'write')({ method: 'POST', url: `/use_cases/${id}/workflow/advance` })
  const reject = (tenant: string, id: string, reason: string) =>
    t.as(tenant, 'write')({ method: 'POST', url: `/use_cases/${id}/workflow/reject`, payload: { reason } })
  const put = (tenant: string, id: string, stageId: string) =>
    t.as(tenant, 'write')({ method: 'PUT', url: `/use_cases/${id}/workflow`, payload: { stage_id: stageId } })
  const state = async (tenant: string, id: string): Promise<Workflow> =>
    (await t.as(tenant, 'read')({ method: 'GET', url: `/use_cases/${id}/workflow` })).json()
  const brief = (w: Workflow) => [w.workflow_stage?.name ?? null, w.workflow_stage_step]
  const workflowAudit = async (tenant: string, id: string) =>
    (
      await t.as(
        tenant,
        'read',
      )({ method: 'GET', url: `/audit_logs?use_case_id=${id}&resource_type=use_case&page_limit=100` })
    )
      .json()
      .items.filter((a: { action: string }) => a.action.startsWith('use_case.workflow_'))

  it('starts a new use case in the start stage at assessment', async () => {
    const [start] = await stages('acme')
    const id = await useCase('acme', 'New one')
    const uc = (await t.as('acme', 'read')({ method: 'GET', url: `/use_cases/${id}` })).json()
    expect(uc).toMatchObject({ workflow_stage_id: start.id, workflow_stage_step: 'assessment' })
    // Exactly the shape the original SDK reads: the stage as {id, name, type, position}.
    expect(await state('acme', id)).toEqual({
      workflow_stage: { id: start.id, name: start.name, type: 'start', position: 0 },
      workflow_stage_step: 'assessment',
      rejection_reason: null,
    })
    const created = (
      await t.as('acme', 'read')({ method: 'GET', url: `/audit_logs?resource_id=${id}&action=use_case.created` })
    ).json().items[0]
    expect(created.changes.workflow_stage_id).toEqual([null, start.id])
    expect(created.changes.workflow_stage_step).toEqual([null, 'assessment'])
  })

  it('advances through the steps, skipping those a stage does not require, stage by stage to a final end', async () => {
    await stage('walk', { name: 'Evidence only', assessment_required: false })
    await stage('walk', { name: 'Nothing required', assessment_required: false, evidence_collection_required: false })
    await stage('walk', { name: 'Assessment only', evidence_collection_required: false })
    const id = await useCase('walk', 'Walker')
    const seen = [brief(await state('walk', id))]
    for (;;) {
      const res = await advance('walk', id)
      if (res.statusCode !== 200) {
        expect(res.statusCode).toBe(409)
        expect(res.json().detail).toContain('complete')
        break
      }
      seen.push(brief(res.json()))
    }
    expect(seen).toEqual([
      ['Start', 'assessment'],
      ['Start', 'evidence_collection'],
      ['Start', 'clear'],
      ['Evidence only', 'evidence_collection'],
      ['Evidence only', 'clear'],
      ['Nothing required', 'clear'],
      ['Assessment only', 'assessment'],
      ['Assessment only', 'clear'],
      ['End', 'clear'],
    ])
    expect(brief(await state('walk', id))).toEqual(['End', 'clear'])
    // One audit record per transition, each with before and after.
    const audit = await workflowAudit('walk', id)
    expect(audit).toHaveLength(seen.length - 1)
    const all = await stages('walk')
    const byId = new Map(all.map((s) => [s.id, s.name]))
    audit.forEach((a: { action: string; changes: Record<string, [string, string]> }, i: number) => {
      expect(a.action).toBe('use_case.workflow_advanced')
      expect([byId.get(a.changes.workflow_stage_id[0]), a.changes.workflow_stage_step[0]]).toEqual(seen[i])
      expect([byId.get(a.changes.workflow_stage_id[1]), a.changes.workflow_stage_step[1]]).toEqual(seen[i + 1])
    })
    // The end stage is final for reject too; a PUT reopens it.
    expect((await reject('walk', id, 'too late')).statusCode).toBe(409)
    expect((await put('walk', id, all[1].id)).statusCode).toBe(200)
    expect(brief(await state('walk', id))).toEqual(['Evidence only', 'evidence_collection'])
  })

  it('rejects with a reason: advancing answers 409 with it, a PUT moves it out', async () => {
    const review = await stage('rej', { name: 'Review' })
    const id = await useCase('rej', 'To reject')
    const before = await state('rej', id)
    const res = await reject('rej', id, 'No legal basis for biometric data.')
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json()).toMatchObject({
      workflow_stage: { id: before.workflow_stage!.id },
      workflow_stage_step: 'rejected',
      rejection_reason: 'No legal basis for biometric data.',
    })
    expect(await state('rej', id)).toEqual(res.json())
    const blocked = await advance('rej', id)
    expect(blocked.statusCode).toBe(409)
    expect(blocked.json().detail).toContain('No legal basis for biometric data.')
    expect((await reject('rej', id, 'again')).statusCode).toBe(409)

    const moved = await put('rej', id, review.id)
    expect(moved.statusCode).toBe(200)
    expect(moved.json()).toMatchObject({
      workflow_stage: { id: review.id },
      workflow_stage_step: 'assessment',
      rejection_reason: null,
    })

    const audit = await workflowAudit('rej', id)
    expect(audit.map((a: { action: string }) => a.action)).toEqual([
      'use_case.workflow_rejected',
      'use_case.workflow_moved',
    ])
    expect(audit[0].changes).toEqual({
      workflow_stage_id: [before.workflow_stage!.id, before.workflow_stage!.id],
      workflow_stage_step: ['assessment', 'rejected'],
    })
    expect(audit[0].metadata).toEqual({ reason: 'No legal basis for biometric data.' })
    expect(audit[0].sub_object_id).toBe(before.workflow_stage!.id)
    expect(audit[1].changes).toEqual({
      workflow_stage_id: [before.workflow_stage!.id, review.id],
      workflow_stage_step: ['rejected', 'assessment'],
    })
  })

  it('moves with PUT to the first step the stage requires; 422 for an unknown or other-tenant stage', async () => {
    const evidence = await stage('put', { name: 'Evidence', assessment_required: false })
    const none = await stage('put', { name: 'None', assessment_required: false, evidence_collection_required: false })
    const elsewhere = await stage('put-other', { name: 'Elsewhere' })
    const id = await useCase('put', 'Mover')
    expect((await put('put', id, evidence.id)).json().workflow_stage_step).toBe('evidence_collection')
    expect((await put('put', id, none.id)).json().workflow_stage_step).toBe('clear')
    const end = (await stages('put')).at(-1)!
    expect((await put('put', id, end.id)).json()).toMatchObject({
      workflow_stage: { type: 'end' },
      workflow_stage_step: 'clear',
    })
    for (const stageId of [elsewhere.id, 'ws_00000000000000000000000000', 'nonsense']) {
      const res = await put('put', id, stageId)
      expect(res.statusCode).toBe(422)
      expect(res.json().errors).toEqual([{ field: 'stage_id', message: `workflow stage ${stageId} was not found` }])
    }
    // Moving to where it already is, at the step it would get, changes nothing and audits nothing.
    const auditBefore = (await workflowAudit('put', id)).length
    expect((await put('put', id, end.id)).statusCode).toBe(200)
    expect(await workflowAudit('put', id)).toHaveLength(auditBefore)
  })

  it('keeps workflow fields read-only on PATCH /use_cases (422) and validates bodies', async () => {
    const id = await useCase('ro', 'Read only')
    const [, end] = await stages('ro')
    for (const payload of [{ workflow_stage_id: end.id }, { workflow_stage_step: 'clear' }]) {
      const res = await t.as('ro', 'write')({ method: 'PATCH', url: `/use_cases/${id}`, payload })
      expect(res.statusCode).toBe(422)
      expect(res.json().errors).toEqual([{ field: Object.keys(payload)[0], message: 'unknown field' }])
    }
    expect(
      (
        await t.as(
          'ro',
          'write',
        )({ method: 'POST', url: '/use_cases', payload: { name: 'Sneaky', workflow_stage_step: 'clear' } })
      ).statusCode,
    ).toBe(422)
    expect(brief(await state('ro', id))).toEqual(['Start', 'assessment'])
    const write = t.as('ro', 'write')
    expect((await write({ method: 'POST', url: `/use_cases/${id}/workflow/reject`, payload: {} })).statusCode).toBe(422)
    expect(
      (await write({ method: 'POST', url: `/use_cases/${id}/workflow/reject`, payload: { reason: '   ' } })).statusCode,
    ).toBe(422)
    expect(
      (await write({ method: 'PUT', url: `/use_cases/${id}/workflow`, payload: { stage_id: end.id, step: 'clear' } }))
        .statusCode,
    ).toBe(422)
  })

  it("hides other tenants' use cases (404) and needs write for transitions (403)", async () => {
    const id = await useCase('iso-a', 'Private')
    const [start] = await stages('iso-b')
    const other = t.as('iso-b', 'admin')
    expect((await other({ method: 'GET', url: `/use_cases/${id}/workflow` })).statusCode).toBe(404)
    expect((await other({ method: 'POST', url: `/use_cases/${id}/workflow/advance` })).statusCode).toBe(404)
    expect(
      (await other({ method: 'POST', url: `/use_cases/${id}/workflow/reject`, payload: { reason: 'x' } })).statusCode,
    ).toBe(404)
    expect(
      (await other({ method: 'PUT', url: `/use_cases/${id}/workflow`, payload: { stage_id: start.id } })).statusCode,
    ).toBe(404)
    expect((await t.as('iso-a', 'read')({ method: 'POST', url: `/use_cases/${id}/workflow/advance` })).statusCode).toBe(
      403,
    )
    expect(
      (await t.app.inject({ method: 'GET', url: `/api/v1/integration/use_cases/${id}/workflow` })).statusCode,
    ).toBe(401)
    expect(brief(await state('iso-a', id))).toEqual(['Start', 'assessment'])
    expect(await workflowAudit('iso-a', id)).toEqual([])
  })

  it('serialises concurrent advances: each one moves exactly one step', async () => {
    await stage('race', { name: 'Middle' })
    const id = await useCase('race', 'Racer')
    await t.token('race', 'write')
    const results = await Promise.all(Array.from({ length: 8 }, () => advance('race', id)))
    // Start: 2 steps and out; Middle: 2 steps and out; End: clear on arrival. Six moves, then final.
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 200, 200, 200, 200, 200, 409, 409])
    expect(brief(await state('race', id))).toEqual(['End', 'clear'])
    expect(await workflowAudit('race', id)).toHaveLength(6)
  })
})
