import { afterAll, beforeAll, expect, it } from 'vitest'
import { contractTests } from '../../helpers/contract.js'
import { describeEachDialect, startTestApp, type TestApp } from '../../helpers/harness.js'
import { auditActions, publishedControl, publishNextVersion } from '../../helpers/policy.js'

describeEachDialect('policy packs: shared contract', (dialect) => {
  contractTests(dialect, {
    collection: '/policy_packs',
    resourceType: 'policy_pack',
    idPrefix: 'pp',
    validBody: (i) => ({ key: `PACK-${i}`, name: `Pack ${i}`, controls: [{ key: 'C1' }] }),
    updateBody: null,
    deletable: false,
    prepare: async (t, tenant) => {
      await t.apiKey(tenant)
      const exists = await t.as(tenant, 'read')({ method: 'GET', url: '/policy_control_bases?key=C1' })
      if (exists.json().items.length === 0) await publishedControl(t, tenant, 'C1')
    },
  })
})

describeEachDialect('policy packs and their application to use cases', (dialect) => {
  let t: TestApp
  const tenant = 'acme'
  beforeAll(async () => {
    t = await startTestApp(dialect)
    for (const key of ['A', 'B', 'C', 'D']) await publishedControl(t, tenant, key)
    await publishNextVersion(t, tenant, 'A', { name: 'A, second edition' })
    await t.as(
      tenant,
      'write',
    )({ method: 'POST', url: '/policy_control_bases', payload: { key: 'DRAFTY', name: 'Only a draft' } })
    await t.as(tenant, 'write')({ method: 'POST', url: '/policy_control_versions', payload: { key: 'DRAFTY' } })
  })
  afterAll(async () => t?.close())

  const write = () => t.as(tenant, 'write')
  const newUseCase = async (name: string) =>
    (await write()({ method: 'POST', url: '/use_cases', payload: { name } })).json().id as string
  const controlsOf = async (useCaseId: string) =>
    (await t.as(tenant, 'read')({ method: 'GET', url: `/use_cases/${useCaseId}/controls` })).json().items as {
      id: string
      control_key: string
      control_version: number
      policy_pack_key: string
      status: string
    }[]

  it('publishes pack versions by key, resolving controls to their latest published version or the one named', async () => {
    const v1 = await write()({
      method: 'POST',
      url: '/policy_packs',
      payload: { key: 'P', name: 'Pack P', controls: [{ key: 'A', version: 1 }, { key: 'B' }] },
    })
    expect(v1.statusCode, v1.body).toBe(201)
    expect(v1.json()).toMatchObject({
      key: 'P',
      version: 1,
      latest: true,
      controls: [
        { key: 'A', version: 1 },
        { key: 'B', version: 1 },
      ],
    })
    const v2 = await write()({
      method: 'POST',
      url: '/policy_packs',
      payload: { key: 'P', name: 'Pack P', description: 'second', controls: [{ key: 'A' }, { key: 'C' }] },
    })
    expect(v2.json()).toMatchObject({
      version: 2,
      controls: [
        { key: 'A', version: 2, name: 'A, second edition' },
        { key: 'C', version: 1 },
      ],
    })

    const read = t.as(tenant, 'read')
    expect((await read({ method: 'GET', url: '/policy_packs/P' })).json().version).toBe(2)
    const first = (await read({ method: 'GET', url: '/policy_packs/P?version=1' })).json()
    expect(first).toMatchObject({ version: 1, latest: false })
    expect((await read({ method: 'GET', url: `/policy_packs/${first.id}` })).json().version).toBe(1)
    expect((await read({ method: 'GET', url: '/policy_packs/P?version=9' })).statusCode).toBe(404)
    expect((await read({ method: 'GET', url: '/policy_packs/NOPE' })).statusCode).toBe(404)

    const latest = (await read({ method: 'GET', url: '/policy_packs?key=P' })).json().items
    expect(latest.map((p: { version: number }) => p.version)).toEqual([2])
    const all = (await read({ method: 'GET', url: '/policy_packs?key=P&all_versions=true' })).json().items
    expect(all.map((p: { version: number }) => p.version)).toEqual([1, 2])
  })

  it('rejects draft, missing and duplicated controls with 422 naming them', async () => {
    const bad = await write()({
      method: 'POST',
      url: '/policy_packs',
      payload: {
        key: 'BAD',
        name: 'Bad',
        controls: [{ key: 'A' }, { key: 'DRAFTY' }, { key: 'GHOST' }, { key: 'B', version: 7 }, { key: 'A' }],
      },
    })
    expect(bad.statusCode).toBe(422)
    expect(bad.json().errors.map((e: { field: string }) => e.field)).toEqual([
      'controls/1/key',
      'controls/2/key',
      'controls/3/version',
      'controls/4/key',
    ])
    expect(bad.json().detail).toContain('DRAFTY')
    expect(bad.json().detail).toContain('GHOST')
    const draftVersion = await write()({
      method: 'POST',
      url: '/policy_packs',
      payload: { key: 'BAD', name: 'Bad', controls: [{ key: 'DRAFTY', version: 1 }] },
    })
    expect(draftVersion.statusCode).toBe(422)
    expect(draftVersion.json().errors[0]).toMatchObject({ field: 'controls/0/version' })
    expect((await t.as(tenant, 'read')({ method: 'GET', url: '/policy_packs/BAD' })).statusCode).toBe(404)
  })

  it('applies packs: one control per pack control, shared controls once, removal keeps what another pack needs', async () => {
    await write()({
      method: 'POST',
      url: '/policy_packs',
      payload: { key: 'X', name: 'Pack X', controls: [{ key: 'A' }, { key: 'B' }] },
    })
    await write()({
      method: 'POST',
      url: '/policy_packs',
      payload: { key: 'Y', name: 'Pack Y', controls: [{ key: 'B' }, { key: 'D' }] },
    })
    const uc = await newUseCase('Shared controls')

    const applied = await write()({
      method: 'POST',
      url: `/use_cases/${uc}/policy_packs`,
      payload: { key: 'X', due_date: '2027-08-02' },
    })
    expect(applied.statusCode, applied.body).toBe(201)
    expect(applied.headers.location).toBe(`/api/v1/integration/use_cases/${uc}/policy_packs/X`)
    expect(applied.json()).toMatchObject({ key: 'X', version: 1, due_date: '2027-08-02' })
    let controls = await controlsOf(uc)
    expect(controls.map((c) => `${c.control_key}:${c.policy_pack_key}:${c.status}`)).toEqual([
      'A:X:pending',
      'B:X:pending',
    ])
    expect(controls.every((c) => (c as unknown as { due_date: string }).due_date === '2027-08-02')).toBe(true)

    expect(
      (await write()({ method: 'POST', url: `/use_cases/${uc}/policy_packs`, payload: { key: 'Y' } })).statusCode,
    ).toBe(201)
    controls = await controlsOf(uc)
    expect(controls.map((c) => `${c.control_key}:${c.policy_pack_key}`)).toEqual(['A:X', 'B:X', 'D:Y'])

    // Re-applying a key is refused; nothing changes.
    const again = await write()({ method: 'POST', url: `/use_cases/${uc}/policy_packs`, payload: { key: 'X' } })
    expect(again.statusCode).toBe(409)
    expect(await controlsOf(uc)).toHaveLength(3)

    const list = (await t.as(tenant, 'read')({ method: 'GET', url: `/use_cases/${uc}/policy_packs` })).json()
    expect(list.items.map((p: { key: string }) => p.key).sort()).toEqual(['X', 'Y'])
    expect((await t.as(tenant, 'read')({ method: 'GET', url: `/use_cases/${uc}/policy_packs/X` })).json().key).toBe('X')

    // Removing X drops A but keeps B (Y needs it), now credited to Y.
    const b = controls.find((c) => c.control_key === 'B')!
    await write()({ method: 'PATCH', url: `/use_cases/${uc}/controls/${b.id}`, payload: { status: 'in_progress' } })
    expect((await write()({ method: 'DELETE', url: `/use_cases/${uc}/policy_packs/X` })).statusCode).toBe(204)
    controls = await controlsOf(uc)
    expect(controls.map((c) => `${c.control_key}:${c.policy_pack_key}:${c.status}`)).toEqual([
      'B:Y:in_progress',
      'D:Y:pending',
    ])
    expect(controls[0].id).toBe(b.id)
    expect((await write()({ method: 'DELETE', url: `/use_cases/${uc}/policy_packs/X` })).statusCode).toBe(404)
    expect((await write()({ method: 'DELETE', url: `/use_cases/${uc}/policy_packs/Y` })).statusCode).toBe(204)
    expect(await controlsOf(uc)).toEqual([])

    const actions = await auditActions(t, tenant, `use_case_id=${uc}&resource_type=use_case`)
    expect(actions).toEqual([
      'use_case.created',
      'policy_pack.applied',
      'policy_pack.applied',
      'policy_pack.removed',
      'policy_pack.removed',
    ])
    const controlActions = await auditActions(t, tenant, `use_case_id=${uc}&resource_type=use_case_control`)
    expect(controlActions.filter((a) => a === 'use_case_control.created')).toHaveLength(3)
    expect(controlActions.filter((a) => a === 'use_case_control.deleted')).toHaveLength(3)
  })

  it('applies a chosen pack version and rejects unknown packs and versions (422)', async () => {
    const uc = await newUseCase('Versions')
    expect(
      (await write()({ method: 'POST', url: `/use_cases/${uc}/policy_packs`, payload: { key: 'P', version: 1 } }))
        .statusCode,
    ).toBe(201)
    expect((await controlsOf(uc)).map((c) => `${c.control_key}@${c.control_version}`)).toEqual(['A@1', 'B@1'])
    const missing = await write()({ method: 'POST', url: `/use_cases/${uc}/policy_packs`, payload: { key: 'NOPE' } })
    expect(missing.statusCode).toBe(422)
    expect(missing.json().errors).toEqual([{ field: 'key', message: 'no policy pack has key "NOPE"' }])
    const noVersion = await write()({
      method: 'POST',
      url: `/use_cases/${uc}/policy_packs`,
      payload: { key: 'X', version: 5 },
    })
    expect(noVersion.statusCode).toBe(422)
    expect(noVersion.json().errors[0].field).toBe('version')
    expect(
      (
        await write()({
          method: 'POST',
          url: '/use_cases/uc_00000000000000000000000000/policy_packs',
          payload: { key: 'P' },
        })
      ).statusCode,
    ).toBe(404)
  })

  it('updates use-case controls with audited before/after, validates status, and hides them from other tenants', async () => {
    const uc = await newUseCase('Control updates')
    await write()({ method: 'POST', url: `/use_cases/${uc}/policy_packs`, payload: { key: 'X' } })
    const [control] = await controlsOf(uc)
    const res = await write()({
      method: 'PATCH',
      url: `/use_cases/${uc}/controls/${control.id}`,
      payload: { status: 'implemented', notes: 'done', due_date: '2027-01-31' },
    })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json()).toMatchObject({ status: 'implemented', notes: 'done', due_date: '2027-01-31' })
    expect(
      (
        await write()({ method: 'PATCH', url: `/use_cases/${uc}/controls/${control.id}`, payload: { notes: null } })
      ).json().notes,
    ).toBeNull()
    expect(
      (
        await write()({
          method: 'PATCH',
          url: `/use_cases/${uc}/controls/${control.id}`,
          payload: { status: 'finished' },
        })
      ).statusCode,
    ).toBe(422)
    expect(
      (
        await write()({
          method: 'PATCH',
          url: `/use_cases/${uc}/controls/${control.id}`,
          payload: { due_date: 'soon' },
        })
      ).statusCode,
    ).toBe(422)

    const audit = (
      await t.as(
        tenant,
        'read',
      )({ method: 'GET', url: `/audit_logs?resource_id=${control.id}&action=use_case_control.updated` })
    ).json().items
    expect(audit[0].changes).toEqual({
      status: ['pending', 'implemented'],
      notes: [null, 'done'],
      due_date: [null, '2027-01-31'],
    })
    expect(audit[0].use_case_id).toBe(uc)

    const filtered = (
      await t.as(tenant, 'read')({ method: 'GET', url: `/use_cases/${uc}/controls?status=implemented` })
    ).json().items
    expect(filtered.map((c: { id: string }) => c.id)).toEqual([control.id])
    expect(
      (await t.as(tenant, 'read')({ method: 'GET', url: `/use_cases/${uc}/controls/${control.id}` })).statusCode,
    ).toBe(200)

    const other = t.as('globex', 'admin')
    expect((await other({ method: 'GET', url: `/use_cases/${uc}/controls` })).statusCode).toBe(404)
    expect((await other({ method: 'GET', url: `/use_cases/${uc}/controls/${control.id}` })).statusCode).toBe(404)
    expect(
      (await other({ method: 'PATCH', url: `/use_cases/${uc}/controls/${control.id}`, payload: { status: 'pending' } }))
        .statusCode,
    ).toBe(404)
    expect((await other({ method: 'DELETE', url: `/use_cases/${uc}/policy_packs/X` })).statusCode).toBe(404)
    expect(
      (
        await t.as(
          tenant,
          'read',
        )({ method: 'PATCH', url: `/use_cases/${uc}/controls/${control.id}`, payload: { status: 'pending' } })
      ).statusCode,
    ).toBe(403)
  })

  it('deletes a use case that has applied packs and controls', async () => {
    const uc = await newUseCase('To delete')
    await write()({ method: 'POST', url: `/use_cases/${uc}/policy_packs`, payload: { key: 'Y' } })
    expect((await write()({ method: 'DELETE', url: `/use_cases/${uc}` })).statusCode).toBe(204)
    expect((await write()({ method: 'GET', url: `/use_cases/${uc}/controls` })).statusCode).toBe(404)
    const left = await t.deps.database.db
      .selectFrom('use_case_controls')
      .select('id')
      .where('use_case_id', '=', uc)
      .execute()
    expect(left).toEqual([])
  })
})
