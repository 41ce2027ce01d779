import { afterAll, beforeAll, expect, it } from 'vitest'
import { createTenantsService } from '../../../src/modules/tenants/tenants.service.js'
import { ensureSystemStages } from '../../../src/modules/workflow-stages/workflow-stages.service.js'
import { createDeps, createLogger } from '../../../src/main.js'
import { describeEachDialect, startTestApp, type TestApp } from '../../helpers/harness.js'

interface Stage {
  id: string
  name: string
  type: string
  position: number
  assessment_required: boolean
  evidence_collection_required: boolean
}

describeEachDialect('workflow stages', (dialect) => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp(dialect)
  })
  afterAll(async () => t?.close())

  const stagesOf = async (tenant: string, query = ''): Promise<Stage[]> => {
    const res = await t.as(tenant, 'read')({ method: 'GET', url: `/workflow_stages?page_limit=100${query}` })
    expect(res.statusCode, res.body).toBe(200)
    return res.json().items
  }
  const createStage = async (tenant: string, body: Record<string, unknown>): Promise<Stage> => {
    const res = await t.as(tenant, 'write')({ method: 'POST', url: '/workflow_stages', payload: body })
    expect(res.statusCode, res.body).toBe(201)
    return res.json()
  }

  it('gives every new tenant exactly one start and one end stage, audited in the tenant-creating transaction', async () => {
    const stages = await stagesOf('fresh')
    expect(stages.map((s) => [s.type, s.position])).toEqual([
      ['start', 0],
      ['end', 1],
    ])
    expect(stages[0]).toMatchObject({ name: 'Start', assessment_required: true, evidence_collection_required: true })
    expect(stages[1]).toMatchObject({ name: 'End', assessment_required: false, evidence_collection_required: false })
    const audit = (
      await t.as(
        'fresh',
        'read',
      )({ method: 'GET', url: '/audit_logs?resource_type=workflow_stage&resource_type=tenant' })
    ).json().items
    expect(audit.map((a: { action: string }) => a.action)).toEqual([
      'tenant.created',
      'workflow_stage.created',
      'workflow_stage.created',
    ])
    expect(audit[1].changes.type).toEqual([null, 'start'])
    expect(audit[1].actor.type).toBe('system')
  })

  it('provisions the stages of tenants created before this change, once (ensure at start)', async () => {
    // An older tenant: its row exists, its stages do not, and it has a use case outside any stage.
    const db = t.deps.database.db
    await createTenantsService(t.deps.database).ensure('legacy')
    const legacyUseCase = await t.as(
      'legacy',
      'write',
    )({ method: 'POST', url: '/use_cases', payload: { name: 'Old one' } })
    await db
      .updateTable('use_cases')
      .set({ workflow_stage_id: null, workflow_stage_step: null })
      .where('tenant_id', '=', 'legacy')
      .execute()
    await db.deleteFrom('workflow_stages').where('tenant_id', '=', 'legacy').execute()
    const ucId = legacyUseCase.json().id
    const unplaced = (await t.as('legacy', 'read')({ method: 'GET', url: `/use_cases/${ucId}/workflow` })).json()
    expect(unplaced).toEqual({ workflow_stage: null, workflow_stage_step: null, rejection_reason: null })
    expect(
      (await t.as('legacy', 'write')({ method: 'POST', url: `/use_cases/${ucId}/workflow/advance` })).statusCode,
    ).toBe(409)

    // createDeps runs the ensure at every start (bootstrap, CLI, workers, tests).
    await createDeps(t.config, createLogger(t.config), t.deps.database)
    const stages = await stagesOf('legacy')
    expect(stages.map((s) => s.type)).toEqual(['start', 'end'])
    const placed = (await t.as('legacy', 'read')({ method: 'GET', url: `/use_cases/${ucId}/workflow` })).json()
    expect(placed).toMatchObject({ workflow_stage: { id: stages[0].id }, workflow_stage_step: 'assessment' })
    const moved = (
      await t.as(
        'legacy',
        'read',
      )({ method: 'GET', url: `/audit_logs?use_case_id=${ucId}&action=use_case.workflow_moved` })
    ).json().items
    expect(moved).toHaveLength(1)
    expect(moved[0].changes).toEqual({
      workflow_stage_id: [null, stages[0].id],
      workflow_stage_step: [null, 'assessment'],
    })

    expect(await ensureSystemStages(t.deps.database)).toEqual([])
    expect((await stagesOf('legacy')).map((s) => s.id)).toEqual(stages.map((s) => s.id))
  })

  it('refuses a second start or end stage at the database level', async () => {
    await stagesOf('dupes')
    const db = t.deps.database.db
    const row = {
      id: 'ws_00000000000000000000000000',
      tenant_id: 'dupes',
      name: 'Other start',
      name_key: 'other start',
      description: null,
      type: 'start',
      position: 0,
      assessment_required: 1,
      evidence_collection_required: 1,
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-01T00:00:00.000Z',
    }
    await expect(db.insertInto('workflow_stages').values(row).execute()).rejects.toThrow()
  })

  it('creates intermediate stages before the end stage by default, and lists by position', async () => {
    const a = await createStage('order', { name: 'Triage' })
    const b = await createStage('order', { name: 'Legal review', evidence_collection_required: false })
    expect(a).toMatchObject({
      type: 'intermediate',
      position: 1,
      assessment_required: true,
      evidence_collection_required: true,
    })
    expect(b).toMatchObject({ position: 2, evidence_collection_required: false })
    const c = await createStage('order', { name: 'Security', position: 1, type: 'intermediate' })
    expect(c.position).toBe(1)
    const stages = await stagesOf('order')
    expect(stages.map((s) => s.name)).toEqual(['Start', 'Security', 'Triage', 'Legal review', 'End'])
    expect(stages.map((s) => s.position)).toEqual([0, 1, 2, 3, 4])
    expect((await stagesOf('order', '&sort=-position')).map((s) => s.name)).toEqual([
      'End',
      'Legal review',
      'Triage',
      'Security',
      'Start',
    ])
    expect((await stagesOf('order', '&sort=name')).map((s) => s.name)).toEqual([
      'End',
      'Legal review',
      'Security',
      'Start',
      'Triage',
    ])
    expect((await stagesOf('order', '&q=REVIEW')).map((s) => s.name)).toEqual(['Legal review'])
    expect((await stagesOf('order', '&type=intermediate')).map((s) => s.name)).toEqual([
      'Security',
      'Triage',
      'Legal review',
    ])
  })

  it('walks pages in position order with a position keyset', async () => {
    for (const name of ['P1', 'P2', 'P3', 'P4']) await createStage('pages', { name })
    await createStage('pages', { name: 'P0', position: 1 })
    const seen: string[] = []
    let cursor: string | null = null
    do {
      const page: { items: Stage[]; pagination: { next_cursor: string | null } } = (
        await t.as(
          'pages',
          'read',
        )({ method: 'GET', url: `/workflow_stages?page_limit=2${cursor ? `&page_after=${cursor}` : ''}` })
      ).json()
      seen.push(...page.items.map((s) => s.name))
      cursor = page.pagination.next_cursor
    } while (cursor)
    expect(seen).toEqual(['Start', 'P0', 'P1', 'P2', 'P3', 'P4', 'End'])
  })

  it('reorders with position, moving the stages at or after it down, and keeps them between start and end', async () => {
    const [x, y, z] = [
      await createStage('reorder', { name: 'X' }),
      await createStage('reorder', { name: 'Y' }),
      await createStage('reorder', { name: 'Z' }),
    ]
    const write = t.as('reorder', 'write')
    const moved = await write({ method: 'PATCH', url: `/workflow_stages/${z.id}`, payload: { position: 1 } })
    expect(moved.statusCode, moved.body).toBe(200)
    expect((await stagesOf('reorder')).map((s) => s.name)).toEqual(['Start', 'Z', 'X', 'Y', 'End'])
    const end = (await stagesOf('reorder', '&type=end'))[0]
    expect(
      (await write({ method: 'PATCH', url: `/workflow_stages/${x.id}`, payload: { position: end.position } }))
        .statusCode,
    ).toBe(200)
    expect((await stagesOf('reorder')).map((s) => s.name)).toEqual(['Start', 'Z', 'Y', 'X', 'End'])

    const tooFar = await write({
      method: 'PATCH',
      url: `/workflow_stages/${y.id}`,
      payload: { position: end.position + 5 },
    })
    expect(tooFar.statusCode).toBe(422)
    expect(tooFar.json().errors[0].field).toBe('position')
    expect(
      (await write({ method: 'PATCH', url: `/workflow_stages/${y.id}`, payload: { position: 0 } })).statusCode,
    ).toBe(422)
    expect(
      (await write({ method: 'POST', url: '/workflow_stages', payload: { name: 'W', position: 999 } })).statusCode,
    ).toBe(422)
    expect(
      (await write({ method: 'POST', url: '/workflow_stages', payload: { name: 'W', position: 0 } })).statusCode,
    ).toBe(422)
    const positions = (await stagesOf('reorder')).map((s) => s.position)
    expect(positions[0]).toBe(0)
    expect([...positions].sort((a, b) => a - b)).toEqual(positions)
    expect(new Set(positions).size).toBe(positions.length)

    const audit = (
      await t.as(
        'reorder',
        'read',
      )({ method: 'GET', url: `/audit_logs?resource_id=${z.id}&action=workflow_stage.updated` })
    ).json().items
    expect(audit[0].changes.position).toEqual([3, 1])
  })

  it('only creates intermediate stages (422 for another type)', async () => {
    for (const type of ['start', 'end', 'other']) {
      const res = await t.as(
        'types',
        'write',
      )({ method: 'POST', url: '/workflow_stages', payload: { name: `Typed ${type}`, type } })
      expect(res.statusCode).toBe(422)
      expect(res.json().errors[0].field).toBe('type')
    }
    const res = await t.as(
      'types',
      'write',
    )({ method: 'PATCH', url: '/workflow_stages/ws_00000000000000000000000000', payload: { type: 'end' } })
    expect(res.statusCode).toBe(422)
  })

  it('protects the start and end stages: 409 on update and delete, nothing changes', async () => {
    const [start, end] = await stagesOf('guarded')
    const write = t.as('guarded', 'admin')
    for (const stage of [start, end]) {
      for (const payload of [{ name: 'Renamed' }, { position: 3 }, { assessment_required: false }, {}]) {
        const res = await write({ method: 'PATCH', url: `/workflow_stages/${stage.id}`, payload })
        expect(res.statusCode).toBe(409)
        expect(res.json().detail).toContain('system-managed')
      }
      const del = await write({ method: 'DELETE', url: `/workflow_stages/${stage.id}` })
      expect(del.statusCode).toBe(409)
      expect(del.json().detail).toContain(`${stage.type} stage`)
    }
    expect(await stagesOf('guarded')).toEqual([start, end])
    const audit = (
      await t.as(
        'guarded',
        'read',
      )({ method: 'GET', url: '/audit_logs?action=workflow_stage.updated&action=workflow_stage.deleted' })
    ).json().items
    expect(audit).toEqual([])
  })

  it('refuses to delete a stage while a use case is in it (409), and deletes it once empty', async () => {
    const stage = await createStage('busy', { name: 'Busy' })
    const write = t.as('busy', 'write')
    const uc = (await write({ method: 'POST', url: '/use_cases', payload: { name: 'Sits there' } })).json()
    expect(
      (await write({ method: 'PUT', url: `/use_cases/${uc.id}/workflow`, payload: { stage_id: stage.id } })).statusCode,
    ).toBe(200)
    const res = await write({ method: 'DELETE', url: `/workflow_stages/${stage.id}` })
    expect(res.statusCode).toBe(409)
    expect(res.json().detail).toContain('holds 1 use case')
    expect((await write({ method: 'POST', url: `/use_cases/${uc.id}/workflow/advance` })).statusCode).toBe(200)
    expect(
      (
        await write({
          method: 'PUT',
          url: `/use_cases/${uc.id}/workflow`,
          payload: { stage_id: (await stagesOf('busy'))[0].id },
        })
      ).statusCode,
    ).toBe(200)
    expect((await write({ method: 'DELETE', url: `/workflow_stages/${stage.id}` })).statusCode).toBe(204)
  })

  it('keeps names unique per tenant, case-insensitively (422 already_exists), also against the system stages', async () => {
    const review = await createStage('names', { name: 'Review' })
    const write = t.as('names', 'write')
    for (const name of [' review ', 'REVIEW', 'start', 'End']) {
      const res = await write({ method: 'POST', url: '/workflow_stages', payload: { name } })
      expect(res.statusCode).toBe(422)
      expect(res.json()).toMatchObject({
        code: 'already_exists',
        existing_id: expect.stringMatching(/^ws_/),
        errors: [{ field: 'name' }],
      })
    }
    const other = await createStage('names', { name: 'Other' })
    const rename = await write({ method: 'PATCH', url: `/workflow_stages/${other.id}`, payload: { name: 'reVIEW' } })
    expect(rename.statusCode).toBe(422)
    expect(rename.json().existing_id).toBe(review.id)
    await createStage('names-elsewhere', { name: 'Review' })
  })

  it('updates the required steps and description, null clearing it', async () => {
    const stage = await createStage('flags', { name: 'Flags', description: 'something' })
    const res = await t.as(
      'flags',
      'write',
    )({
      method: 'PATCH',
      url: `/workflow_stages/${stage.id}`,
      payload: { assessment_required: false, description: null },
    })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({
      assessment_required: false,
      evidence_collection_required: true,
      description: null,
    })
    const audit = (
      await t.as(
        'flags',
        'read',
      )({ method: 'GET', url: `/audit_logs?resource_id=${stage.id}&action=workflow_stage.updated` })
    ).json().items
    expect(audit[0].changes).toEqual({ assessment_required: [true, false], description: ['something', null] })
  })
})
