import { afterAll, beforeAll, expect, it } from 'vitest'
import { describeEachDialect, startTestApp, type TestApp } from '../../helpers/harness.js'

describeEachDialect('relationships', (dialect) => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp(dialect)
  })
  afterAll(async () => t?.close())

  let seq = 0
  const make = async (tenant: string, collection: string, name = `${collection} ${++seq}`) => {
    const res = await t.as(tenant, 'write')({ method: 'POST', url: `/${collection}`, payload: { name } })
    expect(res.statusCode, res.body).toBe(201)
    return res.json() as { id: string; name: string }
  }
  const ids = async (tenant: string, url: string) => {
    const res = await t.as(tenant, 'read')({ method: 'GET', url: `${url}?page_limit=100` })
    expect(res.statusCode, res.body).toBe(200)
    return res.json().items.map((r: { id: string }) => r.id) as string[]
  }
  const audits = async (tenant: string, query: string) =>
    (await t.as(tenant, 'read')({ method: 'GET', url: `/audit_logs?${query}&page_limit=100` })).json().items as Record<
      string,
      unknown
    >[]

  it('links a model to a use case once: 201 then 200 with the same body, one link, one audit record; both sides list it', async () => {
    const uc = await make('acme', 'use_cases')
    const model = await make('acme', 'models')
    const write = t.as('acme', 'write')
    const first = await write({ method: 'POST', url: `/use_cases/${uc.id}/models`, payload: { id: model.id } })
    expect(first.statusCode, first.body).toBe(201)
    expect(first.json()).toMatchObject({ id: model.id, name: model.name, status: 'none' })
    expect(first.headers.location).toBe(`/api/v1/integration/use_cases/${uc.id}/models/${model.id}`)
    const again = await write({ method: 'POST', url: `/use_cases/${uc.id}/models`, payload: { id: model.id } })
    expect(again.statusCode).toBe(200)
    expect(again.json()).toEqual(first.json())
    expect(await ids('acme', `/use_cases/${uc.id}/models`)).toEqual([model.id])
    const linked = await audits('acme', `action=use_case.model_linked&resource_id=${uc.id}`)
    expect(linked).toHaveLength(1)
    expect(linked[0]).toMatchObject({
      resource_type: 'use_case',
      resource_name: uc.name,
      sub_object_type: 'model',
      sub_object_id: model.id,
      sub_object_name: model.name,
      use_case_id: uc.id,
    })
  })

  it('links vendors to use cases and models, and lists every side', async () => {
    const uc = await make('acme', 'use_cases')
    const model = await make('acme', 'models')
    const vendor = await make('acme', 'vendors')
    const write = t.as('acme', 'write')
    expect(
      (await write({ method: 'POST', url: `/use_cases/${uc.id}/vendors`, payload: { id: vendor.id } })).statusCode,
    ).toBe(201)
    expect(
      (await write({ method: 'POST', url: `/models/${model.id}/vendors`, payload: { id: vendor.id } })).statusCode,
    ).toBe(201)
    expect(
      (await write({ method: 'POST', url: `/models/${model.id}/vendors`, payload: { id: vendor.id } })).statusCode,
    ).toBe(200)
    expect(await ids('acme', `/use_cases/${uc.id}/vendors`)).toEqual([vendor.id])
    expect(await ids('acme', `/models/${model.id}/vendors`)).toEqual([vendor.id])
    expect(await ids('acme', `/vendors/${vendor.id}/use_cases`)).toEqual([uc.id])
    expect(await ids('acme', `/vendors/${vendor.id}/models`)).toEqual([model.id])
    expect(await audits('acme', `action=model.vendor_linked&resource_id=${model.id}`)).toHaveLength(1)
  })

  it('answers 404 for missing or other-tenant ids on either side, and links nothing', async () => {
    const uc = await make('acme', 'use_cases')
    const model = await make('acme', 'models')
    const foreignModel = await make('globex', 'models')
    const foreignUc = await make('globex', 'use_cases')
    const write = t.as('acme', 'write')
    const missing = 'mdl_00000000000000000000000000'
    for (const [url, id] of [
      [`/use_cases/${uc.id}/models`, missing],
      [`/use_cases/${uc.id}/models`, foreignModel.id],
      [`/use_cases/${foreignUc.id}/models`, model.id],
      [`/use_cases/uc_00000000000000000000000000/models`, model.id],
      [`/use_cases/${uc.id}/vendors`, model.id],
      [`/models/${foreignModel.id}/vendors`, 'vnd_00000000000000000000000000'],
    ]) {
      const res = await write({ method: 'POST', url, payload: { id } })
      expect(res.statusCode, `${url} ${id}`).toBe(404)
      expect(res.json().code).toBe('not_found')
    }
    expect(await ids('acme', `/use_cases/${uc.id}/models`)).toEqual([])
    expect(await ids('globex', `/use_cases/${foreignUc.id}/models`)).toEqual([])
    for (const url of [
      `/use_cases/${foreignUc.id}/models`,
      `/vendors/vnd_00000000000000000000000000/use_cases`,
      `/models/${foreignModel.id}/vendors`,
    ]) {
      expect((await t.as('acme', 'read')({ method: 'GET', url })).statusCode, url).toBe(404)
    }
    expect(await audits('acme', `resource_id=${uc.id}&action=use_case.model_linked`)).toHaveLength(0)
  })

  it('validates link bodies (422), refuses read keys (403) and unknown list parameters (400)', async () => {
    const uc = await make('acme', 'use_cases')
    const write = t.as('acme', 'write')
    expect((await write({ method: 'POST', url: `/use_cases/${uc.id}/models`, payload: { id: 12 } })).statusCode).toBe(
      422,
    )
    const extra = await write({ method: 'POST', url: `/use_cases/${uc.id}/models`, payload: { id: 'mdl_x', bogus: 1 } })
    expect(extra.statusCode).toBe(422)
    expect(extra.json().errors).toContainEqual({ field: 'bogus', message: 'unknown field' })
    expect((await write({ method: 'POST', url: `/use_cases/${uc.id}/models`, payload: {} })).statusCode).toBe(422)
    expect(
      (await t.as('acme', 'read')({ method: 'POST', url: `/use_cases/${uc.id}/models`, payload: { id: 'mdl_x' } }))
        .statusCode,
    ).toBe(403)
    expect(
      (await t.as('acme', 'read')({ method: 'GET', url: `/use_cases/${uc.id}/models?sort=name` })).statusCode,
    ).toBe(400)
  })

  it('unlinks with 204 and an audit record; unlinking a link that does not exist is 404', async () => {
    const uc = await make('acme', 'use_cases')
    const model = await make('acme', 'models')
    const other = await make('acme', 'models')
    const write = t.as('acme', 'write')
    await write({ method: 'POST', url: `/use_cases/${uc.id}/models`, payload: { id: model.id } })
    expect((await write({ method: 'DELETE', url: `/use_cases/${uc.id}/models/${model.id}` })).statusCode).toBe(204)
    expect(await ids('acme', `/use_cases/${uc.id}/models`)).toEqual([])
    expect((await write({ method: 'DELETE', url: `/use_cases/${uc.id}/models/${model.id}` })).statusCode).toBe(404)
    expect((await write({ method: 'DELETE', url: `/use_cases/${uc.id}/models/${other.id}` })).statusCode).toBe(404)
    expect(
      (await write({ method: 'DELETE', url: `/use_cases/${uc.id}/models/mdl_00000000000000000000000000` })).statusCode,
    ).toBe(404)
    expect(
      (await t.as('globex', 'write')({ method: 'DELETE', url: `/use_cases/${uc.id}/models/${model.id}` })).statusCode,
    ).toBe(404)
    const unlinked = await audits('acme', `action=use_case.model_unlinked&resource_id=${uc.id}`)
    expect(unlinked).toHaveLength(1)
    expect(unlinked[0]).toMatchObject({ sub_object_id: model.id, metadata: null })
  })

  it('links risk scenarios with likelihood and impact (1-5); relinking updates what it sends', async () => {
    const uc = await make('acme', 'use_cases')
    const rs = await make('acme', 'risk_scenarios')
    const write = t.as('acme', 'write')
    const url = `/use_cases/${uc.id}/risk_scenarios`
    for (const bad of [{ likelihood: 6 }, { likelihood: 0 }, { impact: '3' }, { impact: 2.5 }]) {
      expect(
        (await write({ method: 'POST', url, payload: { risk_scenario_id: rs.id, ...bad } })).statusCode,
        JSON.stringify(bad),
      ).toBe(422)
    }
    const first = await write({ method: 'POST', url, payload: { risk_scenario_id: rs.id, likelihood: 3 } })
    expect(first.statusCode, first.body).toBe(201)
    expect(first.json()).toMatchObject({ id: rs.id, name: rs.name, risk_type_ids: [], likelihood: 3, impact: null })
    const same = await write({ method: 'POST', url, payload: { risk_scenario_id: rs.id } })
    expect(same.statusCode).toBe(200)
    expect(same.json()).toEqual(first.json())
    const updated = await write({
      method: 'POST',
      url,
      payload: { risk_scenario_id: rs.id, impact: 5, likelihood: null },
    })
    expect(updated.statusCode).toBe(200)
    expect(updated.json()).toMatchObject({ likelihood: null, impact: 5 })
    const list = (await t.as('acme', 'read')({ method: 'GET', url })).json()
    expect(list.items).toHaveLength(1)
    expect(list.items[0]).toMatchObject({ id: rs.id, likelihood: null, impact: 5 })
    const trail = await audits('acme', `resource_id=${uc.id}&resource_type=use_case`)
    const actions = trail.map((a) => a.action)
    expect(actions.filter((a) => a === 'use_case.risk_scenario_linked')).toHaveLength(1)
    const change = trail.find((a) => a.action === 'use_case.risk_scenario_link_updated')
    expect(change?.changes).toEqual({ likelihood: [3, null], impact: [null, 5] })
    expect(
      (await write({ method: 'POST', url, payload: { risk_scenario_id: 'rs_00000000000000000000000000' } })).statusCode,
    ).toBe(404)
    expect((await write({ method: 'DELETE', url: `${url}/${rs.id}` })).statusCode).toBe(204)
    expect((await t.as('acme', 'read')({ method: 'GET', url })).json().items).toEqual([])
  })

  it('pages through linked records by id without skipping or repeating', async () => {
    const vendor = await make('pager', 'vendors')
    const models: string[] = []
    for (let i = 0; i < 5; i++) {
      const m = await make('pager', 'models')
      models.push(m.id)
      await t.as('pager', 'write')({ method: 'POST', url: `/models/${m.id}/vendors`, payload: { id: vendor.id } })
    }
    const seen: string[] = []
    let cursor: string | null = null
    do {
      const url: string = `/vendors/${vendor.id}/models?page_limit=2${cursor ? `&page_after=${cursor}` : ''}`
      const page = (await t.as('pager', 'read')({ method: 'GET', url })).json()
      expect(page.items.length).toBeLessThanOrEqual(2)
      seen.push(...page.items.map((m: { id: string }) => m.id))
      cursor = page.pagination.next_cursor
    } while (cursor)
    expect(seen).toEqual(models)
  })

  it('deleting a model, vendor, risk scenario or use case removes its links and audits each removal in the same write', async () => {
    const write = t.as('deletes', 'write')
    const uc = await make('deletes', 'use_cases')
    const uc2 = await make('deletes', 'use_cases')
    const model = await make('deletes', 'models')
    const vendor = await make('deletes', 'vendors')
    const rs = await make('deletes', 'risk_scenarios')
    await write({ method: 'POST', url: `/use_cases/${uc.id}/models`, payload: { id: model.id } })
    await write({ method: 'POST', url: `/use_cases/${uc2.id}/models`, payload: { id: model.id } })
    await write({ method: 'POST', url: `/models/${model.id}/vendors`, payload: { id: vendor.id } })
    await write({ method: 'POST', url: `/use_cases/${uc.id}/vendors`, payload: { id: vendor.id } })
    await write({
      method: 'POST',
      url: `/use_cases/${uc.id}/risk_scenarios`,
      payload: { risk_scenario_id: rs.id, impact: 2 },
    })

    expect((await write({ method: 'DELETE', url: `/models/${model.id}` })).statusCode).toBe(204)
    expect(await ids('deletes', `/use_cases/${uc.id}/models`)).toEqual([])
    expect(await ids('deletes', `/vendors/${vendor.id}/models`)).toEqual([])
    const modelGone = await audits('deletes', 'action=use_case.model_unlinked&action=model.vendor_unlinked')
    expect(modelGone.map((a) => [a.action, a.resource_id, a.sub_object_id]).sort()).toEqual(
      [
        ['use_case.model_unlinked', uc.id, model.id],
        ['use_case.model_unlinked', uc2.id, model.id],
        ['model.vendor_unlinked', model.id, vendor.id],
      ].sort(),
    )
    for (const a of modelGone) expect(a.metadata).toEqual({ reason: 'model.deleted' })
    const deleted = (await audits('deletes', `action=model.deleted&resource_id=${model.id}`))[0]
    expect(modelGone.every((a) => a.request_id === deleted.request_id)).toBe(true)

    expect((await write({ method: 'DELETE', url: `/risk_scenarios/${rs.id}` })).statusCode).toBe(204)
    expect(await ids('deletes', `/use_cases/${uc.id}/risk_scenarios`)).toEqual([])
    expect(await audits('deletes', `action=use_case.risk_scenario_unlinked&use_case_id=${uc.id}`)).toHaveLength(1)

    expect((await write({ method: 'DELETE', url: `/use_cases/${uc.id}` })).statusCode).toBe(204)
    expect(await ids('deletes', `/vendors/${vendor.id}/use_cases`)).toEqual([])
    const ucGone = await audits('deletes', `action=use_case.vendor_unlinked&resource_id=${uc.id}`)
    expect(ucGone).toHaveLength(1)
    expect(ucGone[0]).toMatchObject({
      sub_object_id: vendor.id,
      sub_object_name: vendor.name,
      metadata: { reason: 'use_case.deleted' },
    })

    await write({ method: 'POST', url: `/use_cases/${uc2.id}/vendors`, payload: { id: vendor.id } })
    expect((await write({ method: 'DELETE', url: `/vendors/${vendor.id}` })).statusCode).toBe(204)
    expect(await ids('deletes', `/use_cases/${uc2.id}/vendors`)).toEqual([])
    expect(await audits('deletes', `action=use_case.vendor_unlinked&resource_id=${uc2.id}`)).toHaveLength(1)
  })
})
