import { afterAll, beforeAll, expect, it } from 'vitest'
import { contractTests } from '../../helpers/contract.js'
import { describeEachDialect, startTestApp, type TestApp } from '../../helpers/harness.js'
import { namedRecordTests } from '../../helpers/named-records.js'

describeEachDialect('risk scenarios: shared contract', (dialect) => {
  contractTests(dialect, {
    collection: '/risk_scenarios',
    resourceType: 'risk_scenario',
    idPrefix: 'rs',
    validBody: (i) => ({ name: `Scenario ${i}`, domains: ['lending'] }),
    updateBody: { archived: true },
    deletable: true,
  })
})

describeEachDialect('risk scenarios: names', (dialect) => namedRecordTests(dialect, { collection: '/risk_scenarios' }))

describeEachDialect('risk scenarios: risk types and filters', (dialect) => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp(dialect)
  })
  afterAll(async () => t?.close())

  const riskType = async (tenant: string, name: string) =>
    (await t.as(tenant, 'write')({ method: 'POST', url: '/risk_types', payload: { name } })).json().id as string

  it('keeps risk_type_ids (deduplicated, in id order) and answers 422 naming missing or other-tenant ids', async () => {
    const write = t.as('acme', 'write')
    const bias = await riskType('acme', 'Bias')
    const privacy = await riskType('acme', 'Privacy')
    const foreign = await riskType('globex', 'Foreign')
    const created = await write({
      method: 'POST',
      url: '/risk_scenarios',
      payload: { name: 'Unfair denial', risk_type_ids: [privacy, bias, privacy], regions: ['EU'] },
    })
    expect(created.statusCode, created.body).toBe(201)
    expect(created.json()).toMatchObject({
      risk_type_ids: [bias, privacy],
      regions: ['EU'],
      domains: [],
      industries: [],
      archived: false,
      description: null,
    })

    const missing = 'rt_00000000000000000000000000'
    const bad = await write({
      method: 'POST',
      url: '/risk_scenarios',
      payload: { name: 'Bad refs', risk_type_ids: [bias, missing, foreign] },
    })
    expect(bad.statusCode).toBe(422)
    const errors = bad.json().errors as { field: string; message: string }[]
    expect(errors).toHaveLength(1)
    expect(errors[0].field).toBe('risk_type_ids')
    expect(errors[0].message).toContain(missing)
    expect(errors[0].message).toContain(foreign)
    expect(errors[0].message).not.toContain(bias)
    const list = (await t.as('acme', 'read')({ method: 'GET', url: '/risk_scenarios?q=bad' })).json()
    expect(list.items).toHaveLength(0)

    const id = created.json().id
    const badPatch = await write({
      method: 'PATCH',
      url: `/risk_scenarios/${id}`,
      payload: { risk_type_ids: [foreign] },
    })
    expect(badPatch.statusCode).toBe(422)
    expect(badPatch.json().errors[0]).toMatchObject({ field: 'risk_type_ids' })
    expect((await t.as('acme', 'read')({ method: 'GET', url: `/risk_scenarios/${id}` })).json().risk_type_ids).toEqual([
      bias,
      privacy,
    ])

    const patched = await write({
      method: 'PATCH',
      url: `/risk_scenarios/${id}`,
      payload: { risk_type_ids: [bias], regions: null },
    })
    expect(patched.json()).toMatchObject({ risk_type_ids: [bias], regions: [] })
    const audit = (
      await t.as('acme', 'read')({ method: 'GET', url: `/audit_logs?resource_id=${id}&action=risk_scenario.updated` })
    ).json().items
    expect(audit[0].changes).toEqual({ risk_type_ids: [[bias, privacy], [bias]], regions: [['EU'], []] })
    const cleared = await write({ method: 'PATCH', url: `/risk_scenarios/${id}`, payload: { risk_type_ids: null } })
    expect(cleared.json().risk_type_ids).toEqual([])
  })

  it('filters by risk_type_id and archived', async () => {
    const write = t.as('filters', 'write')
    const a = await riskType('filters', 'A')
    const b = await riskType('filters', 'B')
    await write({ method: 'POST', url: '/risk_scenarios', payload: { name: 'S1', risk_type_ids: [a] } })
    await write({
      method: 'POST',
      url: '/risk_scenarios',
      payload: { name: 'S2', risk_type_ids: [a, b], archived: true },
    })
    await write({ method: 'POST', url: '/risk_scenarios', payload: { name: 'S3' } })
    const read = t.as('filters', 'read')
    const names = async (q: string) =>
      (await read({ method: 'GET', url: `/risk_scenarios?${q}` })).json().items.map((s: { name: string }) => s.name)
    expect(await names(`risk_type_id=${a}`)).toEqual(['S1', 'S2'])
    expect(await names(`risk_type_id=${b}`)).toEqual(['S2'])
    expect(await names('archived=true')).toEqual(['S2'])
    expect(await names('archived=false')).toEqual(['S1', 'S3'])
    expect(await names(`archived=false&risk_type_id=${a}`)).toEqual(['S1'])
    expect((await read({ method: 'GET', url: '/risk_scenarios?archived=maybe' })).statusCode).toBe(400)
  })

  it('deleting a risk type removes it from its scenarios and audits each removal', async () => {
    const write = t.as('cascade', 'write')
    const doomed = await riskType('cascade', 'Doomed')
    const kept = await riskType('cascade', 'Kept')
    const s1 = (
      await write({ method: 'POST', url: '/risk_scenarios', payload: { name: 'One', risk_type_ids: [doomed, kept] } })
    ).json()
    const s2 = (
      await write({ method: 'POST', url: '/risk_scenarios', payload: { name: 'Two', risk_type_ids: [doomed] } })
    ).json()
    expect((await write({ method: 'DELETE', url: `/risk_types/${doomed}` })).statusCode).toBe(204)
    const read = t.as('cascade', 'read')
    expect((await read({ method: 'GET', url: `/risk_scenarios/${s1.id}` })).json().risk_type_ids).toEqual([kept])
    expect((await read({ method: 'GET', url: `/risk_scenarios/${s2.id}` })).json().risk_type_ids).toEqual([])
    const audit = (await read({ method: 'GET', url: '/audit_logs?action=risk_scenario.risk_type_unlinked' })).json()
      .items
    expect(audit.map((a: { resource_id: string }) => a.resource_id).sort()).toEqual([s1.id, s2.id].sort())
    expect(audit[0]).toMatchObject({
      resource_type: 'risk_scenario',
      sub_object_type: 'risk_type',
      sub_object_id: doomed,
      sub_object_name: 'Doomed',
      metadata: { reason: 'risk_type.deleted' },
    })
  })
})
